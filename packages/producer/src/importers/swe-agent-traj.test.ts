import { describe, expect, it } from 'vitest';
import { itWith } from '@rollout-fleet/test-kit/needs';
import { readSharedData, sharedDataNeed } from '@rollout-fleet/test-kit/shared-data';
import { formatProblem } from '../validation/problem.js';
import { importSweAgentTrajectory } from './swe-agent-traj.js';
import type { ImportOptions, InputFile } from './types.js';

const SWE_AGENT = sharedDataNeed('swe-agent');
const real = (name: string): InputFile => ({ path: name, text: readSharedData(`swe-agent/${name}`) });
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
      response: '',
      thought: '',
      state: '{"open_file": "/pydicom__pydicom/pydicom/dataset.py", "working_dir": "/pydicom__pydicom"}\n',
    },
    { action: '', observation: 'Your output was not formatted correctly.', response: 'oops', thought: '', state: '{}' },
    {
      action: 'edit 101:101\n        return self._x\nend_of_edit',
      observation: 'File updated.',
      response: '',
      thought: '',
      state: '{"open_file": "/pydicom__pydicom/pydicom/dataset.py", "working_dir": "/pydicom__pydicom"}\n',
    },
    {
      action: 'submit',
      observation: '',
      response: '',
      thought: '',
      state: '{"open_file": "n/a", "working_dir": "/pydicom__pydicom"}\n',
    },
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
  itWith(
    [SWE_AGENT],
    'reads a v1 .traj with the windowed tools: recorded actions and observations, bundle, repo dir, pty',
    () => {
      const { episodes, problems } = importSweAgentTrajectory(real('6e44b9__sweagenttestrepo-1c2844.traj'), options);
      expect(problems).toEqual([]);
      expect(episodes).toHaveLength(1);
      const episode = episodes[0]!;
      expect(episode.instance_id).toBe('6e44b9__sweagenttestrepo-1c2844');
      expect(episode.episode_id).toBe('6e44b9__sweagenttestrepo-1c2844');
      expect(episode.run_id).toBe('run-1');
      expect(episode.sample_index).toBe(0);
      expect(episode.sandbox.image).toBe('img:latest');
      // replay_config.env.repo.github_url → where SWE-agent cloned it.
      expect(episode.repo_dir).toBe('/SWE-agent__test-repo');
      // replay_config bundles (registry is built in), WINDOW/OVERLAP from env_variables, CRLF observations = pty.
      expect(episode.tool_bundle).toEqual({
        name: 'swe-agent',
        version: '1.0-dev',
        bundles: ['windowed', 'search', 'edit_replace', 'submit'],
        window: 100,
        overlap: 2,
        pty_observations: true,
      });
      const calls = episode.trajectory!;
      expect(calls.map((c) => c.name)).toEqual(['find_file', 'open', 'edit', 'bash', 'submit']);
      expect(calls.map((c) => c.action)).toEqual([
        'find_file missing_colon.py',
        'open "/SWE-agent__test-repo/tests/missing_colon.py"',
        "edit 'def division(a: float, b: float) -> float' 'def division(a: float, b: float) -> float:' False",
        'python3 /SWE-agent__test-repo/tests/missing_colon.py',
        'submit',
      ]);
      expect(calls[0]).toMatchObject({
        arguments: { file_name: 'missing_colon.py' },
        id: 'call_fJuazlMUN5fQDQ73G6XSpYpx',
      });
      expect(calls[2]!.arguments).toEqual({
        search: 'def division(a: float, b: float) -> float',
        replace: 'def division(a: float, b: float) -> float:',
        'replace-all': false,
      });
      // trajectory[].observation: no template footer.
      expect(calls[3]!.observation).toBe('8.2');
      expect(calls[0]!.observation).toMatch(/^Found 1 matches for "missing_colon.py"/);
      // The pty's CRLF and the leading newline between the markers are undone: the patch applies again.
      expect(episode.model_patch).toMatch(
        /^diff --git a\/tests\/missing_colon.py b\/tests\/missing_colon.py\nindex 20edef5\.\.5857437 100755\n/,
      );
      expect(episode.model_patch).not.toContain('\r');
      expect(episode.metadata).toMatchObject({
        source_format: 'swe-agent-traj',
        actions_from: 'trajectory.action',
        exit_status: 'submitted',
        working_dir: '/SWE-agent__test-repo',
        swe_agent_image: 'tiny',
        environment: 'main',
        repo_dir_from: 'replay_config.env.repo',
        tool_bundles_from: 'replay_config',
        pty_observations_from: 'CRLF in observations',
        swe_agent_version_from: '1.x layout without a version stamp',
      });
      expect(episode.metadata!['skipped_actions']).toBeUndefined();
    },
  );

  itWith(
    [SWE_AGENT],
    'reads a demonstration .traj (history only): actions with the next message as observation, bundles from the tool names',
    () => {
      const { episodes, problems } = importSweAgentTrajectory(real('function_calling_simple.traj'), options);
      expect(problems).toEqual([]);
      const episode = episodes[0]!;
      expect(episode.instance_id).toBe('function_calling_simple');
      expect(episode.repo_dir).toBe('/SWE-agent__test-repo');
      expect(episode.tool_bundle).toMatchObject({
        name: 'swe-agent',
        version: '1.0-dev',
        bundles: ['windowed', 'search', 'edit_replace', 'submit'],
        pty_observations: true,
      });
      expect(episode.trajectory!.map((c) => c.name)).toEqual(['find_file', 'open', 'edit', 'bash', 'submit']);
      expect(episode.trajectory![1]).toMatchObject({
        arguments: { path: 'tests/missing_colon.py' },
        action: 'open "tests/missing_colon.py"',
      });
      expect(episode.trajectory![2]!.observation).toMatch(/^Text replaced\./);
      // History observations carry the template footer (the comparison removes it).
      expect(episode.trajectory![3]!.observation).toBe(
        '8.2\n(Open file: /SWE-agent__test-repo/tests/missing_colon.py)\n(Current directory: /SWE-agent__test-repo)\nbash-$',
      );
      expect(episode.metadata).toMatchObject({
        actions_from: 'history.action',
        repo_dir_from: 'history footer',
        tool_bundles_from: 'actions',
      });
      expect(episode.metadata!['skipped_actions']).toBeUndefined();
      expect(episode.model_patch).toBeUndefined();
    },
  );

  itWith(
    [SWE_AGENT],
    'reads the YAML demonstration: str_replace_editor calls plus the submit tool its bundles name',
    () => {
      const { episodes, problems } = importSweAgentTrajectory(real('str_replace_anthropic_demo.yaml'), {
        ...options,
        instanceId: 'demo-1',
      });
      expect(problems).toEqual([]);
      const episode = episodes[0]!;
      const calls = episode.trajectory!;
      expect(episode.instance_id).toBe('demo-1');
      // A local repository is copied to /<basename>.
      expect(episode.repo_dir).toBe('/swe-agent-test-repo');
      expect(episode.tool_bundle).toMatchObject({ name: 'swe-agent', bundles: ['submit'], pty_observations: false });
      expect(calls.map((c) => c.name)).toEqual([
        'str_replace_editor',
        'str_replace_editor',
        'str_replace_editor',
        'submit',
      ]);
      expect(calls.slice(0, 3).map((c) => c.arguments['command'])).toEqual(['view', 'view', 'str_replace']);
      expect(calls[2]!.arguments).toEqual({
        command: 'str_replace',
        path: '/swe-agent-test-repo/src/testpkg/missing_colon.py',
        old_str: 'def division(a: float, b: float) -> float',
        new_str: 'def division(a: float, b: float) -> float:',
      });
      expect(calls[0]!.observation).toContain(
        "Here's the files and directories up to 2 levels deep in /swe-agent-test-repo",
      );
      expect(episode.metadata).toMatchObject({ swe_agent_image: 'tiny', repo_dir_from: 'replay_config.env.repo' });
      expect(episode.metadata!['skipped_actions']).toBeUndefined();
    },
  );

  it('reads a legacy 0.x file: trajectory[].action text as the windowed tools ran it, requery turns left out', () => {
    const file = { path: 'out/pydicom__pydicom-1694.traj', text: JSON.stringify(legacyTraj, null, 2) };
    const { episodes, problems } = importSweAgentTrajectory(file, options);
    expect(problems).toEqual([]);
    const episode = episodes[0]!;
    expect(episode.instance_id).toBe('pydicom__pydicom-1694');
    expect(episode.repo_dir).toBe('/pydicom__pydicom');
    // No stamp, no execution_time, no telling wording, observations without final newline: 0.6.1.
    expect(episode.tool_bundle).toEqual({
      name: 'swe-agent',
      version: '0.6.1',
      bundles: ['windowed', 'search', 'edit_linting', 'submit'],
      pty_observations: false,
    });
    expect(episode.trajectory).toEqual([
      {
        name: 'find_file',
        arguments: {},
        action: 'find_file "dataset.py"',
        observation: legacyTraj.trajectory[0]!.observation,
      },
      {
        name: 'open',
        arguments: {},
        action: 'open pydicom/dataset.py 100',
        observation: legacyTraj.trajectory[1]!.observation,
      },
      {
        name: 'edit',
        arguments: {},
        action: 'edit 101:101\n        return self._x\nend_of_edit',
        observation: 'File updated.',
      },
      { name: 'submit', arguments: {}, action: 'submit', observation: '' },
    ]);
    expect(episode.metadata).toMatchObject({
      actions_from: 'trajectory.action',
      working_dir: '/pydicom__pydicom',
      environment: 'swe_main',
      repo_dir_from: 'state.working_dir',
      swe_agent_version_from: 'default for 0.x without other evidence',
    });
    expect(episode.model_patch).toBe('diff --git a/pydicom/dataset.py b/pydicom/dataset.py\n');
  });

  itWith(
    [SWE_AGENT],
    '--repo-dir overrides the inferred repository; --no-replay grades the submission and replays nothing',
    () => {
      const moved = importSweAgentTrajectory(real('6e44b9__sweagenttestrepo-1c2844.traj'), {
        ...options,
        repoDir: '/testbed',
      });
      expect(moved.episodes[0]!.repo_dir).toBe('/testbed');
      const graded = importSweAgentTrajectory(real('6e44b9__sweagenttestrepo-1c2844.traj'), {
        ...options,
        replay: false,
      });
      expect(graded.episodes[0]!.trajectory).toEqual([]);
      expect(graded.episodes[0]!.model_patch).toMatch(/^diff --git a\/tests\/missing_colon\.py/);
      const nothing = importSweAgentTrajectory(real('function_calling_simple.traj'), { ...options, replay: false });
      expect(nothing.problems[0]).toMatchObject({ field: 'info.submission', message: 'no submission to grade' });
    },
  );

  itWith([SWE_AGENT], 'expands samples under one episode id', () => {
    const { episodes } = importSweAgentTrajectory(real('function_calling_simple.traj'), { ...options, samples: 3 });
    expect(episodes.map((e) => [e.episode_id, e.sample_index])).toEqual([
      ['function_calling_simple', 0],
      ['function_calling_simple', 1],
      ['function_calling_simple', 2],
    ]);
  });

  it('reports broken files with file, line and hint instead of throwing', () => {
    const badJson = importSweAgentTrajectory({ path: 'x.traj', text: '{\n  "history": [\n}' }, options);
    expect(badJson.episodes).toEqual([]);
    expect(formatProblem(badJson.problems[0]!)).toMatch(/^x\.traj:3: not valid JSON .* — fix the JSON syntax/);

    const badYaml = importSweAgentTrajectory(
      { path: 'd.yaml', text: 'history:\n  - role: user\n   content: [' },
      options,
    );
    expect(badYaml.problems[0]).toMatchObject({ file: 'd.yaml', code: 'INPUT_INVALID' });
    expect(badYaml.problems[0]!.line).toBeGreaterThan(0);

    const notTraj = importSweAgentTrajectory({ path: 'y.traj', text: '{"foo": 1}' }, options);
    expect(formatProblem(notTraj.problems[0]!)).toBe(
      'y.traj: expected a SWE-agent trajectory object with a "history" or "trajectory" array, got an object with keys foo — pass a .traj file written by SWE-agent, or a demonstration with a "history" list',
    );

    const empty = importSweAgentTrajectory(
      { path: 'z.traj', text: '{"history": [{"role": "system", "content": "hi"}]}' },
      options,
    );
    expect(empty.problems[0]).toMatchObject({
      field: 'history',
      message: 'no actions to replay and no submission to grade',
    });
  });

  itWith([SWE_AGENT], 'reports a missing image with the option hint', () => {
    const { episodes, problems } = importSweAgentTrajectory(real('function_calling_simple.traj'), { runId: 'run-1' });
    expect(episodes).toEqual([]);
    expect(formatProblem(problems[0]!)).toBe(
      'function_calling_simple.traj: sandbox.image: missing (expected string) — set sandbox.image in the record, or pass a default image (--image) or an image template (--image-template)',
    );
  });
});
