// mini-swe-agent trajectories in both forms (policy-loop.md §4), from fixtures written from the format description,
// plus malformed files with located errors.
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { formatProblem } from '../validation/problem.js';
import { validateInputs } from '../validation/validate-inputs.js';
import { detectFormat } from './detect-format.js';
import { importMiniSweAgent } from './mini-swe-agent.js';
import type { ImportOptions, InputFile } from './types.js';

const DATA = fileURLToPath(new URL('../../../../test/fixtures/mini-swe-agent', import.meta.url));
const fixture = (name: string): InputFile => ({ path: name, text: readFileSync(`${DATA}/${name}`, 'utf8') });
const options: ImportOptions = { runId: 'run-1', image: 'pyutils' };
const obs = (rc: number, out: string): string => `<returncode>${rc}</returncode>\n<output>\n${out}</output>`;

describe('mini-swe-agent importer', () => {
  it('detects the object form, the bare list and the tool-calling form as mini-swe-agent', () => {
    for (const name of ['text-mode.traj.json', 'bare-list.traj.json', 'tool-calls.traj.json']) {
      expect(detectFormat(fixture(name))).toEqual({ ok: true, format: 'mini-swe-agent' });
    }
    // A generic transcript with tool calls stays an OpenAI-messages file.
    const generic = {
      path: 'chat.json',
      text: JSON.stringify([
        {
          role: 'assistant',
          content: null,
          tool_calls: [{ id: 'a', type: 'function', function: { name: 'execute_bash', arguments: '{}' } }],
        },
      ]),
    };
    expect(detectFormat(generic)).toEqual({ ok: true, format: 'openai-messages' });
  });

  it('text mode: one action per fenced block, the next message as observation, format errors skipped, sentinel last', () => {
    const { episodes, problems } = importMiniSweAgent(fixture('text-mode.traj.json'), options);
    expect(problems).toEqual([]);
    const episode = episodes[0]!;
    expect(episode.instance_id).toBe('text-mode');
    expect(episode.repo_dir).toBe('/testbed');
    expect(episode.tool_bundle).toEqual({ name: 'mini-swe-agent', version: '1.17.5' });
    expect(episode.trajectory).toEqual([
      { name: 'execute_bash', arguments: { command: 'echo hello' }, observation: obs(0, 'hello\n') },
      { name: 'execute_bash', arguments: { command: 'cd /tmp && pwd' }, observation: obs(0, '/tmp\n') },
      { name: 'execute_bash', arguments: { command: 'pwd' }, observation: obs(0, '/testbed\n') },
      {
        name: 'execute_bash',
        arguments: { command: 'ls no-such-file' },
        observation: obs(2, "ls: cannot access 'no-such-file': No such file or directory\n"),
      },
      // The submission: replayed, but its output was the submission, not an observation.
      {
        name: 'execute_bash',
        arguments: { command: 'echo COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT && git add -A && git diff --cached' },
      },
    ]);
    // Replayed: the replayed repository's diff is graded, not info.submission.
    expect(episode.model_patch).toBeUndefined();
    expect(episode.metadata).toMatchObject({
      source_format: 'mini-swe-agent',
      actions_from: 'text',
      mini_version: '1.17.5',
      exit_status: 'Submitted',
      trajectory_format: 'mini-swe-agent-1.1',
      skipped_format_errors: '1',
    });
  });

  it('the bare list of messages (older files), with the old sentinel', () => {
    const { episodes, problems } = importMiniSweAgent(fixture('bare-list.traj.json'), {
      ...options,
      instanceId: 'pyutils__text-reverse',
    });
    expect(problems).toEqual([]);
    expect(episodes[0]!.instance_id).toBe('pyutils__text-reverse');
    expect(episodes[0]!.tool_bundle).toEqual({ name: 'mini-swe-agent' });
    expect(episodes[0]!.trajectory).toEqual([
      { name: 'execute_bash', arguments: { command: 'echo one' }, observation: obs(0, 'one\n') },
      { name: 'execute_bash', arguments: { command: 'echo MINI_SWE_AGENT_FINAL_OUTPUT' } },
    ]);
  });

  it('tool calling: every bash call in order with the tool reply of its id; a call without command is skipped', () => {
    const { episodes, problems } = importMiniSweAgent(fixture('tool-calls.traj.json'), options);
    expect(problems).toEqual([]);
    expect(episodes[0]!.trajectory).toEqual([
      { name: 'execute_bash', arguments: { command: 'echo first' }, id: 'call_1', observation: obs(0, 'first\n') },
      {
        name: 'execute_bash',
        arguments: { command: "printf 'no newline'" },
        id: 'call_2',
        observation: obs(0, 'no newline'),
      },
      { name: 'execute_bash', arguments: { command: 'false' }, id: 'call_4', observation: obs(1, '') },
      {
        name: 'execute_bash',
        arguments: { command: 'echo COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT && git diff' },
        id: 'call_5',
      },
    ]);
    expect(episodes[0]!.metadata).toMatchObject({
      actions_from: 'tool_calls',
      mini_version: '2.4.6',
      skipped_format_errors: '1',
    });
  });

  it('--no-replay grades info.submission and replays nothing', () => {
    const { episodes, problems } = importMiniSweAgent(fixture('text-mode.traj.json'), { ...options, replay: false });
    expect(problems).toEqual([]);
    expect(episodes[0]!.trajectory).toEqual([]);
    expect(episodes[0]!.model_patch).toBe('diff --git a/pyutils/text.py b/pyutils/text.py\n');
    // An empty submission is an empty prediction.
    const empty = importMiniSweAgent(fixture('tool-calls.traj.json'), { ...options, replay: false });
    expect(empty.episodes[0]!.model_patch).toBeNull();
  });

  it('takes the repository from info.config.environment.cwd', () => {
    const doc = JSON.parse(fixture('text-mode.traj.json').text) as {
      info: { config: { environment: { cwd: string } } };
    };
    doc.info.config.environment.cwd = '/repo';
    const { episodes } = importMiniSweAgent({ path: 'x.traj.json', text: JSON.stringify(doc) }, options);
    expect(episodes[0]!.repo_dir).toBe('/repo');
  });

  it('reports malformed files with file, field and what to do', () => {
    const broken = importMiniSweAgent({ path: 'a.traj.json', text: '{"messages": [\n' }, options);
    expect(formatProblem(broken.problems[0]!)).toMatch(/^a\.traj\.json:2: not valid JSON/);

    const notList = importMiniSweAgent(
      { path: 'b.traj.json', text: '{"info": {}, "messages": {"role": "user"}}' },
      options,
    );
    expect(formatProblem(notList.problems[0]!)).toBe(
      'b.traj.json: messages: expected a list of messages, got object — give a mini-swe-agent .traj.json ({"info", "messages", "trajectory_format"}) or a bare list of {role, content} messages',
    );

    const noRole = importMiniSweAgent(
      {
        path: 'c.traj.json',
        text: JSON.stringify({ messages: [{ role: 'user', content: 'x' }, { content: '```bash\nls\n```' }] }),
      },
      options,
    );
    expect(noRole.problems).toHaveLength(1);
    expect(noRole.problems[0]).toMatchObject({
      file: 'c.traj.json',
      field: 'messages[1].role',
      message: 'missing role (got undefined)',
    });

    const noName = importMiniSweAgent(
      {
        path: 'd.traj.json',
        text: JSON.stringify({
          trajectory_format: 'mini-swe-agent-1.1',
          messages: [{ role: 'assistant', content: '', tool_calls: [{ id: 'x', function: { arguments: '{}' } }] }],
        }),
      },
      options,
    );
    expect(noName.problems[0]).toMatchObject({ field: 'messages[0].tool_calls[0].function.name' });

    const nothing = importMiniSweAgent(
      { path: 'e.traj.json', text: JSON.stringify([{ role: 'assistant', content: 'no action here' }]) },
      options,
    );
    expect(formatProblem(nothing.problems[0]!)).toMatch(/^e\.traj\.json: messages: no bash actions to replay — /);

    const noSubmission = importMiniSweAgent(fixture('bare-list.traj.json'), { ...options, replay: false });
    expect(noSubmission.problems[0]).toMatchObject({
      field: 'info.submission',
      message: 'no info.submission to grade',
    });
  });

  it('goes through validateInputs like every format: nothing valid is returned with a problem', () => {
    const mixed = validateInputs(
      [
        fixture('text-mode.traj.json'),
        { path: 'bad.traj.json', text: '{"trajectory_format": "mini-swe-agent-1.1", "messages": 3}' },
      ],
      options,
    );
    expect(mixed.problems).toHaveLength(1);
    expect(mixed.problems[0]).toMatchObject({ file: 'bad.traj.json', field: 'messages' });
    const ok = validateInputs([fixture('text-mode.traj.json')], options);
    expect(ok.problems).toEqual([]);
    expect(ok.episodes[0]).toMatchObject({
      repo_dir: '/testbed',
      tool_bundle: { name: 'mini-swe-agent' },
      sandbox: { image: 'pyutils' },
    });
  });
});
