/** Everything that reaches a sandbox: SWE-ReX and veFaaS clients, AgentEnv, the tool bundle, the sandbox supply. */
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
export { DEFAULT_START_COMMAND, buildStartCommand } from './agent-env/start-command.js';
export type { StartCommand } from './agent-env/start-command.js';
export { SWE_AGENT_INSTALL_ROOT, sweAgentSessionCommand, sweAgentSetupCommand } from './agent-env/agent-tools.js';
export { SWE_AGENT_SIGNATURES, guardMultilineAction, sweAgentActionCommand, sweAgentActionFor, sweAgentToolNames } from './tools/swe-agent-actions.js';
export { parseJsonObject, snippet } from './swerex/classify-gateway-response.js';
export { errorCodeOf } from './swerex/response-errors.js';
export { BASH_TOOL, EXECUTE_BASH_TOOL, STR_REPLACE_EDITOR_TOOL } from './tools/tool-catalogue.js';
export { SandboxSupply, createSandboxSupply, lifetimeFor } from './supply/sandbox-supply.js';
export type { SandboxRequest, SandboxRole, SandboxSupplyOptions, SuppliedSandbox, SupplyLimits, SupplyMetricsSink } from './supply/sandbox-supply.js';
export { supplyLimitsFrom } from './supply/supply-limits.js';
export { TargetPool } from './supply/target-pool.js';
export { WarmPool } from './supply/warm-pool.js';
export type { WarmPoolOptions } from './supply/warm-pool.js';
export type { SupplyTarget, TargetHealthOptions } from './supply/target-pool.js';
export { CreateRateLimiter } from './supply/create-rate-limiter.js';
export type { CreateRateOptions, TakeOutcome } from './supply/create-rate-limiter.js';
export { FLEET_LABEL_KEY, ensureFleetId } from './leases/fleet-id.js';
export { adoptOrKill } from './supply/adopt-or-kill.js';
export { createSupplyMetrics } from './supply/supply-metrics.js';
export type { SupplyMetrics } from './supply/supply-metrics.js';
export { LeaseStore } from './leases/lease-store.js';
export type { Lease, LeaseFields, ListedSandbox, PoolEntry, ReserveOutcome, SlotCounts } from './leases/lease-store.js';
export { LeaseKeeper } from './supply/lease-keeper.js';
export type { LeaseKeeperOptions } from './supply/lease-keeper.js';
export { Reaper, reaperPlatformFor } from './leases/reaper.js';
export type { ReaperOptions, ReaperPlatform, ReapReport } from './leases/reaper.js';
