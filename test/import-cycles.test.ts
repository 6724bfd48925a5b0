/**
 * No import circles: between the source files of the packages and the CLI (type-only imports count: a circle
 * of types is still two modules that cannot be understood one without the other), and between packages (tests
 * left out there: a package's tests may use the test kit, which uses the package).
 */
import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { circlesOf, importGraph, type ImportGraph } from './support/import-graph.js';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const SOURCES = execFileSync(
  'git',
  ['ls-files', '--cached', '--others', '--exclude-standard', '--', 'packages/*/src/**.ts', 'cli/**.ts'],
  { cwd: ROOT, encoding: 'utf8' },
)
  .split('\n')
  .filter((file) => file.endsWith('.ts'));

function packageGraph(files: ImportGraph): ImportGraph {
  const packageOf = (file: string): string => /^packages\/([^/]+)\//.exec(file)?.[1] ?? 'cli';
  const edges = new Map<string, Set<string>>();
  for (const [file, targets] of files) {
    if (file.endsWith('.test.ts')) continue;
    const from = packageOf(file);
    const to = edges.get(from) ?? new Set<string>();
    for (const target of targets) if (packageOf(target) !== from) to.add(packageOf(target));
    edges.set(from, to);
  }
  return new Map([...edges].map(([from, to]) => [from, [...to]]));
}

describe('import circles', () => {
  const graph = importGraph(ROOT, SOURCES);

  it('reads the sources it checks', () => {
    expect(SOURCES.length).toBeGreaterThan(300);
    expect(graph.get('packages/shared/src/contracts/episode.ts')).toContain('packages/shared/src/contracts/policy.ts');
    expect(graph.get('packages/worker/src/start-worker.ts')).toContain('packages/sandbox/src/index.ts');
  });

  it('has none between source files', () => {
    expect(circlesOf(graph)).toEqual([]);
  });

  it('has none between packages', () => {
    expect(circlesOf(packageGraph(graph))).toEqual([]);
  });

  it('catches what it is for: a circle of three and a self-import are found, a chain is not', () => {
    const circular = new Map([
      ['a', ['b']],
      ['b', ['c']],
      ['c', ['a', 'd']],
      ['d', []],
      ['e', ['e']],
    ]);
    expect(circlesOf(circular)).toEqual([['a', 'b', 'c'], ['e']]);
    expect(
      circlesOf(
        new Map([
          ['a', ['b']],
          ['b', ['c']],
          ['c', []],
        ]),
      ),
    ).toEqual([]);
  });
});
