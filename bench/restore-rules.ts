/**
 * The restore rule (packages/worker/src/grading/restore-rules.ts) against every SWE-bench Lite gold patch: how
 * many gold patches would lose any hunk because the rule takes a path the gold patch changes for test-side, per
 * repository, next to what a substring rule ("test" anywhere in the path) would take. Reads the 300 instances
 * where they are (`../shared/data/swe-bench-lite/configmaps`, or $ROLLOUT_FLEET_SHARED_DATA); no sandbox.
 *
 * For setup.cfg / pyproject.toml the rule puts back only the test-runner sections; a gold hunk there counts as
 * lost when its text names such a section (`[tool:pytest]`, `[tool.pytest…]`, `[coverage:…]`, …).
 *
 *   npm run bench:restore-rules
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { sharedDataPath } from '@rollout-fleet/test-kit/shared-data';
import { patchPaths, planRestore } from '@rollout-fleet/worker';

interface Instance {
  repo: string;
  instance_id: string;
  patch: string;
  test_patch: string;
}

const DIR = sharedDataPath('swe-bench-lite/configmaps');
const TEST_SECTION_RE =
  /^[+\- ]?\s*\[\s*(tool:pytest|pytest|coverage:[^\]]*|tool\.pytest[^\]]*|tool\.coverage[^\]]*)\s*\]/m;

/** The ConfigMap's `instance.json: |-` block scalar (4-space indented JSON). */
function instanceOf(yamlText: string, file: string): Instance {
  const lines = yamlText.split('\n');
  const start = lines.findIndex((line) => line.trim() === 'instance.json: |-');
  if (start < 0) throw new Error(`${file}: no instance.json block`);
  const body: string[] = [];
  for (const line of lines.slice(start + 1)) {
    if (!line.startsWith('    ') && line.trim() !== '') break;
    body.push(line.slice(4));
  }
  return JSON.parse(body.join('\n')) as Instance;
}

/** The gold patch's hunks, per file. */
function hunksByFile(patch: string): Map<string, string[]> {
  const byFile = new Map<string, string[]>();
  let file: string | undefined;
  for (const chunk of patch.split(/^(?=diff --git |@@ )/m)) {
    if (chunk.startsWith('diff --git ')) file = patchPaths(chunk).at(-1);
    else if (chunk.startsWith('@@ ') && file !== undefined) byFile.set(file, [...(byFile.get(file) ?? []), chunk]);
  }
  return byFile;
}

function main(): void {
  if (!existsSync(DIR)) {
    console.error(
      `bench:restore-rules: the SWE-bench Lite data is absent (${DIR} not found); put the shared data beside the checkout (../shared/data) or set ROLLOUT_FLEET_SHARED_DATA`,
    );
    console.log(JSON.stringify({ error: 'data absent', path: DIR }));
    process.exitCode = 2;
    return;
  }
  const files = readdirSync(DIR).filter((f) => f.endsWith('.yaml'));
  const perRepo = new Map<
    string,
    { instances: number; hunks: number; lost: number; substring: number; restoredTestSide: number }
  >();
  let hunks = 0;
  let lostPatches = 0;
  let lostHunks = 0;
  let substringPatches = 0;
  const lostIds: string[] = [];
  for (const file of files.sort()) {
    const instance = instanceOf(readFileSync(join(DIR, file), 'utf8'), file);
    const gold = hunksByFile(instance.patch);
    const changed = [...gold.keys()];
    const plan = planRestore({ testPatchPaths: patchPaths(instance.test_patch), changedPaths: changed });
    const taken = new Set(plan.files.map((e) => e.path));
    let lostHere = 0;
    for (const [path, fileHunks] of gold) {
      if (taken.has(path)) lostHere += fileHunks.length;
      else if (plan.sections.some((e) => e.path === path))
        lostHere += fileHunks.filter((h) => TEST_SECTION_RE.test(h)).length;
    }
    const goldHunks = [...gold.values()].reduce((n, h) => n + h.length, 0);
    hunks += goldHunks;
    lostHunks += lostHere;
    if (lostHere > 0) {
      lostPatches += 1;
      lostIds.push(instance.instance_id);
    }
    const substring = changed.some((p) => p.toLowerCase().includes('test'));
    if (substring) substringPatches += 1;
    const row = perRepo.get(instance.repo) ?? { instances: 0, hunks: 0, lost: 0, substring: 0, restoredTestSide: 0 };
    row.instances += 1;
    row.hunks += goldHunks;
    row.lost += lostHere > 0 ? 1 : 0;
    row.substring += substring ? 1 : 0;
    // The test patch's own files the rule would put back (always: they are reset and re-applied).
    row.restoredTestSide += plan.files.length;
    perRepo.set(instance.repo, row);
  }
  console.log(`restore rule vs ${files.length} SWE-bench Lite gold patches (${DIR})`);
  console.log(
    'repo                          instances  gold hunks  patches losing a hunk  substring-"test" rule would hit  test-side paths planned',
  );
  for (const [repo, row] of [...perRepo].sort(([a], [b]) => a.localeCompare(b))) {
    console.log(
      `${repo.padEnd(30)}${String(row.instances).padStart(9)}${String(row.hunks).padStart(12)}${String(row.lost).padStart(23)}${String(row.substring).padStart(33)}${String(row.restoredTestSide).padStart(25)}`,
    );
  }
  if (lostIds.length > 0) console.log(`gold patches losing hunks: ${lostIds.join(', ')}`);
  console.log(
    JSON.stringify({
      patches: files.length,
      hunks,
      patches_losing_hunks: lostPatches,
      hunks_lost: lostHunks,
      substring_rule_patches: substringPatches,
    }),
  );
}

main();
