/**
 * Adversarial corpus, the other direction: genuine fixes whose patches carry what a text-only `git diff` and a
 * guessing `patch` fallback lose (docs/adversarial-grading.md, "Binary-safe patches") — a binary file, a rename,
 * a mode change, a symlink, names with spaces and non-ASCII letters, CRLF line ends. Each is extracted with
 * `git diff --binary`, applied exactly in the fresh grading sandbox, and must stay resolved (reward 1). A patch
 * that does not apply is graded 0 with the apply log.
 */
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { EpisodeResult } from '@rollout-fleet/shared';
import { bashStep } from '@rollout-fleet/test-kit/adversarial-cases';
import { runCorpus, type CorpusEpisode, type CorpusRun } from '../support/corpus-run.js';
import { SWEEP } from '../support/pipeline-harness.js';

const PYUTILS = JSON.parse(readFileSync(SWEEP, 'utf8').split('\n')[0] ?? '{}') as CorpusEpisode;
const FIX = bashStep("sed -i 's/return a - b/return a + b/' /testbed/pyutils/calc.py");
const EXTRAS: Record<string, string> = {
  // The fix reads the binary file it adds (five bytes): without the file in the graded tree, test_add errors.
  binary:
    'printf \'\\000\\001\\002\\377\\000\' > /testbed/pyutils/blob.bin && sed -i \'s/return a + b$/return a + b + len(open(__file__.replace("calc.py", "blob.bin"), "rb").read()) - 5/\' /testbed/pyutils/calc.py',
  rename: 'mv /testbed/README.md /testbed/README.txt',
  mode: 'chmod +x /testbed/pyutils/fizz.py',
  symlink: 'ln -s pyutils/calc.py /testbed/calc-link.py',
  'odd-names': "echo x > '/testbed/notes with space.txt' && echo y > '/testbed/café ü.txt'",
  crlf: `python3 -c "p='/testbed/pyutils/text.py'; s=open(p).read(); open(p, 'w', newline='').write(s.replace('\\n', '\\r\\n'))"`,
};

const caseOf = (
  id: string,
  trajectory: CorpusEpisode['trajectory'],
  extra: Partial<CorpusEpisode> = {},
): CorpusEpisode => ({
  ...PYUTILS,
  episode_id: id,
  instance_id: 'pyutils__calc-add',
  trajectory,
  ...extra,
});

describe('adversarial corpus: binary-safe patches keep genuine fixes resolved', () => {
  let run: CorpusRun;
  const get = (id: string): EpisodeResult => {
    const result = run.results.get(id);
    expect(result, id).toBeDefined();
    return result as EpisodeResult;
  };

  beforeAll(async () => {
    run = await runCorpus('corpus-patches', () => [
      ...Object.entries(EXTRAS).map(([id, command]) => caseOf(id, [FIX, bashStep(command)])),
      caseOf('all-at-once', [FIX, ...Object.values(EXTRAS).map(bashStep)]),
      caseOf('does-not-apply', [], {
        model_patch:
          'diff --git a/pyutils/calc.py b/pyutils/calc.py\n--- a/pyutils/calc.py\n+++ b/pyutils/calc.py\n@@ -1,3 +1,3 @@\n def add(a, b):\n-    """Not this docstring."""\n+    """Return the sum."""\n     return a - b\n',
      }),
    ]);
  }, 300_000);

  afterAll(async () => {
    await run?.close();
  });

  it.each([
    ['binary', /GIT binary patch/],
    ['rename', /^rename from README\.md$/m],
    ['mode', /^old mode 100644\nnew mode 100755$/m],
    ['symlink', /^new file mode 120000$/m],
    ['odd-names', /notes with space\.txt/],
    ['crlf', /\r$/m],
  ])('a real fix plus a %s stays resolved (reward 1), the patch carrying it', (id, inPatch) => {
    expect(get(id)).toMatchObject({ status: 'completed', resolved: true, reward: 1 });
    expect(get(id).patch).toMatch(inPatch);
    expect(get(id).report?.patch_successfully_applied).toBe(true);
  });

  it('all of them in one patch stay resolved (reward 1)', () => {
    expect(get('all-at-once')).toMatchObject({ status: 'completed', resolved: true, reward: 1 });
  });

  it('a patch that does not apply is graded 0 with the apply log, not retried', () => {
    const result = get('does-not-apply');
    expect(result).toMatchObject({ status: 'completed', resolved: false, reward: 0 });
    expect(result.report).toMatchObject({ patch_exists: true, patch_successfully_applied: false });
    expect(result.grading?.log).toContain('>>>>> Patch Apply Failed');
    expect(result.grading?.log).toContain('Failed to apply patch to container: git apply --verbose');
    expect(result.attempts).toHaveLength(1);
  });
});
