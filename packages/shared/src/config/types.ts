import type { LogFormat, LogLevel } from '../logging/levels.js';
import type { SandboxFunction } from './sandbox-functions.js';
import type { RedisConfig } from '../redis/redis-url.js';

/** Settings that apply to both veFaaS modes. */
interface VefaasCommonConfig {
  /** Control-plane region. @defaultValue 'cn-beijing' */
  region: string;
  /** Control-plane endpoint (OpenAPI host), no trailing slash. @defaultValue 'https://open.volcengineapi.com' */
  endpoint: string;
  /** API-gateway key sent with data-plane requests, when the gateway demands one. */
  gatewayKey: string | undefined;
  /** Timeout of one control-plane HTTP request, milliseconds. @defaultValue 30_000 */
  requestTimeoutMs: number;
  /**
   * Timeout of one CreateSandbox call, milliseconds: it answers only once the instance is assigned (cold
   * starts). A create that timed out is looked up by its label and adopted or killed, never blindly retried.
   * @defaultValue 180_000
   */
  createTimeoutMs: number;
  /** The function's execution timeout at the gateway, seconds. @defaultValue 650 */
  gatewayTimeoutS: number;
}

/** Real veFaaS: all four of route, function id and the key pair are set. */
export interface VefaasCloudConfig extends VefaasCommonConfig {
  mode: 'cloud';
  accessKeyId: string;
  secretAccessKey: string;
  functionId: string;
  /** Gateway route URL of the sandbox application, no trailing slash. */
  functionRoute: string;
  /** More sandbox applications (VEFAAS_FUNCTIONS), e.g. other regions; the one above is `default`, weight 1. */
  moreFunctions: SandboxFunction[];
}

/** None of the cloud settings are set: the embedded vefaas-local is used. */
export interface VefaasLocalConfig extends VefaasCommonConfig {
  mode: 'local';
  /** Image template directories of the embedded vefaas-local. @defaultValue the repository's examples/images */
  imagesDir: string | undefined;
  /** How the embedded vefaas-local isolates sandboxes. @defaultValue 'bwrap' */
  isolation: 'bwrap' | 'none' | 'emulated';
}

export type VefaasConfig = VefaasCloudConfig | VefaasLocalConfig;

/** The whole product's configuration, as returned by `loadConfig`. */
export interface Config {
  vefaas: VefaasConfig;
  /** REDIS_URL, parsed: one server, or a cluster's seed nodes (create connections with `createRedis`). */
  redis: RedisConfig;
  queue: {
    /** BullMQ key prefix; the braces make it a Redis Cluster hash tag. @defaultValue '{rf}' */
    prefix: string;
    /** BullMQ queue name. @defaultValue 'episodes' */
    name: string;
  };
  worker: {
    /** Episodes run at once per worker process. @defaultValue 4 */
    concurrency: number;
    /** V8 old-generation budget of a `rollout-fleet worker` process, MB; unset or 0 = V8's own limit. Applied by
     * bin/worker-heap.js before the heap exists (from the same environment over `.env`); here it is validated. @defaultValue undefined (none: V8's own limit) */
    heapMb: number | undefined;
    /**
     * How far V8 lets the worker's heap grow past what survived its last major collection before the next one,
     * percent (V8's `--heap-growing-percent`, set by `rollout-fleet worker` at start); 0 = V8's own choice (up to
     * 300 % for a heap with a GB limit). 100 keeps a worker at concurrency 1,000 under 300 MB RSS for a few more
     * (short) major collections. @defaultValue 100
     */
    heapGrowthPercent: number;
    /** Each step output, and the eval log, kept whole up to this size, then head + marker + tail. @defaultValue 1 MiB */
    stepOutputLimitBytes: number;
    /**
     * What one episode's result keeps of step outputs and the eval log together; the eval log's share
     * (stepOutputLimitBytes) is set aside first. @defaultValue 8 MiB
     */
    episodeOutputLimitBytes: number;
    /** Where workers write every result's whole logs and patch (a directory, shared if several hosts read it); unset: nowhere. */
    artifactsDir?: string;
    /** Longest output kept from one SWE-ReX answer while it is read (head + marker + tail beyond), bytes. @defaultValue 16 MiB */
    swerexMaxResponseBytes: number;
    /** Job attempts for infra failures. @defaultValue 3 */
    attempts: number;
    /** First retry delay (exponential), milliseconds. @defaultValue 5_000 */
    backoffMs: number;
    leaseTtlS: number;
    reaperIntervalS: number;
    shutdownGraceS: number;
    /** BullMQ job lock, renewed every half of it while an episode runs; a dead worker's job is
     * taken over after about lock + stalled interval. @defaultValue 60_000 */
    lockDurationMs: number;
    /** How often BullMQ looks for stalled jobs. @defaultValue 30_000 */
    stalledIntervalMs: number;
    /** How often running episodes are checked for a cancel, force or retry, ms. @defaultValue 1000 */
    cancelPollMs: number;
    resultRetentionDays: number;
    /**
     * Grade in a fresh sandbox from the image with the patch applied, as SWE-bench does. false grades in the
     * agent's own sandbox, which an adversarial policy can rig (docs/adversarial-grading.md). @defaultValue true
     */
    freshEval: boolean;
    /**
     * `strict`: a grade with a `violated` integrity finding is unresolved, reward for unresolved; `flag`: the
     * finding is only recorded (docs/adversarial-grading.md, "The integrity flag"). @defaultValue 'strict'
     */
    integrity: 'strict' | 'flag';
    /** The fleet-wide window in which clean sandbox losses count towards an outage, seconds. @defaultValue 120 */
    outageWindowS: number;
    /** Clean sandbox losses (no model command ran) of distinct episodes within the window that make an outage. @defaultValue 3 */
    outageCleanLosses: number;
    rewardResolved: number;
    rewardUnresolved: number;
  };
  /** The fleet-wide sandbox supply: every limit here is shared state in Redis, not per process. */
  supply: {
    /** CreateSandbox calls per second across all workers (the ceiling of the adaptive rate). @defaultValue 8 */
    createRate: number;
    /** Creates that may go at once after a quiet spell. @defaultValue 8 */
    createBurst: number;
    /** After a 429 halved the rate, seconds to climb linearly back to the full rate. @defaultValue 300 */
    createRecoverS: number;
    /** Live sandboxes across the fleet (episode, eval, warm, session). @defaultValue 200 */
    maxSandboxes: number;
    /** Sandboxes being created or started across the fleet. @defaultValue 64 */
    maxStarting: number;
    /** Longest total wait for a sandbox (rate, caps, 429 back-off) before it is an infra failure. @defaultValue 900 */
    acquireTimeoutS: number;
    /** Ready + starting warm sandboxes across the fleet; 0 = no warm pool. @defaultValue 0 */
    warmPoolMax: number;
    /** A warm sandbox nobody claims within this is killed, seconds. @defaultValue 300 */
    warmIdleS: number;
    /** Waiting jobs the warm pool looks ahead at. @defaultValue 256 */
    warmLookahead: number;
    /** How often each worker's warm-pool filler looks at demand, ms. @defaultValue 1000 */
    warmIntervalMs: number;
    /** Start backup attempts for stragglers in a run's tail. @defaultValue true */
    stragglers: boolean;
    /** The tail: at most this fraction of the run's episodes left. @defaultValue 0.1 */
    stragglerTail: number;
    /** A straggler runs longer than this × the run's p90 episode time. @defaultValue 3 */
    stragglerFactor: number;
  };
  sandbox: {
    /** Image used when an episode names none. */
    image: string | undefined;
    startupTimeoutS: number;
    stepTimeoutS: number;
  };
  policy: {
    /** Requests in flight at once to one policy endpoint, fleet-wide (a Redis semaphore). @defaultValue 64 */
    maxInflight: number;
    /** First wait before a failed policy request is sent again (exponential, full jitter, capped at 30 s), ms. @defaultValue 1_000 */
    backoffMs: number;
  };
  dashboard: {
    user: string | undefined;
    password: string | undefined;
    token: string | undefined;
    readOnly: boolean;
    metricsPublic: boolean;
  };
  api: {
    /** Bearer token every API request must carry; undefined = open, loopback only. */
    token: string | undefined;
    /** Largest accepted request body, bytes. @defaultValue 64 MiB */
    maxBodyBytes: number;
    /** Idle time after which a session's sandbox is released, seconds. @defaultValue 300 */
    sessionIdleS: number;
  };
  log: { level: LogLevel; format: LogFormat };
}
