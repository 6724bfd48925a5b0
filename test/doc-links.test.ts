/**
 * The docs a newcomer reads (README.md, docs/*.md) point only at what a clone has: every relative Markdown link
 * resolves to a file of the repository, and no link or quoted path leads outside it (the team's specification
 * folders, this machine's paths) — a reader of a clone cannot open those.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const DOCS = [
  'README.md',
  ...readdirSync(join(ROOT, 'docs'))
    .filter((name) => name.endsWith('.md'))
    .map((name) => `docs/${name}`),
];

/** Paths that exist only outside a clone: the specification and data folders the project was built from, a machine's home. */
const OUTSIDE = [/(^|[\s`(])shared\/(specs|data)\//, /(^|[\s`(])\/work\//, /(^|[\s`(])\/home\/[a-z]/, /file:\/\//];

function markdownLinks(text: string): string[] {
  return [...text.matchAll(/\]\(([^)\s]+)(?:\s+"[^"]*")?\)/g)].map((m) => m[1] as string);
}

describe('documentation links', () => {
  it('finds the documents it checks', () => {
    expect(DOCS).toContain('README.md');
    expect(DOCS.length).toBeGreaterThan(3);
  });

  it.each(DOCS)('%s: every relative link resolves to a file of the repository', (doc) => {
    const text = readFileSync(join(ROOT, doc), 'utf8');
    const broken = markdownLinks(text)
      .filter((target) => !/^(https?:|mailto:|#)/.test(target))
      .map((target) => ({ target, path: resolve(ROOT, dirname(doc), decodeURI(target.split('#')[0] ?? '')) }))
      .filter(({ path }) => relative(ROOT, path).startsWith('..') || !existsSync(path))
      .map(({ target }) => target);
    expect(broken, `${doc} links to files a clone does not have`).toEqual([]);
  });

  it.each(DOCS)('%s: no link or quoted path points outside the repository', (doc) => {
    const lines = readFileSync(join(ROOT, doc), 'utf8').split('\n');
    const outside = lines.flatMap((line, i) =>
      OUTSIDE.some((pattern) => pattern.test(line)) ? [`${doc}:${i + 1}: ${line.trim()}`] : [],
    );
    expect(outside).toEqual([]);
  });

  it('catches what it is for: an outside path and a broken link are found', () => {
    expect(OUTSIDE.some((pattern) => pattern.test('Formats are in `shared/specs/trajectories-and-grading.md`.'))).toBe(
      true,
    );
    expect(OUTSIDE.some((pattern) => pattern.test('see `packages/shared/src/contracts/episode.ts`'))).toBe(false);
    expect(markdownLinks('see [the spec](../../shared/specs/x.md) and [ok](docs/policy.md#top)')).toEqual([
      '../../shared/specs/x.md',
      'docs/policy.md#top',
    ]);
  });
});
