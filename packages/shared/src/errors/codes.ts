/**
 * The one table of failure codes. Each code decides, here and nowhere else:
 * - `class`: who is to blame, decided by one rule: whatever the model (the trajectory or the policy) can cause
 *   is `model` — it becomes an observation of the step, or it is graded (reward by the rule, 0 or 1), never
 *   retried and never null; whatever our infrastructure or the platform causes is `infra` — retried at the
 *   job level and, if it persists, a failed result with reward null, never 0; `input` failures are the
 *   episode's or the user's doing (bad payload, cancel) and are never retried (reward null).
 *   Where one server error can come from either side, the call site decides (e.g. a session that fails to
 *   start is infra at sandbox start, model after the model broke its shell) and picks the code that says so.
 * - `retryable`: whether the same request may succeed if sent again (request-level retry policy).
 */
export type FailureClass = 'infra' | 'model' | 'input';

interface CodeSpec {
  readonly class: FailureClass;
  readonly retryable: boolean;
  /** What a person should do about it; shown in CLI errors. */
  readonly hint: string;
}

export const ERROR_CODES = {
  // veFaaS control plane
  VEFAAS_THROTTLED: {
    class: 'infra',
    retryable: true,
    hint: 'create rate exceeded; lower create concurrency or ask for a higher quota',
  },
  VEFAAS_SERVER_ERROR: {
    class: 'infra',
    retryable: true,
    hint: 'the veFaaS control plane answered 5xx; it is retried with back-off',
  },
  VEFAAS_NETWORK: {
    class: 'infra',
    retryable: true,
    hint: 'the control-plane endpoint could not be reached; check VEFAAS_ENDPOINT and the network',
  },
  VEFAAS_TIMEOUT: { class: 'infra', retryable: true, hint: 'the control plane did not answer in time' },
  VEFAAS_AUTH: {
    class: 'infra',
    retryable: false,
    hint: 'check VEFAAS_ACCESS_KEY / VEFAAS_SECRET_KEY and the machine clock',
  },
  VEFAAS_NOT_FOUND: {
    class: 'infra',
    retryable: false,
    hint: 'the sandbox or function does not exist (already killed or expired?)',
  },
  VEFAAS_BAD_REQUEST: {
    class: 'input',
    retryable: false,
    hint: 'the request was rejected as invalid; check the sandbox spec (image, command, timeout)',
  },
  VEFAAS_API_ERROR: { class: 'infra', retryable: false, hint: 'the control plane returned an unexpected error' },
  // sandbox lifecycle
  SANDBOX_START_FAILED: { class: 'infra', retryable: true, hint: 'the sandbox reported Failed while starting' },
  // veFaaS reports an image it cannot start (function_initialize_failed) at the first create: a missing,
  // misspelled or not pre-cached image fails the same way every time, so it is configuration, never retried.
  SANDBOX_IMAGE_UNAVAILABLE: {
    class: 'input',
    retryable: false,
    hint: "the sandbox image could not be started (missing, misspelled or not pre-cached on veFaaS): check the episode's sandbox.image (or --image / --image-template) and try it with `rollout-fleet doctor --image <image>`",
  },
  SANDBOX_START_TIMEOUT: {
    class: 'infra',
    retryable: true,
    hint: 'the sandbox did not become alive within the startup timeout',
  },
  SANDBOX_DEAD: { class: 'infra', retryable: false, hint: 'the sandbox instance is gone (killed, expired or crashed)' },
  SANDBOX_ACQUIRE_TIMEOUT: {
    class: 'infra',
    retryable: true,
    hint: 'no sandbox within RF_SANDBOX_ACQUIRE_TIMEOUT_S (fleet create rate, caps or platform throttling); raise the limits or the timeout',
  },
  SANDBOX_IDLE: {
    class: 'infra',
    retryable: false,
    hint: 'the sandbox was released after sitting idle longer than its idle timeout',
  },
  // data plane (gateway + SWE-ReX)
  GATEWAY_ERROR: { class: 'infra', retryable: true, hint: 'the API gateway answered 5xx' },
  GATEWAY_AUTH: {
    class: 'infra',
    retryable: false,
    hint: 'the API gateway rejected the gateway key; check VEFAAS_GATEWAY_KEY',
  },
  SWEREX_AUTH: { class: 'infra', retryable: false, hint: 'the SWE-ReX server rejected the X-API-Key' },
  SWEREX_NETWORK: { class: 'infra', retryable: true, hint: 'the SWE-ReX server could not be reached' },
  SWEREX_TIMEOUT: {
    class: 'infra',
    retryable: true,
    hint: 'the SWE-ReX server did not answer within the HTTP timeout',
  },
  SWEREX_HTTP: { class: 'infra', retryable: false, hint: 'the SWE-ReX server answered with an unexpected HTTP status' },
  SWEREX_COMMAND_TIMEOUT: { class: 'model', retryable: false, hint: 'the command did not finish within its timeout' },
  SWEREX_BASH_SYNTAX: { class: 'model', retryable: false, hint: 'the command is not valid bash' },
  SWEREX_NONZERO_EXIT: { class: 'model', retryable: false, hint: 'the command exited non-zero' },
  // A command can leave the terminal unable to print the exit-code sentinel (exec >/dev/null, stty, endless output).
  SWEREX_NO_EXIT_CODE: {
    class: 'model',
    retryable: false,
    hint: 'the session lost track of the exit code after a command',
  },
  SWEREX_SESSION_MISSING: { class: 'infra', retryable: false, hint: 'the bash session does not exist in the sandbox' },
  SWEREX_SESSION_EXISTS: { class: 'infra', retryable: false, hint: 'a bash session with that name already exists' },
  // The model's command ignores Ctrl-C / Ctrl-Z, or replaced the shell: a new session is started.
  SWEREX_INTERRUPT_FAILED: {
    class: 'model',
    retryable: false,
    hint: 'the session could not be interrupted after a timeout; a new session is started',
  },
  // `exit`, `kill -9 $$`, an `exec` that ends: the shell is gone, the sandbox is not; a new session is started.
  SWEREX_SESSION_ENDED: {
    class: 'model',
    retryable: false,
    hint: 'a command ended the bash session; a new session is started',
  },
  SWEREX_RUNTIME: { class: 'model', retryable: false, hint: 'the runtime raised an error while executing the request' },
  // episodes
  STEP_TIMEOUT: {
    class: 'model',
    retryable: false,
    hint: 'a step exceeded its step timeout; recorded as an observation',
  },
  TOOL_ERROR: {
    class: 'model',
    retryable: false,
    hint: 'a tool call was unknown or malformed; recorded as an observation',
  },
  SESSION_RESTART_FAILED: {
    class: 'model',
    retryable: false,
    hint: 'after the model broke its shell no new session would start (e.g. a poisoned ~/.bashrc); later steps were not run',
  },
  // One of our set-up commands in a new session gave no readable outcome (its end marker never came back): a
  // sandbox too slow for the session, or a shell that prints prompts out of turn. AgentEnv replaces the session
  // (3 in all) and only then decides: SANDBOX_START_FAILED at the first start, SESSION_RESTART_FAILED after a restart.
  SESSION_SETUP_AMBIGUOUS: {
    class: 'infra',
    retryable: true,
    hint: 'a set-up command in a new bash session gave no readable outcome; the session is replaced',
  },
  // The end-of-episode sync never saw its marker while the sandbox itself answered: the model's shell prints
  // prompts out of turn or its last command still runs. The patch is taken as the tree stands and graded.
  SESSION_OUT_OF_SYNC: {
    class: 'model',
    retryable: false,
    hint: 'the shell never caught up with the commands sent to it before the patch was taken (prompts printed out of turn, a command still running); graded on the tree as it stood',
  },
  EPISODE_DEADLINE: {
    class: 'model',
    retryable: false,
    hint: 'the steps used up the episode deadline; the rest was not run and the patch so far was graded',
  },
  ATTEMPT_DEADLINE: {
    class: 'infra',
    retryable: true,
    hint: 'the attempt overran its hard bound (episode deadline + sandbox starts + grading); retried',
  },
  PATCH_EXTRACTION_FAILED: {
    class: 'model',
    retryable: false,
    hint: 'the patch could not be taken from the repository the model left (deleted .git, full disk, huge patch); graded as no patch',
  },
  SANDBOX_LOST_IN_STEP: {
    class: 'model',
    retryable: false,
    hint: 'the sandbox died during the same step in every attempt (the step kills its own server); graded as no patch',
  },
  // A sandbox (or its session) lost after the model's commands ran, in every attempt, at any step, while settling
  // or during extraction, with no sign of a platform outage: killing one's own sandbox must not buy a null.
  SANDBOX_LOST_AFTER_MODEL: {
    class: 'model',
    retryable: false,
    hint: "the sandbox or its session was lost after the model's commands ran, in every attempt, with no sign of a platform outage; graded as no patch",
  },
  EVAL_SANDBOX_LOST: {
    class: 'model',
    retryable: false,
    hint: "the grading sandbox died twice while this patch's tests ran; graded unresolved as SWE-bench does",
  },
  GRADING_FAILED: { class: 'infra', retryable: true, hint: 'grading could not run (not a test failure)' },
  ATTEMPT_SUPERSEDED: {
    class: 'infra',
    retryable: false,
    hint: 'a backup attempt of the same episode committed first; this one was stopped and its sandbox killed',
  },
  LEASE_LOST: { class: 'infra', retryable: true, hint: 'the sandbox lease expired or was taken over' },
  JOB_LOCK_LOST: {
    class: 'infra',
    retryable: true,
    hint: 'the worker lost the job lock; the attempt stopped and its sandbox was killed (another worker takes the job)',
  },
  JOB_STALLED: {
    class: 'infra',
    retryable: false,
    hint: 'workers died running this job more often than allowed (maxStalledCount)',
  },
  SUPERSEDED: {
    class: 'infra',
    retryable: true,
    hint: 'the episode was forced or retried while running; this execution stopped and the job runs again',
  },
  WORKER_SHUTDOWN: {
    class: 'infra',
    retryable: true,
    hint: 'the worker shut down mid-episode; the job is handed back',
  },
  // policy endpoint (OpenAI-compatible chat completions). Infra: retried per turn with back-off, never charged to
  // the model's turn budget; when retries run out the attempt fails (reward null) and the job is retried.
  POLICY_NETWORK: {
    class: 'infra',
    retryable: true,
    hint: 'the policy endpoint could not be reached or dropped the connection; check policy.base_url and the inference server',
  },
  POLICY_TIMEOUT: {
    class: 'infra',
    retryable: true,
    hint: 'the policy endpoint did not answer within policy.limits.request_timeout_s',
  },
  POLICY_THROTTLED: {
    class: 'infra',
    retryable: true,
    hint: 'the policy endpoint answered 429; lower RF_POLICY_MAX_INFLIGHT or add inference capacity',
  },
  POLICY_SERVER_ERROR: {
    class: 'infra',
    retryable: true,
    hint: 'the policy endpoint answered 5xx or reported an engine error (finish_reason "error"/"abort")',
  },
  POLICY_BAD_RESPONSE: {
    class: 'infra',
    retryable: true,
    hint: 'the policy endpoint answered 200 with a body that is not a chat completion',
  },
  // Model-caused ends of a policy episode: graded on the current diff.
  POLICY_CONTEXT_OVERFLOW: {
    class: 'model',
    retryable: false,
    hint: 'the conversation outgrew the model context; the episode ends as exit_context and is graded',
  },
  POLICY_FORMAT_ERROR: {
    class: 'model',
    retryable: false,
    hint: 'the model reply had no valid tool call; it is shown a format error (exit_format after the cap)',
  },
  POLICY_BLOCKED_COMMAND: {
    class: 'model',
    retryable: false,
    hint: "an interactive program on SWE-agent's blocklist; the model is told it is not supported",
  },
  // Configuration of the policy block or endpoint: fail fast, never retried, never charged to the model.
  POLICY_REJECTED: {
    class: 'input',
    retryable: false,
    hint: 'the policy endpoint rejected the request (HTTP 400/422): check policy.model, sampling, extra_body and that vLLM runs with --enable-auto-tool-choice --tool-call-parser',
  },
  POLICY_AUTH: {
    class: 'input',
    retryable: false,
    hint: 'the policy endpoint refused the key (HTTP 401/403); check the variable named by policy.api_key_env on the workers',
  },
  POLICY_NOT_FOUND: {
    class: 'input',
    retryable: false,
    hint: 'HTTP 404 from the policy endpoint: check policy.base_url (the API root, …/v1) and policy.model (the served model name)',
  },
  POLICY_KEY_MISSING: {
    class: 'input',
    retryable: false,
    hint: "set the environment variable named by policy.api_key_env in every worker's environment",
  },
  CANCELLED: {
    class: 'input',
    retryable: false,
    hint: 'the run was cancelled; `rollout-fleet retry --run <id> --failed` resumes it',
  },
  // input and configuration
  REPO_DIR_MISSING: {
    class: 'input',
    retryable: false,
    hint: "the episode's repo_dir is not a directory in its sandbox image; set repo_dir to where the image keeps the repository (SWE-bench images: /testbed)",
  },
  INPUT_INVALID: { class: 'input', retryable: false, hint: 'fix the field named in the message and submit again' },
  INPUT_DUPLICATE: { class: 'input', retryable: false, hint: 'remove the duplicate episode or give it another id' },
  INPUT_TOO_LARGE: { class: 'input', retryable: false, hint: 'shrink the payload or raise the limit' },
  RUN_CANCELLED: {
    class: 'input',
    retryable: false,
    hint: 'the run was cancelled: submit again with --resume to run it again (cancelled episodes run again, finished ones are kept), or use another run id',
  },
  RUN_NOT_FOUND: {
    class: 'input',
    retryable: false,
    hint: 'no run with that id in this Redis and prefix; check the id (and RF_PREFIX), or submit the run first',
  },
  SESSION_NOT_FOUND: {
    class: 'input',
    retryable: false,
    hint: 'no session with that id on this API server; start one with POST /v1/sessions',
  },
  SESSION_CLOSED: {
    class: 'input',
    retryable: false,
    hint: 'the session ended (deleted, idle past RF_SESSION_IDLE_S, past its lifetime, or its sandbox was lost); start a new one',
  },
  API_UNAUTHORIZED: {
    class: 'input',
    retryable: false,
    hint: 'send Authorization: Bearer <the API token (RF_API_TOKEN)>',
  },
  API_FORBIDDEN: {
    class: 'input',
    retryable: false,
    hint: 'this API answers only to a loopback Host when it has no token, and refuses cross-site writes',
  },
  API_NOT_FOUND: { class: 'input', retryable: false, hint: 'no such route; see docs/openapi.json for the API' },
  CONFIG_INVALID: {
    class: 'input',
    retryable: false,
    hint: 'fix the listed variables (see the README configuration table)',
  },
  REDIS_UNAVAILABLE: { class: 'infra', retryable: true, hint: 'Redis is not reachable; check REDIS_URL' },
  INTERNAL: { class: 'infra', retryable: false, hint: 'an unexpected error; please report it with the log line' },
} as const satisfies Record<string, CodeSpec>;

export type ErrorCode = keyof typeof ERROR_CODES;

export function classOf(code: ErrorCode): FailureClass {
  return ERROR_CODES[code].class;
}

export function isRetryableCode(code: ErrorCode): boolean {
  return ERROR_CODES[code].retryable;
}

export function isErrorCode(value: unknown): value is ErrorCode {
  return typeof value === 'string' && Object.hasOwn(ERROR_CODES, value);
}
