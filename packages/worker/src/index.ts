export { parseLog, parseTestOutput, readTestLog } from './grading/parse-log.js';
export type { TestLogReading } from './grading/parse-log.js';
export { FAIL_ONLY_REPOS, parserForRepo } from './grading/repo-parsers.js';
export { gradeInstance } from './grading/grade-instance.js';
export type { GradeInstanceInput, InstanceGrade } from './grading/grade-instance.js';
export { evaluateTests, resolutionOf, successRate } from './grading/resolution.js';
export type { EvaluateTestsInput, GradingMode } from './grading/resolution.js';
export { modifiedFiles, testDirectives } from './grading/test-directives.js';
export { HEREDOC_DELIMITER, buildEvalScript, evalScriptLines } from './grading/eval-script.js';
export type { EvalScriptOptions } from './grading/eval-script.js';
export { APPLY_PATCH_COMMANDS, buildApplyPatchScript } from './grading/apply-patch-script.js';
export type { ApplyPatchScriptOptions } from './grading/apply-patch-script.js';
export {
  APPLY_PATCH_FAIL,
  APPLY_PATCH_PASS,
  END_TEST_OUTPUT,
  NOT_APPLIED_MARKERS,
  START_TEST_OUTPUT,
  timeoutNotice,
} from './grading/log-markers.js';
export { TEST_STATUSES, isTestStatus } from './grading/types.js';
export type { ParserName, StatusMap, TestStatus } from './grading/types.js';
