/**
 * The ONE schema of the product's configuration: environment variable name → typed value, then one
 * transform into the nested `Config`. Defaults live here and only here (the docs table reads them back).
 * Input is the environment after alias resolution and with empty strings removed (see load-config.ts).
 */
import { z } from 'zod';
import { LOG_FORMATS, LOG_LEVELS } from '../logging/levels.js';
import { hashTagOf, missingHashTagProblem } from '../redis/hash-tag.js';
import { parseRedisUrl } from '../redis/redis-url.js';
import {
  boolean,
  finiteNumber,
  nonNegativeInt,
  oneOf,
  optionalNonNegativeInt,
  optionalText,
  optionalUrl,
  positiveInt,
  positiveNumber,
  redisUrl,
  text,
  url,
} from './fields.js';
import { parseSandboxFunctions } from './sandbox-functions.js';
import type { Config, VefaasConfig } from './types.js';

const SECOND = 1000;
const HTTP = ['http:', 'https:'] as const;

export const EnvSchema = z.object({
  VEFAAS_ACCESS_KEY: optionalText(),
  VEFAAS_SECRET_KEY: optionalText(),
  VEFAAS_FUNCTION_ID: optionalText(),
  VEFAAS_FUNCTION_ROUTE: optionalUrl(HTTP),
  VEFAAS_REGION: text('cn-beijing'),
  VEFAAS_ENDPOINT: url(HTTP, 'https://open.volcengineapi.com'),
  VEFAAS_GATEWAY_KEY: optionalText(),
  VEFAAS_REQUEST_TIMEOUT_MS: positiveInt(30 * SECOND),
  VEFAAS_CREATE_TIMEOUT_S: positiveInt(180),
  VEFAAS_FUNCTIONS: optionalText(),
  VEFAAS_GATEWAY_TIMEOUT_S: positiveInt(650),
  VEFAAS_LOCAL_IMAGES_DIR: optionalText(),
  VEFAAS_LOCAL_ISOLATION: oneOf(['bwrap', 'none', 'emulated'] as const, 'bwrap'),
  REDIS_URL: redisUrl('redis://127.0.0.1:6379'),
  RF_PREFIX: text('{rf}'),
  RF_QUEUE: text('episodes'),
  RF_WORKER_CONCURRENCY: positiveInt(4),
  RF_WORKER_HEAP_MB: optionalNonNegativeInt(),
  RF_WORKER_HEAP_GROWTH_PERCENT: nonNegativeInt(100),
  RF_FLEET_CREATE_RATE: positiveNumber(8),
  RF_FLEET_CREATE_BURST: positiveInt(8),
  RF_FLEET_CREATE_RECOVER_S: positiveInt(300),
  RF_FLEET_MAX_SANDBOXES: positiveInt(200),
  RF_FLEET_MAX_STARTING: positiveInt(64),
  RF_SANDBOX_ACQUIRE_TIMEOUT_S: positiveInt(900),
  RF_WARM_POOL_MAX: nonNegativeInt(0),
  RF_WARM_IDLE_S: positiveInt(300),
  RF_WARM_LOOKAHEAD: nonNegativeInt(256),
  RF_WARM_INTERVAL_MS: positiveInt(1000),
  RF_STRAGGLERS: boolean(true),
  RF_STRAGGLER_TAIL: positiveNumber(0.1),
  RF_STRAGGLER_FACTOR: positiveNumber(3),
  RF_STEP_OUTPUT_LIMIT_BYTES: positiveInt(1024 * 1024),
  RF_EPISODE_OUTPUT_LIMIT_BYTES: positiveInt(8 * 1024 * 1024),
  RF_ARTIFACTS_DIR: optionalText(),
  RF_SWEREX_MAX_RESPONSE_BYTES: positiveInt(16 * 1024 * 1024),
  RF_ATTEMPTS: positiveInt(3),
  RF_BACKOFF_MS: nonNegativeInt(5 * SECOND),
  RF_LEASE_TTL_S: positiveInt(60),
  RF_REAPER_INTERVAL_S: positiveInt(30),
  RF_SHUTDOWN_GRACE_S: positiveInt(30),
  RF_LOCK_DURATION_MS: positiveInt(60_000),
  RF_STALLED_INTERVAL_MS: positiveInt(30_000),
  RF_CANCEL_POLL_MS: positiveInt(1000),
  RF_RESULT_RETENTION_DAYS: positiveInt(14),
  RF_FRESH_EVAL: boolean(true),
  RF_INTEGRITY: oneOf(['strict', 'flag'] as const, 'strict'),
  RF_OUTAGE_WINDOW_S: positiveInt(120),
  RF_OUTAGE_CLEAN_LOSSES: positiveInt(3),
  RF_REWARD_RESOLVED: finiteNumber(1),
  RF_REWARD_UNRESOLVED: finiteNumber(0),
  RF_SANDBOX_IMAGE: optionalText(),
  RF_STARTUP_TIMEOUT_S: positiveInt(180),
  RF_STEP_TIMEOUT_S: positiveInt(300),
  RF_POLICY_MAX_INFLIGHT: positiveInt(64),
  RF_POLICY_BACKOFF_MS: nonNegativeInt(1 * SECOND),
  RF_DASHBOARD_USER: optionalText(),
  RF_DASHBOARD_PASSWORD: optionalText(),
  RF_DASHBOARD_TOKEN: optionalText(),
  RF_DASHBOARD_READ_ONLY: boolean(false),
  RF_METRICS_PUBLIC: boolean(false),
  RF_API_TOKEN: optionalText(),
  RF_API_MAX_BODY_MB: positiveInt(64),
  RF_SESSION_IDLE_S: positiveInt(300),
  LOG_LEVEL: oneOf(LOG_LEVELS, 'info'),
  LOG_FORMAT: oneOf(LOG_FORMATS, 'auto'),
});

export type EnvName = keyof typeof EnvSchema.shape;
type Env = z.output<typeof EnvSchema>;

/** Cloud mode needs all four; any of them alone is a mistake, never a silent fall-back to local. */
export const CLOUD_VARIABLES = [
  'VEFAAS_FUNCTION_ROUTE',
  'VEFAAS_FUNCTION_ID',
  'VEFAAS_ACCESS_KEY',
  'VEFAAS_SECRET_KEY',
] as const satisfies readonly EnvName[];

function checkCloudComplete(env: Record<string, unknown>, ctx: z.RefinementCtx): void {
  const set = CLOUD_VARIABLES.filter((name) => env[name] !== undefined);
  if (set.length === 0 || set.length === CLOUD_VARIABLES.length) return;
  for (const name of CLOUD_VARIABLES.filter((n) => !set.includes(n))) {
    ctx.addIssue({
      code: 'custom',
      path: [name],
      message: `is not set, but ${set.join(' and ')} ${set.length === 1 ? 'is' : 'are'}: real veFaaS needs the function route, function id and key pair; set it, or unset ${set.length === 1 ? 'that' : 'those'} to use the embedded vefaas-local`,
    });
  }
}

/** VEFAAS_FUNCTIONS must parse, and only makes sense with the cloud settings. */
function checkFunctions(env: Record<string, unknown>, ctx: z.RefinementCtx): void {
  const text = env.VEFAAS_FUNCTIONS;
  if (typeof text !== 'string') return;
  try {
    parseSandboxFunctions(text);
  } catch (err) {
    ctx.addIssue({ code: 'custom', path: ['VEFAAS_FUNCTIONS'], message: (err as Error).message });
    return;
  }
  if (CLOUD_VARIABLES.some((name) => env[name] === undefined)) {
    ctx.addIssue({
      code: 'custom',
      path: ['VEFAAS_FUNCTIONS'],
      message:
        'needs the cloud settings (VEFAAS_FUNCTION_ROUTE, VEFAAS_FUNCTION_ID and the key pair): it adds functions to VEFAAS_FUNCTION_ID',
    });
  }
}

/** On a cluster every key of a queue (and of our scripts) must share one slot: the prefix must carry a hash tag. */
function checkClusterPrefix(env: Record<string, unknown>, ctx: z.RefinementCtx): void {
  const { REDIS_URL: redis, RF_PREFIX: prefix } = env;
  if (typeof redis !== 'string' || typeof prefix !== 'string' || !/^rediss?\+cluster:/i.test(redis)) return;
  if (hashTagOf(prefix) === undefined)
    ctx.addIssue({ code: 'custom', path: ['RF_PREFIX'], message: missingHashTagProblem(prefix) });
}

function toVefaas(env: Env): VefaasConfig {
  const common = {
    region: env.VEFAAS_REGION,
    endpoint: env.VEFAAS_ENDPOINT,
    gatewayKey: env.VEFAAS_GATEWAY_KEY,
    requestTimeoutMs: env.VEFAAS_REQUEST_TIMEOUT_MS,
    createTimeoutMs: env.VEFAAS_CREATE_TIMEOUT_S * SECOND,
    gatewayTimeoutS: env.VEFAAS_GATEWAY_TIMEOUT_S,
  };
  const {
    VEFAAS_ACCESS_KEY: accessKeyId,
    VEFAAS_SECRET_KEY: secretAccessKey,
    VEFAAS_FUNCTION_ID: functionId,
    VEFAAS_FUNCTION_ROUTE: functionRoute,
  } = env;
  if (
    accessKeyId !== undefined &&
    secretAccessKey !== undefined &&
    functionId !== undefined &&
    functionRoute !== undefined
  ) {
    const more = env.VEFAAS_FUNCTIONS === undefined ? [] : parseSandboxFunctions(env.VEFAAS_FUNCTIONS);
    return { mode: 'cloud', accessKeyId, secretAccessKey, functionId, functionRoute, moreFunctions: more, ...common };
  }
  return { mode: 'local', imagesDir: env.VEFAAS_LOCAL_IMAGES_DIR, isolation: env.VEFAAS_LOCAL_ISOLATION, ...common };
}

function toConfig(env: Env): Config {
  return {
    vefaas: toVefaas(env),
    redis: parseRedisUrl(env.REDIS_URL),
    queue: { prefix: env.RF_PREFIX, name: env.RF_QUEUE },
    worker: {
      concurrency: env.RF_WORKER_CONCURRENCY,
      heapMb: env.RF_WORKER_HEAP_MB,
      heapGrowthPercent: env.RF_WORKER_HEAP_GROWTH_PERCENT,
      stepOutputLimitBytes: env.RF_STEP_OUTPUT_LIMIT_BYTES,
      episodeOutputLimitBytes: env.RF_EPISODE_OUTPUT_LIMIT_BYTES,
      ...(env.RF_ARTIFACTS_DIR === undefined ? {} : { artifactsDir: env.RF_ARTIFACTS_DIR }),
      swerexMaxResponseBytes: env.RF_SWEREX_MAX_RESPONSE_BYTES,
      attempts: env.RF_ATTEMPTS,
      backoffMs: env.RF_BACKOFF_MS,
      leaseTtlS: env.RF_LEASE_TTL_S,
      reaperIntervalS: env.RF_REAPER_INTERVAL_S,
      shutdownGraceS: env.RF_SHUTDOWN_GRACE_S,
      lockDurationMs: env.RF_LOCK_DURATION_MS,
      stalledIntervalMs: env.RF_STALLED_INTERVAL_MS,
      cancelPollMs: env.RF_CANCEL_POLL_MS,
      resultRetentionDays: env.RF_RESULT_RETENTION_DAYS,
      freshEval: env.RF_FRESH_EVAL,
      integrity: env.RF_INTEGRITY,
      outageWindowS: env.RF_OUTAGE_WINDOW_S,
      outageCleanLosses: env.RF_OUTAGE_CLEAN_LOSSES,
      rewardResolved: env.RF_REWARD_RESOLVED,
      rewardUnresolved: env.RF_REWARD_UNRESOLVED,
    },
    supply: {
      createRate: env.RF_FLEET_CREATE_RATE,
      createBurst: env.RF_FLEET_CREATE_BURST,
      createRecoverS: env.RF_FLEET_CREATE_RECOVER_S,
      maxSandboxes: env.RF_FLEET_MAX_SANDBOXES,
      maxStarting: env.RF_FLEET_MAX_STARTING,
      acquireTimeoutS: env.RF_SANDBOX_ACQUIRE_TIMEOUT_S,
      warmPoolMax: env.RF_WARM_POOL_MAX,
      warmIdleS: env.RF_WARM_IDLE_S,
      warmLookahead: env.RF_WARM_LOOKAHEAD,
      warmIntervalMs: env.RF_WARM_INTERVAL_MS,
      stragglers: env.RF_STRAGGLERS,
      stragglerTail: env.RF_STRAGGLER_TAIL,
      stragglerFactor: env.RF_STRAGGLER_FACTOR,
    },
    sandbox: {
      image: env.RF_SANDBOX_IMAGE,
      startupTimeoutS: env.RF_STARTUP_TIMEOUT_S,
      stepTimeoutS: env.RF_STEP_TIMEOUT_S,
    },
    policy: { maxInflight: env.RF_POLICY_MAX_INFLIGHT, backoffMs: env.RF_POLICY_BACKOFF_MS },
    dashboard: {
      user: env.RF_DASHBOARD_USER,
      password: env.RF_DASHBOARD_PASSWORD,
      token: env.RF_DASHBOARD_TOKEN,
      readOnly: env.RF_DASHBOARD_READ_ONLY,
      metricsPublic: env.RF_METRICS_PUBLIC,
    },
    api: {
      token: env.RF_API_TOKEN,
      maxBodyBytes: env.RF_API_MAX_BODY_MB * 1024 * 1024,
      sessionIdleS: env.RF_SESSION_IDLE_S,
    },
    log: { level: env.LOG_LEVEL, format: env.LOG_FORMAT },
  };
}

// `when` runs the completeness check even when other fields failed, so one error lists every problem.
export const ConfigSchema = EnvSchema.superRefine(checkCloudComplete, { when: () => true })
  .superRefine(checkFunctions, { when: () => true })
  .superRefine(checkClusterPrefix, { when: () => true })
  .transform(toConfig);
