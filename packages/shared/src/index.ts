/**
 * The contract every process shares: episode and result schemas, config, errors, logging, Redis keyspace and store,
 * queue. Only names used outside the package.
 */
export { ERROR_CODES, classOf, isErrorCode, isRetryableCode } from './errors/codes.js';
export type { ErrorCode } from './errors/codes.js';
export { RolloutError } from './errors/rollout-error.js';
export { coerceError, toFailure } from './errors/coerce.js';
export {
  DEFAULT_REPO_DIR,
  EpisodeSchema,
  IdSchema,
  SandboxSpecSchema,
  ToolNameSchema,
  templateValuesOf,
} from './contracts/episode.js';
export type { Episode, EpisodeInput, EvalSpec, SandboxSpec, ToolCall, ToolName } from './contracts/episode.js';
export { SWE_AGENT_BUNDLES } from './contracts/tool-bundle.js';
export type { SweAgentBundle, SweAgentToolBundle, SweAgentVersion, ToolBundleInput } from './contracts/tool-bundle.js';
export type { Fidelity, FidelityStep } from './contracts/fidelity.js';
export { PolicySchema, TOOL_PROFILES } from './contracts/policy.js';
export type { Policy, PolicyInput, ToolProfileName } from './contracts/policy.js';
export type {
  ChatMessage,
  PolicyRunInfo,
  TokenTotals,
  ToolCallMessage,
  TurnRecord,
  Usage,
} from './contracts/turn-record.js';
export { DEFAULT_TEMPLATES, MINI_SUBMIT_SENTINEL } from './contracts/default-templates.js';
export { effectiveTemplates, renderTemplate } from './contracts/render-template.js';
export { sampleSeed } from './contracts/sample-seed.js';
export {
  EpisodeResultSchema,
  GradingDetailsSchema,
  IntegrityVerdictSchema,
  TEST_NOT_FOUND_HINT,
  TEST_STATUSES,
} from './contracts/result.js';
export type {
  Attempt,
  EpisodeResult,
  Failure,
  GradedTest,
  GradingDetails,
  GradingIntegrity,
  GradingReport,
  IntegrityFinding,
  IntegrityVerdict,
  ResultArtifacts,
  StepRecord,
} from './contracts/result.js';
export { GroupEventSchema } from './contracts/group.js';
export { buildFailedResult } from './contracts/failed-result.js';
export { loadConfig } from './config/load-config.js';
export type { Config } from './config/types.js';
export { closestNames, didYouMean, editDistance } from './config/did-you-mean.js';
export { childLogger, createLogger, scrubFromLogs } from './logging/create-logger.js';
export type { Logger } from './logging/create-logger.js';
export { isSecretKey } from './logging/redact.js';
export { isLoopbackHost } from './net/loopback.js';
export { jobSecrets, redactJobData, redactJobText } from './logging/redact-job-data.js';
export { MIN_MASKED_LENGTH, SECRET_MASK, createSecretMasker, episodeSecrets } from './logging/secret-masker.js';
export type { SecretMasker } from './logging/secret-masker.js';
export { createRedis, isCluster } from './redis/create-redis.js';
export type { RedisClient } from './redis/create-redis.js';
export { connectRedis } from './redis/connect-redis.js';
export { describeRedisUrl } from './redis/redis-url.js';
export { deleteKeysMatching, keysMatching } from './redis/scan-keys.js';
export { findRedis } from './redis/local-redis.js';
export { LuaScript, LuaScriptError, isNoScriptError } from './redis/lua-script.js';
export type { ScriptArg } from './redis/lua-script.js';
export { releaseLock } from './redis/release-lock.js';
export type { FoundRedis } from './redis/local-redis.js';
export { freePort, isPortFree } from './net/free-port.js';
export { findOnPath } from './system/find-on-path.js';
export { createKeyspace, jobIdFor, jobNameFor, parseJobId } from './store/keys.js';
export type { Keyspace } from './store/keys.js';
export { ResultStore } from './store/result-store.js';
export { decodeResultValue, encodeResultValue, parseResultValue } from './store/result-codec.js';
export type { CommitFence, EpisodeRef, StreamedResult } from './store/result-store.js';
export { GroupStore } from './store/group-store.js';
export type { StreamedGroup } from './store/group-store.js';
export type { StreamPage } from './store/follow-stream.js';
export { DEFAULT_JOB_POLICY, jobOptionsFor } from './queue/job-contract.js';
export type { EpisodeJobData, EpisodeJobReturn, JobPolicy } from './queue/job-contract.js';
export { requeuePendingReruns, requeueRerun, requeueWhenFinished } from './queue/requeue-rerun.js';
export type { PendingRerun } from './queue/requeue-rerun.js';
export { abortableDelay } from './abort/abortable-delay.js';
export { repeatEvery } from './abort/repeat-every.js';
export { linkedAbort } from './abort/linked-abort.js';
export type { LinkedAbort } from './abort/linked-abort.js';
export { getRunStatus } from './store/run-status.js';
export type { RunStatus } from './store/run-status.js';
export { liveWorkerIds } from './store/live-workers.js';
export { WARM_POOL_MAX_METRIC, announcementWarning, readWarmPoolCapacity } from './store/warm-pool-capacity.js';
export { STREAM_CURSOR_HINT, STREAM_CURSOR_PATTERN, isStreamCursor } from './store/stream-cursor.js';
export { announceDemand, clearAnnouncement, readDemand, readSpec, recordRunSpecs } from './store/sandbox-demand.js';
export { FIRST_DIVERGENCE_BUCKETS, getRunFidelity } from './store/run-fidelity.js';
export { specKey } from './store/spec-key.js';
export { isEmptyPatch, makeRunReport, modelDirName, runReportFileName } from './grading/run-report.js';
export type { RunReport, RunReportInput, SwebenchPrediction } from './grading/run-report.js';
export { classifyInfraFailure } from './grading/infra-failure.js';
export type { InfraFailure, InfraFailureTier } from './grading/infra-failure.js';
export {
  INSTANCE_FILES,
  RUN_EVALUATION_LOG_DIR,
  instanceLayout,
  modelNameOf,
  swebenchTree,
} from './grading/swebench-layout.js';
export type { InstanceFileName, InstanceLayout, SwebenchTree } from './grading/swebench-layout.js';
export type { ResolutionStatus, TestOutcome, TestsStatus } from './grading/report-types.js';
export { toPythonJson } from './grading/python-json.js';
export { encodeTurnTokens, expandPromptIds } from './contracts/turn-tokens.js';
export type { FullTurnIds } from './contracts/turn-tokens.js';
export { integrityOf, openAiExportOf, trainingRecordsOf } from './contracts/export-records.js';
