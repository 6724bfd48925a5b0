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
export { TOOL_PROFILE_SPECS, toolProfile } from './policy/tool-profiles.js';
export { DEFAULT_TEMPLATES, MINI_SUBMIT_SENTINEL } from './contracts/default-templates.js';
export type { ExecutedCommand, ToolProfile } from './policy/tool-profiles.js';
export { effectiveTemplates, renderTemplate, unfilledPlaceholders } from './contracts/render-template.js';
export type { TemplateValues } from './contracts/render-template.js';
export { EMPTY_OUTPUT_OBSERVATION, MINI_MAX_OUTPUT_CHARS, SWEAGENT_MAX_OBSERVATION_CHARS, clipSweAgentObservation, miniObservation, seedObservation } from './policy/observation-format.js';
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
export { signRequest, signRequestParts, formatXDate, sha256Hex } from './vefaas/signing.js';
export type { Credentials, SignRequestInput, SignatureParts } from './vefaas/signing.js';
export { verifySignature } from './vefaas/verify-signature.js';
export type { SignatureErrorCode, VerifySignatureInput, VerifySignatureOptions, VerifySignatureResult } from './vefaas/verify-signature.js';
export { VefaasClient } from './vefaas/control-plane-client.js';
export type { CallPolicy, ListAllSandboxesOptions, VefaasCallOptions, VefaasClientOptions } from './vefaas/control-plane-client.js';
export { createVefaasClient, retryPolicy } from './vefaas/create-vefaas-client.js';
export type { CreateVefaasClientOptions } from './vefaas/create-vefaas-client.js';
export { errorCodeForApiFailure, errorCodeForFailedStart, toVefaasError } from './vefaas/control-plane-errors.js';
export type { ApiFailure } from './vefaas/control-plane-errors.js';
export { VEFAAS_API_VERSION } from './vefaas/control-plane-types.js';
export type {
  CreateSandboxRequest,
  CreateSandboxResult,
  DescribeSandboxRequest,
  DescribeSandboxResult,
  InstanceImageInfo,
  KeyValue,
  KillSandboxRequest,
  KillSandboxResult,
  ListSandboxesRequest,
  ListSandboxesResult,
  ResponseEnvelope,
  ResponseMetadata,
  SandboxListItem,
  SandboxStatus,
  SetSandboxTimeoutRequest,
  SetSandboxTimeoutResult,
  TimeoutUnit,
  VefaasAction,
} from './vefaas/control-plane-types.js';
export { DEFAULT_RETRY, backoffDelayMs, withRetry } from './vefaas/retry-policy.js';
export type { RetryEvent, RetryOptions } from './vefaas/retry-policy.js';
export { SwerexClient } from './swerex/swerex-client.js';
export type {
  CallOptions as SwerexCallOptions,
  InterruptOptions,
  IsAliveOptions,
  RunInSessionInput,
  SwerexBackoff,
  SwerexClientOptions,
  SwerexLogger,
  Truncation,
  WaitUntilAliveOptions,
} from './swerex/swerex-client.js';
export { BoundedJsonReader, readBoundedBody, truncationMarker } from './swerex/bounded-body.js';
export type { BoundedBody, TruncatedField } from './swerex/bounded-body.js';
export { DEFAULT_MAX_RESPONSE_BYTES } from './swerex/swerex-transport.js';
export { SwerexRuntimeError, codeForClassPath } from './swerex/swerex-runtime-error.js';
export { classifyGatewayResponse } from './swerex/classify-gateway-response.js';
export type { GatewayRules, GatewayVerdict, ResponseHeaders } from './swerex/classify-gateway-response.js';
export { POOLS_PER_ORIGIN, closeSharedDispatchers, dispatcherFor } from './swerex/dispatcher-registry.js';
export { abortableDelay } from './abort/abortable-delay.js';
export { linkedAbort } from './abort/linked-abort.js';
export type { LinkedAbort } from './abort/linked-abort.js';
export type { SharedDispatcherOptions } from './swerex/dispatcher-registry.js';
export type { UploadRequest } from './swerex/upload-form.js';
export {
  BashActionSchema,
  BashInterruptActionSchema,
  BashObservationSchema,
  CloseBashSessionRequestSchema,
  CommandResponseSchema,
  CommandSchema,
  CreateBashSessionRequestSchema,
  CreateBashSessionResponseSchema,
  IsAliveResponseSchema,
  ReadFileRequestSchema,
  ReadFileResponseSchema,
  SwerexExceptionBodySchema,
  WriteFileRequestSchema,
} from './swerex/models.js';
export type {
  BashAction,
  BashActionInput,
  BashCheck,
  BashInterruptAction,
  BashInterruptActionInput,
  BashObservation,
  CloseBashSessionRequest,
  CloseBashSessionRequestInput,
  CloseBashSessionResponse,
  CloseResponse,
  Command,
  CommandInput,
  CommandResponse,
  CreateBashSessionRequest,
  CreateBashSessionRequestInput,
  CreateBashSessionResponse,
  ExecuteResponse,
  IsAliveResponse,
  ReadFileRequest,
  ReadFileRequestInput,
  ReadFileResponse,
  SwerexExceptionBody,
  UploadResponse,
  WriteFileRequest,
  WriteFileResponse,
} from './swerex/models.js';
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
export { toolCallToCommand } from './tools/tool-call-to-command.js';
export type { ToolCallError, ToolCallInput, ToolCommandResult } from './tools/tool-call-to-command.js';
export { shellQuote } from './tools/shell-quote.js';
export {
  OPENAI_TOOL_SCHEMAS,
  TOOL_BUNDLE_EXECUTABLES,
  TOOL_CALL_NAMES,
  TOOL_SPECS,
  isToolCallName,
  toOpenAiToolSchema,
} from './tools/tool-catalogue.js';
export type { OpenAiToolSchema, ToolArgumentSpec, ToolCallName, ToolSpec } from './tools/tool-catalogue.js';
export { EDITOR_HISTORY_FILE, TOOL_BUNDLE_DIR, TOOL_INSTALL_DIR, TOOL_INSTALL_ROOT } from './tools/bundle-paths.js';
export { TOOL_BUNDLE_UPLOAD, prepareToolBundleUpload } from './tools/tool-bundle-upload.js';
export { AGENT_ENV_LABEL_KEY, AgentEnv, DEFAULT_SESSION_ENV } from './agent-env/agent-env.js';
export type { AgentEnvOptions, AttachOptions, ReadyOptions, RunResult, SettleOutcome, StartTimings, VefaasTarget } from './agent-env/agent-env.js';
export { checkSandboxEnvNames, createSandboxRequest } from './agent-env/create-request.js';
export { setupStatus } from './agent-env/session-setup.js';
export type { SetupOutcome } from './agent-env/session-setup.js';
export { specKey } from './store/spec-key.js';
export { DEFAULT_START_COMMAND, buildStartCommand } from './agent-env/start-command.js';
export type { StartCommand } from './agent-env/start-command.js';
export { summarizeRun } from './grading/run-summary.js';
export type { RunSummary, RunSummaryEntry } from './grading/run-summary.js';
export type { ResolutionStatus, SwebenchReportFile, TestOutcome, TestsStatus } from './grading/report-types.js';
export { toPythonJson } from './grading/python-json.js';
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
export { encodeTurnTokens, expandPromptIds } from './contracts/turn-tokens.js';
export type { FullTurnIds } from './contracts/turn-tokens.js';
export { openAiExportOf, trainingRecordsOf } from './contracts/export-records.js';
export type { OpenAiExportRecord, TrainingRecord } from './contracts/export-records.js';
export { SWE_AGENT_INSTALL_ROOT, sweAgentSessionCommand, sweAgentSetupCommand } from './agent-env/agent-tools.js';
export { SWE_AGENT_SIGNATURES, guardMultilineAction, sweAgentActionCommand, sweAgentActionFor, sweAgentToolNames } from './tools/swe-agent-actions.js';
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
