/**
 * Everything that reaches a sandbox: SWE-ReX and veFaaS clients and signing, AgentEnv, the tool bundle, the sandbox
 * supply, leases and reaper. Only names used outside the package.
 */
export { signRequest } from './vefaas/signing.js';
export { verifySignature } from './vefaas/verify-signature.js';
export type { SignatureErrorCode, VerifySignatureInput, VerifySignatureResult } from './vefaas/verify-signature.js';
export { VefaasClient } from './vefaas/control-plane-client.js';
export { createVefaasClient } from './vefaas/create-vefaas-client.js';
export { backoffDelayMs } from './vefaas/retry-policy.js';
export { SwerexClient } from './swerex/swerex-client.js';
export type { SwerexClientOptions } from './swerex/swerex-client.js';
export { truncationMarker } from './swerex/bounded-body.js';
export { SwerexRuntimeError } from './swerex/swerex-runtime-error.js';
export { classifyGatewayResponse, parseJsonObject, snippet } from './swerex/classify-gateway-response.js';
export { closeSharedDispatchers, dispatcherFor } from './swerex/dispatcher-registry.js';
export type { CommandInput, CommandResponse } from './swerex/models.js';
export { toolCallToCommand } from './tools/tool-call-to-command.js';
export type { ToolCallInput, ToolCommandResult } from './tools/tool-call-to-command.js';
export { shellQuote } from './tools/shell-quote.js';
export {
  BASH_TOOL,
  EXECUTE_BASH_TOOL,
  STR_REPLACE_EDITOR_TOOL,
  TOOL_CALL_NAMES,
  toOpenAiToolSchema,
} from './tools/tool-catalogue.js';
export type { OpenAiToolSchema } from './tools/tool-catalogue.js';
export { TOOL_BUNDLE_DIR } from './tools/bundle-paths.js';
export { prepareToolBundleUpload } from './tools/tool-bundle-upload.js';
export { AGENT_ENV_LABEL_KEY, AgentEnv } from './agent-env/agent-env.js';
export type { AgentEnvOptions, SettleOutcome, VefaasTarget } from './agent-env/agent-env.js';
export { createSandboxRequest } from './agent-env/create-request.js';
export { setupStatus } from './agent-env/session-setup.js';
export type { SetupOutcome } from './agent-env/session-setup.js';
export { buildStartCommand } from './agent-env/start-command.js';
export { sweAgentSessionCommand, sweAgentSetupCommand } from './agent-env/agent-tools.js';
export { TOOL_INSTALL_COMMAND } from './agent-env/install-tools.js';
export { sweAgentActionCommand, sweAgentActionFor, sweAgentToolNames } from './tools/swe-agent-actions.js';
export { errorCodeOf } from './swerex/response-errors.js';
export { SandboxSupply, createSandboxSupply } from './supply/sandbox-supply.js';
export type { SandboxRequest, SandboxRole, SuppliedSandbox, SupplyLimits } from './supply/sandbox-supply.js';
export { supplyLimitsFrom } from './supply/supply-limits.js';
export type { SupplyTarget } from './supply/target-pool.js';
export { WarmPool } from './supply/warm-pool.js';
export { FLEET_LABEL_KEY, ensureFleetId } from './leases/fleet-id.js';
export { createSupplyMetrics } from './supply/supply-metrics.js';
export type { SupplyMetrics } from './supply/supply-metrics.js';
export { LeaseStore } from './leases/lease-store.js';
export { LeaseKeeper } from './supply/lease-keeper.js';
export { Reaper, reaperPlatformFor } from './leases/reaper.js';
export type { ReaperPlatform } from './leases/reaper.js';
export { createProcessReaper } from './leases/process-reaper.js';
export type { ProcessReaper, ProcessReaperOptions } from './leases/process-reaper.js';
