/**
 * What each configuration variable means, for people: rendered into the README table. Types and
 * defaults come from schema.ts; `satisfies Record<EnvName, ...>` keeps the two in step.
 */
import { EnvSchema, type EnvName } from './schema.js';

interface VariableDoc {
  /** Other spellings accepted, in priority order after the canonical name (first set wins). */
  readonly aliases?: readonly string[];
  readonly meaning: string;
  /** Never logged, never echoed in errors. */
  readonly secret?: boolean;
}

const DOCS = {
  VEFAAS_ACCESS_KEY: {
    aliases: ['VOLCE_ACCESS_KEY', 'VOLCENGINE_ACCESS_KEY'],
    secret: true,
    meaning: 'Access key id (AK) for the veFaaS control plane.',
  },
  VEFAAS_SECRET_KEY: {
    aliases: ['VOLCE_SECRET_KEY', 'VOLCENGINE_SECRET_KEY'],
    secret: true,
    meaning: 'Secret access key (SK) matching the access key.',
  },
  VEFAAS_FUNCTION_ID: { meaning: 'Sandbox application (function) id.' },
  VEFAAS_FUNCTION_ROUTE: {
    meaning:
      'Access address (API-gateway route URL) of the sandbox application. Route, function id and key pair all set → real veFaaS; none set → the embedded vefaas-local; anything in between is an error.',
  },
  VEFAAS_REGION: { meaning: 'Control-plane region.' },
  VEFAAS_ENDPOINT: { meaning: 'Control-plane endpoint; BytePlus: `https://open.byteplusapi.com`.' },
  VEFAAS_GATEWAY_KEY: { secret: true, meaning: 'API-gateway key, when the gateway service requires one.' },
  VEFAAS_REQUEST_TIMEOUT_MS: { meaning: 'Timeout of one control-plane request, milliseconds.' },
  VEFAAS_FUNCTIONS: {
    meaning:
      'More sandbox applications besides VEFAAS_FUNCTION_ID (other regions), a JSON list: `[{"id":"shanghai","function_id":"…","route":"https://…","weight":1,"region":"cn-shanghai","endpoint":"https://…","create_rate":8}]` (weight, region, endpoint, create_rate optional). Creates are spread by weight; one that keeps answering errors or 429s is drained for a while.',
  },
  VEFAAS_CREATE_TIMEOUT_S: {
    meaning:
      'Timeout of one CreateSandbox call (it answers once the instance is assigned), seconds. A timed-out create is found by its label and adopted or killed, never blindly retried.',
  },
  VEFAAS_LOCAL_IMAGES_DIR: {
    meaning: "Image directories for the embedded vefaas-local (default: the repository's examples/images).",
  },
  VEFAAS_LOCAL_ISOLATION: {
    meaning:
      'Sandbox isolation of the embedded vefaas-local: bwrap, none (no isolation, loud warning) or emulated (no processes).',
  },
  VEFAAS_GATEWAY_TIMEOUT_S: { meaning: 'Execution timeout of the sandbox application at the gateway, seconds.' },
  REDIS_URL: {
    meaning:
      'Redis for the queue, leases and results: one server as `redis://[user:password@]host:port[/db]` (`rediss://` for TLS), or a Redis Cluster as `redis+cluster://[user:password@]host:port[,host:port…]` (`rediss+cluster://` for TLS; any reachable nodes, the rest are discovered). On a cluster `RF_PREFIX` must keep its braces.',
  },
  RF_PREFIX: {
    meaning:
      'Key prefix of the queue and every other key; the part in braces is a Redis Cluster hash tag that keeps them in one slot (required on a cluster).',
  },
  RF_QUEUE: { meaning: 'BullMQ queue name for episodes.' },
  RF_WORKER_CONCURRENCY: { meaning: 'Episodes run at once per worker process.' },
  RF_WORKER_HEAP_MB: {
    meaning:
      "V8 old-generation budget of a `rollout-fleet worker` process, MB; unset or 0: none (V8's own limit, GBs). When set, the worker runs in a thread created with this limit (and a 96 MB young generation), so its heap stays near what it holds instead of growing to ~4× between collections — at a cost: bench:concurrency at concurrency 1,000 with 191: peak RSS 296–298 MB instead of 459–461, but 10–25 % more worker CPU per episode, 3–7 % fewer episodes/s and event-loop delay p99 131–236 ms instead of 50–52 (bench/README.md). `--max-old-space-size` given to node wins. A worker that outgrows it exits with code 1 saying so.",
  },
  RF_WORKER_HEAP_GROWTH_PERCENT: {
    meaning:
      "How far V8 lets a `rollout-fleet worker` heap grow past what survived its last major collection before collecting again, percent (V8's `--heap-growing-percent`, set at start); 0: V8's own choice, up to 300 %. Unlike a heap budget it sets no limit: a worker that holds more just collects more often. At 100 a worker at concurrency 1,000 (bench:concurrency, 2026-12-01) peaked at 276–289 MB RSS instead of 439–442 MB with V8's own growth, for 10 major collections instead of 4 (pauses ≤ 14 ms), 0–7 % more CPU per episode and an event-loop delay p99 of 18–24 ms instead of 13–16 ms; figures in bench/README.md.",
  },
  RF_FLEET_CREATE_RATE: {
    meaning:
      "CreateSandbox calls per second across the whole fleet (fractions allowed; 500/min ≈ 8.3). A 429 halves the fleet's rate; it climbs back over RF_FLEET_CREATE_RECOVER_S.",
  },
  RF_FLEET_CREATE_BURST: { meaning: 'CreateSandbox calls the fleet may make at once after a quiet spell.' },
  RF_FLEET_CREATE_RECOVER_S: {
    meaning:
      "After a platform 429 lowered the fleet's create rate, seconds to climb linearly back to RF_FLEET_CREATE_RATE.",
  },
  RF_FLEET_MAX_SANDBOXES: {
    meaning:
      "Live sandboxes across the fleet (episodes, eval, warm pool, API sessions); leases expire, so a dead worker's slots free themselves.",
  },
  RF_FLEET_MAX_STARTING: { meaning: 'Sandboxes being created or started at once across the fleet.' },
  RF_WARM_POOL_MAX: {
    meaning:
      "Warm sandboxes (ready or starting) the fleet keeps ahead of demand: the next waiting jobs' images and what runs announced (`submit --announce`); within the caps and only with create slots nobody else needs. 0 = off (warm sandboxes cost sandbox time while they wait). A worker setting: each worker publishes it (`rf_warm_pool_max`), and `submit --announce` warns when no live worker keeps a pool.",
  },
  RF_WARM_IDLE_S: { meaning: 'A warm sandbox nobody claims within this many seconds is killed.' },
  RF_WARM_LOOKAHEAD: { meaning: 'How many waiting jobs the warm pool looks ahead at.' },
  RF_WARM_INTERVAL_MS: { meaning: "How often each worker's warm pool looks at demand, milliseconds." },
  RF_STRAGGLERS: {
    meaning:
      "Start a backup attempt (in another sandbox, within the caps) for an episode straggling in its run's tail; the first to finish is the result, the other is stopped and its sandbox killed. At most 5 % of a run's episodes (at least one) get a backup.",
  },
  RF_STRAGGLER_TAIL: { meaning: "Backups only once at most this fraction of the run's episodes is left." },
  RF_STRAGGLER_FACTOR: {
    meaning: "A straggler has run longer than this × the run's p90 episode time (over at least 10 completed episodes).",
  },
  RF_SANDBOX_ACQUIRE_TIMEOUT_S: {
    meaning:
      'Longest total wait for a sandbox (create rate, caps, 429 back-off) before the attempt fails as infrastructure; waiting itself never spends an attempt.',
  },
  RF_STEP_OUTPUT_LIMIT_BYTES: {
    meaning:
      'Each step output, and the eval log a graded result carries (`grading.log`), kept whole up to this many bytes, else head + marker + tail (results are stored compressed in Redis).',
  },
  RF_ARTIFACTS_DIR: {
    meaning:
      "A directory where workers write each result's whole eval log, patch, eval script and step outputs (`<run>/<episode>/<sample>/attempt-<n>-<id>/`), the result's `artifacts` pointing at them; `results --format swebench --out` reads the whole eval log there when the result's copy was cut. Unset: no files.",
  },
  RF_EPISODE_OUTPUT_LIMIT_BYTES: {
    meaning:
      "What one episode's result keeps of its step outputs and eval log together, bytes: the eval log keeps up to RF_STEP_OUTPUT_LIMIT_BYTES whatever the steps printed; the steps share the rest, and once it is spent each later step keeps 1 KiB (head + marker + tail).",
  },
  RF_SWEREX_MAX_RESPONSE_BYTES: {
    meaning:
      "Longest command output kept from one SWE-ReX answer while it is read: beyond it the head and tail are kept around a marker, so a step that prints 500 MB cannot exhaust the worker's memory, bytes.",
  },
  RF_ATTEMPTS: { meaning: 'Attempts per episode for infrastructure failures.' },
  RF_BACKOFF_MS: { meaning: 'First retry delay (exponential back-off), milliseconds.' },
  RF_LEASE_TTL_S: { meaning: 'Sandbox lease lifetime without a heartbeat, seconds.' },
  RF_REAPER_INTERVAL_S: {
    meaning:
      'How often the reaper kills sandboxes without a live lease, seconds; also how often a worker puts back forced or retried episodes left without a job (a requeuer that died).',
  },
  RF_SHUTDOWN_GRACE_S: {
    meaning: 'On SIGTERM, how long running episodes may finish before they are handed back, seconds.',
  },
  RF_CANCEL_POLL_MS: {
    meaning:
      'How often a worker checks whether its running episodes were cancelled, forced or retried (they stop within about this long), milliseconds.',
  },
  RF_RESULT_RETENTION_DAYS: { meaning: 'Days finished jobs and results are kept in Redis.' },
  RF_LOCK_DURATION_MS: {
    meaning:
      "BullMQ job lock in milliseconds, renewed every half of it while an episode runs; a killed worker's episode is taken over after about lock + stalled interval.",
  },
  RF_STALLED_INTERVAL_MS: { meaning: "How often workers look for stalled jobs (a dead worker's), milliseconds." },
  RF_FRESH_EVAL: {
    meaning:
      'Grade each patch in a fresh sandbox of the same image, as SWE-bench does. `false` grades in the sandbox the trajectory ran in: unsafe against adversarial policies (docs/adversarial-grading.md).',
  },
  RF_INTEGRITY: {
    meaning:
      '`strict`: a grade with a `violated` integrity finding (forged or missing result channel, markers without the nonce, a timed-out eval) is unresolved with the unresolved reward; `flag`: the finding is only recorded in the result (docs/adversarial-grading.md).',
  },
  RF_OUTAGE_WINDOW_S: {
    meaning:
      'Window, seconds, of the fleet-wide ledger of clean sandbox losses (no model command had run): a sandbox lost after model commands within it of an outage is infra (null), never the model’s 0.',
  },
  RF_OUTAGE_CLEAN_LOSSES: {
    meaning:
      'Clean sandbox losses of distinct episodes within RF_OUTAGE_WINDOW_S that make an outage (docs/adversarial-grading.md, "Never 0 for infra").',
  },
  RF_REWARD_RESOLVED: { meaning: 'Reward of a resolved episode.' },
  RF_REWARD_UNRESOLVED: { meaning: 'Reward of a graded, unresolved episode (infrastructure failures get no reward).' },
  RF_SANDBOX_IMAGE: { meaning: 'Sandbox image for episodes that name none.' },
  RF_STARTUP_TIMEOUT_S: { meaning: 'Default wait for the SWE-ReX server to come alive, seconds.' },
  RF_STEP_TIMEOUT_S: { meaning: 'Default per-step (per-command) timeout, seconds.' },
  RF_POLICY_MAX_INFLIGHT: {
    meaning:
      'Chat-completion requests in flight at once to one policy endpoint (`policy.base_url`), across the whole fleet; a turn waits for a slot (not an error). Slots of a dead worker expire within 30 s.',
  },
  RF_POLICY_BACKOFF_MS: {
    meaning:
      'First wait before a policy request that failed for infrastructure reasons (connection, timeout, 429, 5xx) is sent again, milliseconds; doubles per retry (full jitter, at most 30 s), a Retry-After answer is honoured.',
  },
  RF_DASHBOARD_USER: { meaning: 'Dashboard basic-auth user.' },
  RF_DASHBOARD_PASSWORD: { secret: true, meaning: 'Dashboard basic-auth password.' },
  RF_DASHBOARD_TOKEN: { secret: true, meaning: 'Dashboard bearer token (alternative to user + password).' },
  RF_DASHBOARD_READ_ONLY: { meaning: "Hide the dashboard's retry/cancel/clean actions." },
  RF_METRICS_PUBLIC: { meaning: 'Serve `/metrics` without dashboard authentication.' },
  RF_API_TOKEN: {
    secret: true,
    meaning:
      'Bearer token of `rollout-fleet api`; required on every request when set. Without it the API listens on a loopback address only.',
  },
  RF_API_MAX_BODY_MB: { meaning: 'Largest request body `rollout-fleet api` accepts (a submitted run), MiB.' },
  RF_SESSION_IDLE_S: {
    meaning:
      'An API session (a leased sandbox) that receives no call for this long is closed and its sandbox killed, seconds.',
  },
  LOG_LEVEL: { meaning: 'trace, debug, info, warn, error, fatal or silent.' },
  LOG_FORMAT: { meaning: '`auto` (pretty on a terminal, JSON lines otherwise), `json` or `pretty`.' },
} as const satisfies Record<EnvName, VariableDoc>;

export interface ConfigVariable {
  readonly name: EnvName;
  readonly aliases: readonly string[];
  /** The default as text; undefined when the variable has none (unset means "not used"). */
  readonly default: string | undefined;
  readonly meaning: string;
  readonly secret: boolean;
}

function defaultOf(name: EnvName): string | undefined {
  const value: unknown = EnvSchema.shape[name].parse(undefined);
  return value === undefined ? undefined : String(value);
}

/** Every configuration variable, in schema order. */
export const CONFIG_VARIABLES: readonly ConfigVariable[] = (Object.keys(EnvSchema.shape) as EnvName[]).map((name) => {
  const doc: VariableDoc = DOCS[name];
  return {
    name,
    aliases: doc.aliases ?? [],
    default: defaultOf(name),
    meaning: doc.meaning,
    secret: doc.secret ?? false,
  };
});
