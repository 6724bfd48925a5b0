export { createHttpAuth, safeEqual } from './dashboard/auth.js';
export type { AuthenticatedVia, DenyResponder, HttpAuth, HttpAuthOptions } from './dashboard/auth.js';
export { csrfGuard } from './dashboard/csrf.js';
export type { CsrfOptions } from './dashboard/csrf.js';
export { hostForUrl, isLoopbackHost, isLoopbackHostHeader } from './dashboard/loopback.js';
export { formatGradingLog, formatStepLog, stepProgress } from './episode/job-progress.js';
export type { EpisodeProgress, StepLogFields } from './episode/job-progress.js';
export { every as repeatEvery, startWorker } from './start-worker.js';
export type { RunningWorker, StartWorkerOptions } from './start-worker.js';
export { startHealthServer } from './health/health-server.js';
export type { HealthServer, HealthServerOptions } from './health/health-server.js';
export { checkRedis, checkWorkerHealth } from './health/worker-health.js';
export type { WorkerHealth, WorkerState } from './health/worker-health.js';
export { createProcessor } from './processor.js';
export type { ProcessorDeps, EpisodeProcessor } from './processor.js';
export { StragglerPolicy } from './episode/stragglers.js';
export type { StragglerOptions } from './episode/stragglers.js';
export { runWithBackup } from './episode/run-with-backup.js';
export type { AttemptTrace, RacedAttempt } from './episode/run-with-backup.js';
export { createWorkerMetrics } from './metrics/worker-metrics.js';
export type { WorkerMetrics, EpisodeOutcome } from './metrics/worker-metrics.js';
export { aggregateFleetMetrics, publishMetrics, unpublishMetrics } from './metrics/metrics-publisher.js';
export { replayTrajectory } from './episode/replay.js';
export type { ReplayOptions, ReplayOutcome, StepShell } from './episode/replay.js';
export { keepOutput } from './episode/output-limit.js';
export { createStepExecutor } from './episode/step-executor.js';
export type { ExecutedStep, StepCall, StepExecutor, StepExecutorOptions, StepShell as StepExecutorShell, ToCommand } from './episode/step-executor.js';
export { DEFAULT_REPO_DIR, gradeInSandbox } from './grading/grade-in-sandbox.js';
export { CLEAN_GIT_ENV, MAX_PATCH_BYTES, extractPatch, probeRepository } from './grading/extract-patch.js';
export type { ExecShell, PatchExtraction, RepoBase } from './grading/extract-patch.js';
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
export type { GradingShell, SandboxGrade } from './grading/grade-in-sandbox.js';
export { TOOL_PROFILE_SPECS, toolProfile } from './policy/tool-profiles.js';
export type { ExecutedCommand, ToolProfile } from './policy/tool-profiles.js';
export { EMPTY_OUTPUT_OBSERVATION, MINI_MAX_OUTPUT_CHARS, SWEAGENT_MAX_OBSERVATION_CHARS, clipSweAgentObservation, miniObservation, seedObservation } from './policy/observation-format.js';
export { PolicyClient } from './policy-client/policy-client.js';
export type { CompletionCall, CompletionOutcome, PolicyClientOptions } from './policy-client/policy-client.js';
export { buildChatRequest, samplingFields } from './policy-client/chat-request.js';
export type { ChatRequestInput } from './policy-client/chat-request.js';
export { parseCompletion } from './policy-client/parse-completion.js';
export type { LogprobEntry, ParsedCompletion } from './policy-client/parse-completion.js';
export { captureTokens } from './policy-client/token-capture.js';
export type { CapturedTokens } from './policy-client/token-capture.js';
export { errorForPolicyResponse, errorForPolicyTransport, isContextOverflow, parseErrorBody, retryAfterMs } from './policy-client/classify-policy-error.js';
export type { PolicyErrorBody } from './policy-client/classify-policy-error.js';
export { RETRY_TOKEN, V1_SUBMISSION_MARKER, hasV1Submission, splitlinesJoin, sweAgentObservation } from './fidelity/agent-view.js';
export type { AgentView } from './fidelity/agent-view.js';
export {
  FIDELITY_RULES_VERSION,
  ansiColour,
  lineEndings,
  lintCodes,
  miniCanonical,
  normaliseCommon,
  normaliseRecorded,
  parseMiniObservation,
  recordingFormatFor,
  stripEnds,
  sweAgentTemplate,
  trailingWhitespace,
  unorderedListing,
} from './fidelity/normalise.js';
export type { MiniObservation, Normalised, RecordingFormat } from './fidelity/normalise.js';
export { compareStep, summariseFidelity } from './fidelity/compare.js';
export type { CompareOptions, StepToCompare } from './fidelity/compare.js';
export { lineDiff } from './fidelity/line-diff.js';
