/** One sandbox as the control plane knows it (vefaas-api.md §1.3, §1.4). */
import type { RunningInstance } from '../backends/backend.js';

export const SANDBOX_STATUSES = ['Starting', 'Ready', 'Failed', 'Terminating'] as const;
export type SandboxStatus = (typeof SANDBOX_STATUSES)[number];

/** ErrorCode values the real service reports on failure (§1.4). */
export type SandboxErrorCode =
  'internal_load_request_error' | 'function_initialize_failed' | 'function_health_check_failed' | 'route_terminating';

export interface KeyValue {
  Key: string;
  Value: string;
}

export interface SandboxSpec {
  image: string;
  imageId: string;
  command: string;
  port: number;
  envs: KeyValue[];
  metadata: Record<string, string>;
  cpuMilli: number;
  memoryMB: number;
  maxConcurrency: number;
  requestTimeoutSeconds: number;
  sessionId: string;
}

export interface SandboxRecord {
  readonly id: string;
  readonly functionId: string;
  readonly spec: SandboxSpec;
  status: SandboxStatus;
  errorCode: SandboxErrorCode | '';
  errorMessage: string;
  /** Epoch ms. */
  readonly createdAt: number;
  /** Epoch ms; the sandbox is killed when it passes. */
  expireAt: number;
  instance: RunningInstance | null;
  /** Set once Kill/expiry started; a launch finishing afterwards kills its instance at once. */
  terminating: boolean;
  /** The server never answered /is_alive within the cold-start timeout. */
  startTimedOut: boolean;
  /** Extra latency the gateway adds to every request to this instance (a slow host; admin fault). */
  slowMs?: number;
  expiryTimer: NodeJS.Timeout | null;
}
