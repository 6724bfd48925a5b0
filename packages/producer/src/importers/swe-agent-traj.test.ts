import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { formatProblem } from '../validation/problem.js';
import { importSweAgentTrajectory } from './swe-agent-traj.js';
import type { ImportOptions, InputFile } from './types.js';
import { fileURLToPath } from 'node:url';

const DATA = fileURLToPath(new URL('../../../../test/fixtures/swe-agent', import.meta.url));
const real = (name: string): InputFile => ({ path: name, text: readFileSync(`${DATA}/${name}`, 'utf8') });
const options: ImportOptions = { runId: 'run-1', image: 'img:latest' };

/** A legacy 0.x file as described in trajectories-and-grading.md §1.4 (state as a JSON string, text actions). */
const legacyTraj = {
  environment: 'swe_main',
  trajectory: [
    {
      action: 'find_file "dataset.py"',
      observation: 'Found 1 matches for "dataset.py" in /pydicom__pydicom:\n/pydicom__pydicom/pydicom/dataset.py',
      response: 'DISCUSSION\nLet us find the file.\n```\nfind_file "dataset.py"\n```',
      thought: 'DISCUSSION\nLet us find the file.',
      state: '{"open_file": "n/a", "working_dir": "/pydicom__pydicom"}\n',
    },
    {
      action: 'open pydicom/dataset.py 100',
      observation: '[File: /pydicom__pydicom/pydicom/dataset.py (2000 lines total)]',
      response: '', thought: '',
      state: '{"open_file": "/pydicom__pydicom/pydicom/dataset.py", "working_dir": "/pydicom__pydicom"}\n',
    },
    { action: '', observation: 'Your output was not formatted correctly.', response: 'oops', thought: '', state: '{}' },
    {
      action: 'edit 101:101\n        return self._x\nend_of_edit',
      observation: 'File updated.',
      response: '', thought: '',
      state: '{"open_file": "/pydicom__pydicom/pydicom/dataset.py", "working_dir": "/pydicom__pydicom"}\n',
    },
    { action: 'submit', observation: '', response: '', thought: '', state: '{"open_file": "n/a", "working_dir": "/pydicom__pydicom"}\n' },
  ],
  history: [
    { role: 'system', content: 'SETTING: ...', agent: 'primary' },
    { role: 'user', content: 'demonstration', agent: 'primary', is_demo: true },
    { role: 'assistant', content: 'DISCUSSION\n```\nls\n```', agent: 'primary', is_demo: true },
    { role: 'user', content: 'We are solving...', agent: 'primary' },
    { role: 'assistant', content: 'DISCUSSION\n```\nfind_file "dataset.py"\n```', agent: 'primary' },
  ],
  info: {
    exit_status: 'submitted',
    submission: 'diff --git a/pydicom/dataset.py b/pydicom/dataset.py\n',
    model_stats: { total_cost: 1.5, instance_cost: 0.2, tokens_sent: 100, tokens_received: 10, api_calls: 5 },
  },
};

describe('importSweAgentTrajectory', () => {
  it('reads a v1 .traj: history tool_calls with their tool-message observations, submission as model_patch', () => {
    const { episodes, problems } = importSweAgentTrajectory(real('6e44b9__sweagenttestrepo-1c2844.traj'), options);
    expect(problems).toEqual([]);
    expect(episodes).toHaveLength(1);
    const episode = episodes[0]!;
    expect(episode.instance_id).toBe('6e44b9__sweagenttestrepo-1c2844');
    expect(episode.episode_id).toBe('6e44b9__sweagenttestrepo-1c2844');
    expect(episode.run_id).toBe('run-1');
    expect(episode.sample_index).toBe(0);
    expect(episode.sandbox.image).toBe('img:latest');
    expect(episode.trajectory!.map((c) => c.name)).toEqual(['find_file', 'open', 'edit', 'bash']);
    expect(episode.trajectory![0]).toMatchObject({ arguments: { file_name: 'missing_colon.py' }, id: 'call_fJuazlMUN5fQDQ73G6XSpYpx' });
    expect(episode.trajectory![2]!.arguments).toEqual({
      search: 'def division(a: float, b: float) -> float',
      replace: 'def division(a: float, b: float) -> float:',
      'replace-all': false,
    });
    expect(episode.trajectory![3]!.arguments).toEqual({ command: 'python3 /SWE-agent__test-repo/tests/missing_colon.py' });
    expect(episode.trajectory![3]!.observation).toMatch(/^8\.2\n\(Open file: /);
    expect(episode.trajectory![0]!.observation).toMatch(/^Found 1 matches for "missing_colon.py"/);
    expect(episode.model_patch).toMatch(/^\r\ndiff --git a\/tests\/missing_colon.py b\/tests\/missing_colon.py/);
    expect(episode.model_patch).toContain('+def division(a: float, b: float) -> float:');
    expect(episode.metadata).toMatchObject({
      source_format: 'swe-agent-traj', actions_from: 'history.tool_calls', exit_status: 'submitted',
      working_dir: '/SWE-agent__test-repo', swe_agent_image: 'tiny', environment: 'main',
    });
    // The run's `submit` is only in trajectory[], not in history: nothing skipped here.
    expect(episode.metadata!['skipped_actions']).toBeUndefined();
  });

  it('reads a demonstration .traj (history only) and skips the submit control action', () => {
    const { episodes, problems } = importSweAgentTrajectory(real('function_calling_simple.traj'), options);
    expect(problems).toEqual([]);
    const episode = episodes[0]!;
    expect(episode.instance_id).toBe('function_calling_simple');
    expect(episode.trajectory!.map((c) => c.name)).toEqual(['find_file', 'open', 'edit', 'bash']);
    expect(episode.trajectory![1]!.arguments).toEqual({ path: 'tests/missing_colon.py' });
    expect(episode.trajectory![2]!.observation).toMatch(/^Text replaced\./);
    expect(episode.metadata).toMatchObject({ skipped_actions: 'submit' });
    expect(episode.model_patch).toBeUndefined();
  });

  it('reads the YAML demonstration with str_replace_editor calls', () => {
    const { episodes, problems } = importSweAgentTrajectory(real('str_replace_anthropic_demo.yaml'), { ...options, instanceId: 'demo-1' });
    expect(problems).toEqual([]);
    const calls = episodes[0]!.trajectory!;
    expect(episodes[0]!.instance_id).toBe('demo-1');
    expect(calls.map((c) => c.arguments['command'])).toEqual(['view', 'view', 'str_replace']);
    expect(calls.every((c) => c.name === 'str_replace_editor')).toBe(true);
    expect(calls[2]!.arguments).toEqual({
      command: 'str_replace',
      path: '/swe-agent-test-repo/src/testpkg/missing_colon.py',
      old_str: 'def division(a: float, b: float) -> float',
      new_str: 'def division(a: float, b: float) -> float:',
    });
    expect(calls[0]!.observation).toContain("Here's the files and directories up to 2 levels deep in /swe-agent-test-repo");
    expect(episodes[0]!.metadata).toMatchObject({ skipped_actions: 'submit', swe_agent_image: 'tiny' });
  });

  it('falls back to trajectory[].action text for legacy 0.x files, parsing state strings', () => {
    const file = { path: 'out/pydicom__pydicom-1694.traj', text: JSON.stringify(legacyTraj, null, 2) };
    const { episodes, problems } = importSweAgentTrajectory(file, options);
    expect(problems).toEqual([]);
    const episode = episodes[0]!;
    expect(episode.instance_id).toBe('pydicom__pydicom-1694');
    expect(episode.trajectory).toEqual([
      { name: 'execute_bash', arguments: { command: 'find_file "dataset.py"' }, observation: legacyTraj.trajectory[0]!.observation },
      { name: 'execute_bash', arguments: { command: 'open pydicom/dataset.py 100' }, observation: legacyTraj.trajectory[1]!.observation },
      { name: 'execute_bash', arguments: { command: 'edit 101:101\n        return self._x\nend_of_edit' }, observation: 'File updated.' },
    ]);
    expect(episode.metadata).toMatchObject({
      actions_from: 'trajectory.action', working_dir: '/pydicom__pydicom', skipped_actions: 'submit', environment: 'swe_main',
    });
    expect(episode.model_patch).toBe('diff --git a/pydicom/dataset.py b/pydicom/dataset.py\n');
  });

  it('expands samples under one episode id', () => {
    const { episodes } = importSweAgentTrajectory(real('function_calling_simple.traj'), { ...options, samples: 3 });
    expect(episodes.map((e) => [e.episode_id, e.sample_index])).toEqual([
      ['function_calling_simple', 0], ['function_calling_simple', 1], ['function_calling_simple', 2],
    ]);
  });

  it('reports broken files with file, line and hint instead of throwing', () => {
    const badJson = importSweAgentTrajectory({ path: 'x.traj', text: '{\n  "history": [\n}' }, options);
    expect(badJson.episodes).toEqual([]);
    expect(formatProblem(badJson.problems[0]!)).toMatch(/^x\.traj:3: not valid JSON .* — fix the JSON syntax/);

    const badYaml = importSweAgentTrajectory({ path: 'd.yaml', text: 'history:\n  - role: user\n   content: [' }, options);
    expect(badYaml.problems[0]).toMatchObject({ file: 'd.yaml', code: 'INPUT_INVALID' });
    expect(badYaml.problems[0]!.line).toBeGreaterThan(0);

    const notTraj = importSweAgentTrajectory({ path: 'y.traj', text: '{"foo": 1}' }, options);
    expect(formatProblem(notTraj.problems[0]!)).toBe(
      'y.traj: expected a SWE-agent trajectory object with a "history" or "trajectory" array, got an object with keys foo — pass a .traj file written by SWE-agent, or a demonstration with a "history" list',
    );

    const empty = importSweAgentTrajectory({ path: 'z.traj', text: '{"history": [{"role": "system", "content": "hi"}]}' }, options);
    expect(empty.problems[0]).toMatchObject({ field: 'history', message: 'no actions to replay and no submission to grade' });
  });

  it('reports a missing image with the option hint', () => {
    const { episodes, problems } = importSweAgentTrajectory(real('function_calling_simple.traj'), { runId: 'run-1' });
    expect(episodes).toEqual([]);
    expect(formatProblem(problems[0]!)).toBe(
      'function_calling_simple.traj: sandbox.image: missing (expected string) — set sandbox.image in the record, or pass a default image (--image) or an image template (--image-template)',
    );
  });
});
