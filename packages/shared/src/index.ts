export { ERROR_CODES, classOf, isErrorCode, isRetryableCode } from './errors/codes.js';
export type { ErrorCode, FailureClass } from './errors/codes.js';
export { RolloutError } from './errors/rollout-error.js';
export type { RolloutErrorOptions } from './errors/rollout-error.js';
export { coerceError, toFailure } from './errors/coerce.js';
export {
  EpisodeSchema,
  EvalSpecSchema,
  IdSchema,
  LimitsSchema,
  SandboxSpecSchema,
  ToolCallSchema,
  ToolNameSchema,
} from './contracts/episode.js';
export type { Episode, EpisodeInput, EvalSpec, SandboxSpec, ToolCall, ToolName } from './contracts/episode.js';
export { DEFAULT_REPO_DIR, DEFAULT_WORKING_DIR, LOG_PARSERS, RepoDirSchema, templateValuesOf } from './contracts/episode.js';
export type { LogParserName } from './contracts/episode.js';
export {
  MiniSweAgentToolBundleSchema,
  SWE_AGENT_BUNDLES,
  SWE_AGENT_VERSIONS,
  SweAgentToolBundleSchema,
  ToolBundleSchema,
  isV0,
} from './contracts/tool-bundle.js';
export type { SweAgentBundle, SweAgentToolBundle, SweAgentVersion, ToolBundle, ToolBundleInput } from './contracts/tool-bundle.js';
export { FIDELITY_VERDICTS, FidelitySchema, FidelityStepSchema } from './contracts/fidelity.js';
export type { Fidelity, FidelityStep, FidelityVerdict } from './contracts/fidelity.js';
export {
  CaptureSchema,
  PolicyLimitsSchema,
  PolicySchema,
  RESERVED_BODY_KEYS,
  SERVER_KINDS,
  SamplingSchema,
  TEMPLATE_PLACEHOLDERS,
  TOOL_PROFILES,
  templatePlaceholders,
} from './contracts/policy.js';
export type { Capture, Policy, PolicyInput, PolicyLimits, Sampling, ServerKind, TemplatePlaceholder, ToolProfileName } from './contracts/policy.js';
export {
  ChatMessageSchema,
  PolicyRunInfoSchema,
  TokenTotalsSchema,
  ToolCallMessageSchema,
  TurnRecordSchema,
  TurnTokensSchema,
  UsageSchema,
} from './contracts/turn-record.js';
export type { ChatMessage, PolicyRunInfo, TokenTotals, ToolCallMessage, TurnRecord, TurnTokens, Usage } from './contracts/turn-record.js';
export { DEFAULT_TEMPLATES, MINI_SUBMIT_SENTINEL } from './contracts/default-templates.js';
export { effectiveTemplates, renderTemplate, unfilledPlaceholders } from './contracts/render-template.js';
export type { TemplateValues } from './contracts/render-template.js';
export {
  AttemptSchema,
  EpisodeResultSchema,
  FailureSchema,
  GradingReportSchema,
  StepRecordSchema,
  TimingsSchema,
} from './contracts/result.js';
export type { Attempt, EpisodeResult, EpisodeResultInput, Failure, GradingReport, GroupMembership, StepRecord, Timings } from './contracts/result.js';
export { GradedTestSchema, GradingDetailsSchema, GroupMembershipSchema, TEST_NOT_FOUND_HINT, TEST_STATUSES } from './contracts/result.js';
export type { GradedTest, GradingDetails } from './contracts/result.js';
export { GroupEventSchema, GroupSampleSchema, rewardStats } from './contracts/group.js';
export type { GroupEvent, GroupSample } from './contracts/group.js';
export { buildFailedResult } from './contracts/failed-result.js';
export type { FailedResultInput } from './contracts/failed-result.js';
export { renderJsonSchemas } from './contracts/json-schemas.js';
export { loadConfig } from './config/load-config.js';
export type { ConfigProblem, LoadConfigOptions } from './config/load-config.js';
export type { Config, VefaasCloudConfig, VefaasConfig, VefaasLocalConfig } from './config/types.js';
export { parseSandboxFunctions } from './config/sandbox-functions.js';
export type { SandboxFunction } from './config/sandbox-functions.js';
export { CONFIG_VARIABLES } from './config/variables.js';
export type { ConfigVariable } from './config/variables.js';
export { renderConfigTable } from './config/config-table.js';
export { closestNames, didYouMean, editDistance } from './config/did-you-mean.js';
export { childLogger, createLogger, scrubFromLogs } from './logging/create-logger.js';
export type { CreateLoggerOptions, LogContext, Logger } from './logging/create-logger.js';
export { isSecretKey, redactDeep, redactSecrets } from './logging/redact.js';
export { isLoopbackHost } from './net/loopback.js';
export { redactJobData, redactJobText, jobSecrets, MIN_SCRUBBED_LENGTH } from './logging/redact-job-data.js';
export { SECRET_MASK, MIN_MASKED_LENGTH, createSecretMasker, episodeSecrets, isSecretVariable, type SecretMasker } from './logging/secret-masker.js';
export { LOG_FORMATS, LOG_LEVELS } from './logging/levels.js';
export type { LogFormat, LogLevel } from './logging/levels.js';
export { createRedis, isCluster } from './redis/create-redis.js';
export type { CreateRedisOptions, RedisClient, RedisRole } from './redis/create-redis.js';
export { connectRedis } from './redis/connect-redis.js';
export { REDIS_URL_SCHEMES, RedisUrlError, describeRedisUrl, parseRedisUrl } from './redis/redis-url.js';
export type { RedisClusterEndpoint, RedisConfig, RedisNode } from './redis/redis-url.js';
export { hashTagOf, missingHashTagProblem } from './redis/hash-tag.js';
export { deleteKeysMatching, keysMatching } from './redis/scan-keys.js';
export { findRedis } from './redis/local-redis.js';
export type { FoundRedis } from './redis/local-redis.js';
export { freePort, isPortFree } from './net/free-port.js';
export { findOnPath } from './system/find-on-path.js';
export { DEFAULT_PREFIX, DEFAULT_QUEUE, createKeyspace, jobIdFor, jobNameFor, parseJobId } from './store/keys.js';
export type { Keyspace } from './store/keys.js';
export { ResultStore } from './store/result-store.js';
export type {
  CommitFence,
  CommitOutcome,
  CurrentResult,
  EpisodeRef,
  EpisodeState,
  ResultStoreOptions,
  RetractOutcome,
  RunCounts,
  StreamedResult,
} from './store/result-store.js';
export { GroupStore } from './store/group-store.js';
export type { GroupCounts, StreamedGroup } from './store/group-store.js';
export { followStream, streamField } from './store/follow-stream.js';
export type { FollowStreamOptions, StreamPage } from './store/follow-stream.js';
export { DEFAULT_JOB_POLICY, jobOptionsFor } from './queue/job-contract.js';
export type { EpisodeJobData, EpisodeJobReturn, JobPolicy } from './queue/job-contract.js';
export { requeuePendingReruns, requeueRerun, requeueWhenFinished } from './queue/requeue-rerun.js';
export type { PendingRerun, RequeueDeps, RequeueOutcome, SweepOptions } from './queue/requeue-rerun.js';
export { abortableDelay } from './abort/abortable-delay.js';
export { linkedAbort } from './abort/linked-abort.js';
export type { LinkedAbort } from './abort/linked-abort.js';
export { getRunStatus } from './store/run-status.js';
export { liveWorkerIds } from './store/live-workers.js';
export { WARM_POOL_MAX_METRIC, announcementWarning, readWarmPoolCapacity } from './store/warm-pool-capacity.js';
export type { WarmPoolCapacity } from './store/warm-pool-capacity.js';
export { STREAM_CURSOR_HINT, STREAM_CURSOR_PATTERN, isStreamCursor } from './store/stream-cursor.js';
export { announceDemand, clearAnnouncement, readDemand, readSpec, recordRunSpecs } from './store/sandbox-demand.js';
export type { SpecRecord } from './store/sandbox-demand.js';
export { FIRST_DIVERGENCE_BUCKETS, firstDivergenceBucket, foldRunFidelity, getRunFidelity, readRunFidelity } from './store/run-fidelity.js';
export type { FirstDivergenceBucket, RunFidelity } from './store/run-fidelity.js';
export type { RunStatus } from './store/run-status.js';
export { specKey } from './store/spec-key.js';
export { summarizeRun } from './grading/run-summary.js';
export type { RunSummary, RunSummaryEntry } from './grading/run-summary.js';
export type { ResolutionStatus, SwebenchReportFile, TestOutcome, TestsStatus } from './grading/report-types.js';
export { toPythonJson } from './grading/python-json.js';
export { encodeTurnTokens, expandPromptIds } from './contracts/turn-tokens.js';
export type { FullTurnIds } from './contracts/turn-tokens.js';
export { openAiExportOf, trainingRecordsOf } from './contracts/export-records.js';
export type { OpenAiExportRecord, TrainingRecord } from './contracts/export-records.js';
export { LuaScript } from './redis/lua-script.js';
export type { ScriptArg } from './redis/lua-script.js';
