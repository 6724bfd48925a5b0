// How a SWE-agent trajectory's tool bundle, release line, repository and pty are inferred (windowed-tools.md §1–§3).
import { describe, expect, it } from 'vitest';
import { describeSweAgentRecording, windowedActions } from './swe-agent-recording.js';

const step = (action: string, observation: string, extra: Record<string, unknown> = {}) => ({
  action,
  observation,
  response: '',
  thought: '',
  state: '{"open_file": "n/a", "working_dir": "/o__r"}',
  ...extra,
});

describe('describeSweAgentRecording', () => {
  it('takes the release line from info.swe_agent_version and the pty from info.swe_rex_version', () => {
    const doc = {
      trajectory: [{ action: 'open "a.py"', observation: 'x', state: { working_dir: '/testbed' } }],
      history: [],
      info: { swe_agent_version: '1.1.0', swe_rex_version: '1.4.0' },
      replay_config: JSON.stringify({
        env: { repo: { type: 'preexisting', repo_name: 'testbed' } },
        agent: {
          tools: {
            bundles: [{ path: 'tools/registry' }, { path: 'tools/windowed' }, { path: 'tools/windowed_edit_linting' }],
          },
        },
      }),
    };
    const recording = describeSweAgentRecording(doc);
    expect(recording).toMatchObject({
      windowed: true,
      repoDir: '/testbed',
      toolBundle: { name: 'swe-agent', version: '1.1', bundles: ['windowed', 'edit_linting'], pty_observations: false },
      evidence: {
        swe_agent_version_from: 'info.swe_agent_version',
        repo_dir_from: 'replay_config.env.repo',
        pty_observations_from: 'info.swe_rex_version',
      },
    });
    expect(
      describeSweAgentRecording({ ...doc, info: { swe_agent_version: '1.0.1', swe_rex_version: '1.2.0' } }).toolBundle,
    ).toMatchObject({ version: '1.0', pty_observations: true });
    expect(describeSweAgentRecording({ ...doc, info: { swe_agent_version: '1.3.0' } }).toolBundle.version).toBe('main');
    expect(describeSweAgentRecording({ ...doc, info: { swe_agent_version: '0.6.1' } }).toolBundle.version).toBe(
      '0.6.1',
    );
  });

  it('tells 0.x lines apart by their wording and fields', () => {
    const v0 = (steps: unknown[]) =>
      describeSweAgentRecording({ environment: 'swe_main', trajectory: steps, history: [], info: {} }).toolBundle
        .version;
    expect(v0([step('scroll_down', 'x', { execution_time: 0.2 })])).toBe('0.7');
    expect(v0([step('open', 'Usage: open "<file>"')])).toBe('0.7');
    expect(
      v0([
        step(
          'edit 1:1\nx\nend_of_edit',
          'Your proposed edit has introduced new syntax error(s). Please understand the fixes and retry your edit commmand.\n',
        ),
      ]),
    ).toBe('0.1');
    expect(v0([step('ls', 'a\n'), step('open a', '[File: /o__r/a (1 lines total)]\n1:x\n')])).toBe('0.3');
    expect(v0([step('ls', 'a'), step('goto 3', 'x')])).toBe('0.6.1');
    // 0.x: the line-range edit, never edit_replace.
    expect(
      describeSweAgentRecording({ trajectory: [step('find_file a', 'x')], history: [], info: {} }).toolBundle.bundles,
    ).toEqual(['windowed', 'search', 'edit_linting', 'submit']);
  });

  it('finds the repository: GitHub URL, local path, working_dir, footer, paths in actions', () => {
    const repo = (repoConfig: unknown) =>
      describeSweAgentRecording({
        history: [],
        trajectory: [],
        replay_config: { env: { repo: repoConfig }, agent: {} },
      }).repoDir;
    expect(repo({ github_url: 'https://github.com/SWE-agent/test-repo.git' })).toBe('/SWE-agent__test-repo');
    expect(repo({ github_url: 'https://github.com/owner/name/?tab=readme' })).toBe('/owner__name');
    expect(repo({ type: 'local', path: '/Users/x/work/my-repo/' })).toBe('/my-repo');
    expect(describeSweAgentRecording({ trajectory: [step('ls', 'x')], history: [] }).repoDir).toBe('/o__r');
    const footer = {
      history: [{ role: 'tool', content: 'x\n(Open file: n/a)\n(Current directory: /astropy__astropy)\nbash-$' }],
    };
    expect(describeSweAgentRecording(footer)).toMatchObject({
      repoDir: '/astropy__astropy',
      evidence: { repo_dir_from: 'history footer' },
    });
    const paths = {
      history: [
        { role: 'assistant', action: 'open /django__django/a.py' },
        { role: 'assistant', action: 'python /tmp/x.py /django__django/b.py' },
      ],
    };
    expect(describeSweAgentRecording(paths)).toMatchObject({
      repoDir: '/django__django',
      evidence: { repo_dir_from: 'paths in actions' },
    });
    expect(describeSweAgentRecording({ history: [{ role: 'assistant', action: 'ls' }] }).repoDir).toBeUndefined();
  });
});

describe('windowedActions', () => {
  it('leaves out requery turns (not the next action in history) and keeps the final submit', () => {
    const doc = {
      trajectory: [
        { action: 'find_file a.py', observation: 'Found 1 matches' },
        { action: 'vim a.py', observation: '' },
        { action: 'open a.py', observation: '[File: a.py (1 lines total)]' },
        { action: 'submit', observation: '\ndiff' },
      ],
      history: [
        { role: 'assistant', action: 'find_file a.py', content: '' },
        { role: 'tool', content: 'Found 1 matches' },
        { role: 'assistant', action: 'open a.py', content: '' },
        { role: 'tool', content: '[File: a.py (1 lines total)]' },
      ],
    };
    const skipped: string[] = [];
    const { calls, from } = windowedActions(doc, ['windowed', 'search', 'submit'], skipped);
    expect(from).toBe('trajectory.action');
    expect(calls.map((c) => c.action)).toEqual(['find_file a.py', 'open a.py', 'submit']);
    expect(calls.map((c) => c.name)).toEqual(['find_file', 'open', 'submit']);
  });

  it('skips the agent control actions and a submit the bundles do not have', () => {
    const doc = {
      trajectory: [
        { action: 'ls', observation: 'a' },
        { action: 'exit_cost', observation: '' },
        { action: 'submit', observation: '' },
      ],
    };
    const skipped: string[] = [];
    const { calls } = windowedActions(doc, ['windowed'], skipped);
    expect(calls).toEqual([{ name: 'bash', arguments: { command: 'ls' }, action: 'ls', observation: 'a' }]);
    expect(skipped).toEqual(['exit_cost', 'submit']);
  });

  it('builds the action of a tool call that has no action text, as SWE-agent quoted it', () => {
    const doc = {
      history: [
        {
          role: 'assistant',
          content: '',
          tool_calls: [{ id: 'c1', function: { name: 'open', arguments: '{"path": "my file.py", "line_number": 3}' } }],
        },
        { role: 'tool', content: "Error: File 'my file.py' not found", tool_call_ids: ['c1'] },
      ],
    };
    const { calls } = windowedActions(doc, ['windowed'], []);
    // open "<path>" around a quoted path: literal quotes that make the path wrong, as recorded runs show.
    expect(calls[0]).toMatchObject({
      name: 'open',
      action: `open "'my file.py'" 3`,
      id: 'c1',
      arguments: { path: 'my file.py', line_number: 3 },
    });
  });
});
