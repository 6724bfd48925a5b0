/**
 * What the sandbox manager needs from whatever runs a sandbox: a real process behind bubblewrap (or no
 * isolation), or an in-process emulation. The gateway reaches an instance through `target`.
 */
import type { Client } from 'undici';

export interface InstanceLaunch {
  sandboxId: string;
  /** Shell command from InstanceImageInfo.Command (starts the SWE-ReX server). */
  command: string;
  /** InstanceImageInfo.Image, or null to run on the host's root filesystem. */
  image: string | null;
  envs: Record<string, string>;
  memoryMB: number;
  cpuMilli: number;
}

export interface ExitInfo {
  code: number | null;
  signal: string | null;
}

export interface InlineRequest {
  method: string;
  /** Path and query as the sandbox sees it (route prefix already stripped). */
  path: string;
  /** Node-style lower-case header names. */
  headers: Record<string, string | string[] | undefined>;
  body: Buffer;
}

export interface InlineResponse {
  status: number;
  headers: Record<string, string>;
  body: Buffer;
}

export type InstanceTarget =
  /** A keep-alive HTTP client bound to the sandbox's unix socket. */
  | { kind: 'socket'; client: Client }
  /** An in-process SWE-ReX emulation. */
  | { kind: 'inline'; handle(request: InlineRequest): Promise<InlineResponse> };

export interface RunningInstance {
  /** Host pid of the sandbox's outermost process; null when emulated. */
  readonly pid: number | null;
  readonly target: InstanceTarget;
  /** Resolves once the instance is gone, whoever ended it. */
  readonly exited: Promise<ExitInfo>;
  /** One `GET /is_alive` probe (with the instance's API key); false on any failure. */
  isAlive(): Promise<boolean>;
  /** Ends every process of the instance; resolves when they are gone. Idempotent. */
  kill(): Promise<void>;
}

/** Thrown by `launch` when the image cannot be used; the sandbox becomes Failed `function_initialize_failed`. */
export class LaunchError extends Error {
  override readonly name = 'LaunchError';
}

export interface SandboxBackend {
  readonly kind: 'bwrap' | 'none' | 'emulated';
  launch(launch: InstanceLaunch): Promise<RunningInstance>;
}
