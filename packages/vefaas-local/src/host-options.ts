/** Options of `startVefaasLocal` (input) — defaults documented here, resolved in host.ts. */
import type { Logger } from '@rollout-fleet/shared';
import type { FunctionDefaults } from './control-plane/action-context.js';
import type { SignatureVerifier } from './control-plane/signature.js';
import type { FaultConfig } from './faults/fault-config.js';
import type { DeadInstanceResponse } from './gateway/gateway.js';
import type { CgroupOptions } from './sandbox/cgroups/sandbox-cgroups.js';

export type Isolation = 'bwrap' | 'none' | 'emulated';

export interface GatewayOptions {
  /**
   * Route prefix the gateway serves (the "function route"). Everything under it is forwarded to the pinned
   * sandbox with the prefix stripped. @defaultValue `/fn/<functionId>`
   */
  prefix?: string;
  /** Require this gateway key (Authorization header, Bearer, or query). @defaultValue none */
  key?: string;
  /** Timeout per proxied request. @defaultValue 650 * SECOND (above 600 s commands) */
  requestTimeoutMs?: number;
  /** Answer for an unknown/dead instance. @defaultValue 404 InstanceNotFound (see gateway.ts) */
  deadInstance?: Partial<DeadInstanceResponse>;
}

export interface VefaasLocalOptions {
  /** @defaultValue 0 (any free port) */
  port?: number;
  /**
   * Address to bind. Beyond loopback the host refuses to start unless signatures are verified and a gateway key
   * is set, and never with isolation 'none' (see exposure.ts). @defaultValue '127.0.0.1'
   */
  host?: string;
  /** Key required on /_admin (Authorization: Bearer). Without it /_admin is open on loopback, closed elsewhere. */
  adminKey?: string;
  /** How sandboxes run. 'none' is explicit opt-out of isolation. @defaultValue 'bwrap' */
  isolation?: Isolation;
  /** Directory of unpacked images (see the sandbox runtime's resolveImage). */
  imagesDir?: string;
  /** Where per-sandbox state (sockets, scratch) lives. @defaultValue a fresh temp dir, removed on close */
  stateRoot?: string;
  /** Accepted AK/SK pairs. @defaultValue one generated pair */
  credentials?:
    { accessKeyId: string; secretAccessKey: string } | Array<{ accessKeyId: string; secretAccessKey: string }>;
  /** The one sandbox application this host serves. @defaultValue a generated id */
  functionId?: string;
  /** Region reported in responses when signatures are not verified. @defaultValue 'cn-beijing' */
  region?: string;
  /** Verify V4 signatures. Only an explicit `false` turns verification off. @defaultValue true */
  verifySignatures?: boolean;
  /** Accepted clock skew of X-Date. @defaultValue 15 minutes (the shared verifier's default) */
  maxSkewMs?: number;
  /** Replace the signature verifier (tests). */
  verifier?: SignatureVerifier;
  gateway?: GatewayOptions;
  /** Initial fault injection (changeable later via the handle or POST /_admin/faults). */
  faults?: FaultConfig;
  /** @defaultValue a silent pino logger */
  logger?: Logger;
  /** When CreateSandbox answers; see ControlPlaneSettings.createReturns. @defaultValue 'started' */
  createReturns?: 'started' | 'immediately';
  /** Bound on Starting (launch + /is_alive). @defaultValue 120 * SECOND */
  coldStartTimeoutMs?: number;
  /** Smallest accepted sandbox lifetime; the real service's minimum is 3 minutes. @defaultValue 1 second */
  minLifetimeSeconds?: number;
  /** Reject a ListSandboxes `Status` filter with InvalidParameter, as reported upstream. @defaultValue true */
  rejectStatusFilter?: boolean;
  /** After an instance dies by itself: keep it as Failed, or make it disappear. @defaultValue 'failed' */
  onInstanceDeath?: 'failed' | 'gone';
  /** Image/command/port when CreateSandbox omits InstanceImageInfo. @defaultValue none, port 8000 */
  functionDefaults?: Partial<FunctionDefaults>;
  /** Give real sandboxes network access. @defaultValue false */
  sandboxNetwork?: boolean;
  /**
   * Size of each writable directory of a jailed sandbox (/testbed, /tmp, /root are sized tmpfs mounts).
   * @defaultValue 4096 (MB)
   */
  sandboxDiskMB?: number;
  /** Most processes (threads count) one sandbox may have. @defaultValue 1024 */
  sandboxMaxProcesses?: number;
  /** cgroup root and, for cgroup v2, a delegated parent directory. @defaultValue detected (sandbox-cgroups.ts) */
  cgroup?: CgroupOptions;
  /** Emulated mode: images that exist (others → Failed function_initialize_failed). @defaultValue every image */
  emulatedImages?: readonly string[];
  /** Register process 'exit' hook that SIGKILLs every sandbox pid. @defaultValue true */
  killOnExit?: boolean;
}
