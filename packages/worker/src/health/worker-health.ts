/**
 * Is this worker process able to take episodes right now? What an orchestrator's readiness probe asks
 * (Kubernetes stops counting a pod that is not ready and holds a rollout until new pods are):
 * - the BullMQ worker is running and not shutting down;
 * - Redis answers a PING within `timeoutMs` on the worker's own connection.
 * Liveness is simpler (the process answers at all): see health-server.ts.
 */
import type { RedisClient } from '@rollout-fleet/shared';

export type WorkerState = 'starting' | 'running' | 'stopping' | 'stopped';

export interface WorkerHealth {
  ready: boolean;
  worker: WorkerState;
  /** 'ok', or why Redis does not count as reachable. */
  redis: string;
}

const PING_TIMEOUT_MS = 1000;

/** 'ok' when Redis answers PING within `timeoutMs`, else why not. */
export async function checkRedis(redis: RedisClient, timeoutMs = PING_TIMEOUT_MS): Promise<string> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<string>((resolve) => {
    timer = setTimeout(() => resolve(`no answer to PING within ${timeoutMs} ms`), timeoutMs);
  });
  try {
    return await Promise.race([
      redis.ping().then(
        (reply) => (reply === 'PONG' ? 'ok' : `unexpected PING reply ${reply}`),
        (err: unknown) => `PING failed: ${err instanceof Error ? err.message : String(err)}`,
      ),
      timeout,
    ]);
  } finally {
    clearTimeout(timer);
  }
}

export async function checkWorkerHealth(input: {
  state: WorkerState;
  redis: RedisClient;
  timeoutMs?: number;
}): Promise<WorkerHealth> {
  const redis =
    input.state === 'stopped' || input.state === 'starting'
      ? `not checked (${input.state})`
      : await checkRedis(input.redis, input.timeoutMs);
  return { ready: input.state === 'running' && redis === 'ok', worker: input.state, redis };
}
