export { launchSandbox } from './launch-sandbox.js';
export { parseAuthToken } from './auth-token.js';
export { resolveImage, imageTemplateName, IMAGE_NOT_FOUND_ERROR_CODE } from './resolve-image.js';
export { checkIsolation } from './check-isolation.js';
export { removeSandboxLeftovers } from './leftovers.js';
export { isSwerexAlive } from './alive-probe.js';
export type {
  EnforcedLimits,
  IsolationReport,
  Isolation,
  SandboxExit,
  SandboxLaunch,
  SandboxProcess,
} from './types.js';
export { probeSandboxLimits, describeUnenforced } from './limits-report.js';
export type { LimitsReport, UnenforcedLimit, LimitName } from './limits-report.js';
export type { CgroupOptions } from './cgroups/sandbox-cgroups.js';
