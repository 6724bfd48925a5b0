/**
 * An eval that lists no test at all is refused at submit: with FAIL_TO_PASS and PASS_TO_PASS both empty, both
 * success rates are 1 over an empty denominator (SWE-bench's rule), so every patch — the empty one and a hack
 * included — would be graded resolved. SWE-bench itself grades such an instance resolved; a reward cannot.
 */
import type { Episode } from '@rollout-fleet/shared';
import { problemAt, type Problem, type RecordLocation } from './problem.js';

export function emptyTestListsProblem(episode: Episode, location: RecordLocation): Problem | undefined {
  const spec = episode.eval;
  if (spec === undefined || spec.FAIL_TO_PASS.length > 0 || spec.PASS_TO_PASS.length > 0) return undefined;
  return problemAt(location, {
    field: 'eval.FAIL_TO_PASS',
    message:
      'eval.FAIL_TO_PASS and eval.PASS_TO_PASS are both empty: no test decides the grade, so every patch (an empty one included) would be graded resolved',
    hint: 'list the tests the fix must make pass in eval.FAIL_TO_PASS (and those it must keep passing in eval.PASS_TO_PASS), or leave out eval to run the episode ungraded',
  });
}
