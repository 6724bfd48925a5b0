import { describe, expect, it } from 'vitest';
import { formatProblem } from '../validation/problem.js';
import { importNativeEpisodes } from './native.js';
import type { ImportOptions } from './types.js';

const options: ImportOptions = { runId: 'run-1', image: 'default:img', sandbox: { cpu_milli: 1000 } };

const episode = {
  episode_id: 'ep-1',
  instance_id: 'django__django-16255',
  sandbox: { image: 'own:img', memory_mb: 2048 },
  trajectory: [
    { name: 'execute_bash', arguments: { command: 'ls' } },
    { name: 'str_replace_editor', arguments: '{"command": "view", "path": "/testbed"}', observation: 'x' },
  ],
  eval: { repo: 'django/django', test_command: './tests/runtests.py', FAIL_TO_PASS: ['t1'] },
};

describe('importNativeEpisodes', () => {
  it('reads JSONL, keeps the record image, fills run_id and sandbox defaults, parses JSON-string arguments', () => {
    const minimal = {
      instance_id: 'sympy__sympy-13031',
      model_patch: null,
      eval: { repo: 'sympy/sympy', test_command: 'bin/test' },
    };
    const text = `${JSON.stringify(episode)}\n\n${JSON.stringify(minimal)}\n`;
    const { episodes, locations, problems } = importNativeEpisodes({ path: 'episodes.jsonl', text }, options);
    expect(problems).toEqual([]);
    expect(locations).toEqual([
      { file: 'episodes.jsonl', line: 1 },
      { file: 'episodes.jsonl', line: 3 },
    ]);
    expect(episodes[0]).toMatchObject({
      run_id: 'run-1',
      episode_id: 'ep-1',
      sample_index: 0,
      sandbox: { image: 'own:img', memory_mb: 2048, cpu_milli: 1000 },
      metadata: { source: 'episodes.jsonl:1' },
    });
    expect(episodes[0]!.trajectory![1]!.arguments).toEqual({ command: 'view', path: '/testbed' });
    expect(episodes[1]).toMatchObject({
      episode_id: 'sympy__sympy-13031',
      sandbox: { image: 'default:img' },
      model_patch: null,
    });
  });

  it('reads JSON (one episode or an array) and expands samples unless a record names its sample_index', () => {
    const single = importNativeEpisodes(
      { path: 'one.json', text: JSON.stringify(episode) },
      { ...options, samples: 2 },
    );
    expect(single.episodes.map((e) => e.sample_index)).toEqual([0, 1]);
    const pinned = importNativeEpisodes(
      {
        path: 'many.json',
        text: JSON.stringify([
          { ...episode, sample_index: 7 },
          { ...episode, episode_id: 'ep-2' },
        ]),
      },
      { ...options, samples: 2 },
    );
    expect(pinned.episodes.map((e) => [e.episode_id, e.sample_index])).toEqual([
      ['ep-1', 7],
      ['ep-2', 0],
      ['ep-2', 1],
    ]);
    expect(pinned.locations.map((l) => l.path)).toEqual(['$[0]', '$[1]', '$[1]']);
  });

  it('names file, line, field and a hint for each problem', () => {
    const lines = [
      JSON.stringify(episode),
      '{"instance_id": "x",',
      JSON.stringify({ ...episode, instance_id: undefined, episode_id: 'ep-3' }),
      JSON.stringify({
        ...episode,
        trajectory: [{ name: 'execute_bash', arguments: {} }, {}, {}, { name: 'execute_bash', arguments: 'ls -la' }],
      }),
      JSON.stringify({ ...episode, sandbox: { image: 'i', port: '8000' } }),
      JSON.stringify({ ...episode, episode_id: 'has:colon' }),
      '[1, 2]',
    ].join('\n');
    const { episodes, problems } = importNativeEpisodes({ path: 'episodes.jsonl', text: lines }, options);
    expect(episodes).toHaveLength(1);
    const formatted = problems.map(formatProblem);
    expect(formatted[0]).toMatch(/^episodes\.jsonl:2: not valid JSON \(.*\) — write exactly one JSON object per line/);
    expect(formatted).toContain('episodes.jsonl:3: instance_id: missing (expected string) — add "instance_id"');
    expect(formatted).toContain(
      'episodes.jsonl:4: trajectory[1].name: missing (expected string) — add "trajectory[1].name"',
    );
    expect(formatted).toContain(
      'episodes.jsonl:4: trajectory[3].arguments: expected object, got string — give arguments as an object or a JSON string',
    );
    expect(formatted).toContain(
      'episodes.jsonl:5: sandbox.port: expected number, got string — give sandbox.port as number',
    );
    expect(formatted).toContain(
      'episodes.jsonl:6: episode_id: use letters, digits and . _ @ + - / only — ids may use letters, digits and . _ @ + - / only (at most 200 characters)',
    );
    expect(formatted).toContain(
      'episodes.jsonl:7: expected an episode object, got array — give one episode object per line (JSONL) or an episode / array of episodes (JSON)',
    );
    expect(problems.every((p) => p.code === 'INPUT_INVALID')).toBe(true);
  });

  it('reports a JSON path for records inside a JSON array, and the eval refinement', () => {
    const { problems } = importNativeEpisodes(
      { path: 'e.json', text: JSON.stringify([episode, { ...episode, eval: { repo: 'r' } }]) },
      options,
    );
    expect(problems.map(formatProblem)).toEqual([
      'e.json:$[1]: eval.test_command: give test_command or eval_script — set eval.test_command (e.g. "pytest -rA") or eval.eval_script',
    ]);
  });
});
