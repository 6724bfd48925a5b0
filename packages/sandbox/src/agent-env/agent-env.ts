/**
 * AgentEnv: one sandbox for one episode — the seed's four verbs (start, install tools, communicate,
 * close) in TypeScript. Wire contract: veFaaS control plane (CreateSandbox / SetSandboxTimeout /
 * KillSandbox, V4-signed) + SWE-ReX through the function's gateway route, pinned to the sandbox by
 * X-Faas-Instance-Name. The same code runs against the cloud and vefaas-local; only the target differs.
 */
import { randomUUID } from 'node:crypto';
import type { Dispatcher } from 'undici';
import type { SandboxSpec, ToolName, Logger } from '@rollout-fleet/shared';
import { coerceError, RolloutError } from '@rollout-fleet/shared';
import { SwerexClient } from '../swerex/swerex-client.js';
import { shellQuote } from '../tools/shell-quote.js';
import type { VefaasClient } from '../vefaas/control-plane-client.js';
import { errorCodeForFailedStart } from '../vefaas/control-plane-errors.js';
import type { CommandInput, CommandResponse } from '../swerex/models.js';
import { SwerexRuntimeError } from '../swerex/swerex-runtime-error.js';
import { TOOL_INSTALL_DIR } from '../tools/bundle-paths.js';
import { checkSandboxEnvNames, createSandboxRequest } from './create-request.js';
import { TOOL_PATH_EXPORT, installToolBundle } from './install-tools.js';
import { FALLBACK_PATH_PREFIX, markCommand, setupStatus, type SetupOutcome } from './session-setup.js';
import { buildStartCommand } from './start-command.js';

const SECOND_MS = 1000;

/** Where sandboxes are created and how they are reached. */
export interface VefaasTarget {
  vefaas: VefaasClient;
  functionId: string;
  /** The function's gateway route (VEFAAS_FUNCTION_ROUTE). */
  gatewayUrl: string;
  gatewayKey?: string;
  /** Optional dispatcher for SWE-ReX calls (defaults to a shared keep-alive pool per origin). */
  dispatcher?: Dispatcher;
  /** Longest output kept from one SWE-ReX answer while reading it (RF_SWEREX_MAX_RESPONSE_BYTES). @defaultValue 16 MiB */
  maxResponseBytes?: number;
}

export interface AgentEnvOptions {
  target: VefaasTarget;
  sandbox: SandboxSpec;
  /** Labels on the sandbox (ListSandboxes filters on them; the reaper finds strays by them). */
  metadata?: Record<string, string>;
  /** Default per-command timeout of communicate/run, seconds. @defaultValue 300 */
  defaultTimeoutS?: number;
  logger?: Logger;
  /** Runs right after CreateSandbox answers, before the sandbox is used (lease write). */
  onCreated?: (sandboxId: string) => Promise<void>;
  /** Runs after KillSandbox (lease release). */
  onClosed?: (sandboxId: string) => Promise<void>;
  signal?: AbortSignal;
}

/** An AgentEnv for a sandbox somebody else created (the fleet's sandbox supply, a warm pool). */
export interface AttachOptions extends Omit<AgentEnvOptions, 'onCreated'> {
  sandboxId: string;
  /** The SWE-ReX token the sandbox was started with. */
  authToken: string;
  /** The bash session already exists with the env exported (a warm sandbox): `ready()` is not needed. */
  sessionReady?: boolean;
}

export interface ReadyOptions {
  /** @defaultValue the sandbox spec's startup_timeout_s */
  timeoutMs?: number;
  /** First pause between /is_alive probes (then backing off). @defaultValue 100 ms */
  intervalMs?: number;
}

export interface RunResult {
  output: string;
  exitCode: number | null;
  durationMs: number;
  timedOut: boolean;
  /**
   * Set when the command left the session unusable: `ended` — the shell exited or was killed (`exit`,
   * `kill -9 $$`, an `exec` that ended); `unresponsive` — it timed out and would not be interrupted.
   * The sandbox itself is fine: `restartSession()` gives a new shell in it.
   */
  sessionLost?: 'ended' | 'unresponsive';
  /** The output's true size (UTF-8 bytes) when it was cut to head + marker + tail while being read. */
  outputBytes?: number;
}

/**
 * How `settle()` found the session: `in-step` — its first marker came back at once; `caught-up` — it was out of
 * step (answering at stale prompts) and has now run everything sent to it; `ended` — the shell is gone, so nothing
 * sent to it can still run; `out-of-sync` — no marker came back while the sandbox answered (see settle()).
 */
export type SettleOutcome = 'in-step' | 'caught-up' | 'ended' | 'out-of-sync';

export interface StartTimings {
  createMs: number;
  aliveMs: number;
}

const FIRST_SESSION = 'default';
/**
 * Sessions tried before a set-up whose outcome stays unknown is given up: a slow sandbox does not leave three
 * fresh sessions in a row without an answer, a shell that prints prompts out of turn (a poisoned ~/.bashrc) does.
 */
const SESSION_ATTEMPTS = 3;
const SETUP_TIMEOUT_S = 60;

/**
 * Metadata key every sandbox of an AgentEnv carries, with a value unique to that AgentEnv: when CreateSandbox
 * is aborted or times out, the platform may have created the sandbox without us ever learning its id, and
 * close() finds it by this label (ListSandboxes) and kills it.
 */
export const AGENT_ENV_LABEL_KEY = 'rf-env';

/**
 * Session environment every sandbox gets (as SWE-agent sets it): the session runs on a pty, so pagers
 * would wait for a keypress forever (`git log`, `git diff`, `man`); progress bars would flood outputs.
 * Episode `env` entries override these.
 */
export const DEFAULT_SESSION_ENV: Readonly<Record<string, string>> = {
  PAGER: 'cat',
  MANPAGER: 'cat',
  GIT_PAGER: 'cat',
  LESS: '-R',
  PIP_PROGRESS_BAR: 'off',
  TQDM_DISABLE: '1',
};

export class AgentEnv implements AsyncDisposable {
  readonly #o: AgentEnvOptions;
  #sandboxId: string | undefined;
  #swerex: SwerexClient | undefined;
  #closing: Promise<void> | undefined;
  /** The CreateSandbox call (settles with #sandboxId set), once start() has begun. */
  #creating: Promise<unknown> | undefined;
  readonly #label = randomUUID();
  #authToken: string | undefined;
  #ready = false;
  /** The session commands run in; a new name after each restart (SWE-ReX keeps a failed name registered). */
  #session = FIRST_SESSION;
  #restarts = 0;

  constructor(options: AgentEnvOptions) {
    this.#o = options;
  }

  /**
   * Binds to an existing sandbox; `close()` kills it. Unless `sessionReady`, call `ready()` before use.
   * The fleet's sandbox supply creates sandboxes itself (it is the one place that calls CreateSandbox, so it
   * can pace and cap creates fleet-wide) and hands them out through this.
   */
  static attach(options: AttachOptions): AgentEnv {
    const { sandboxId, authToken, sessionReady, ...rest } = options;
    const env = new AgentEnv(rest);
    env.#sandboxId = sandboxId;
    env.#authToken = authToken;
    env.#creating = Promise.resolve();
    env.#swerex = env.#newClient(sandboxId, authToken);
    env.#ready = sessionReady === true;
    return env;
  }

  get sandboxId(): string | undefined {
    return this.#sandboxId;
  }

  /** CreateSandbox → wait until alive (startup timeout) → bash session with the env variables. */
  async start(): Promise<StartTimings> {
    if (this.#creating) throw new RolloutError('INTERNAL', 'AgentEnv.start() called twice');
    const { target, sandbox, signal } = this.#o;
    checkSandboxEnvNames(sandbox);
    if (this.#closing) throw new RolloutError('INTERNAL', 'AgentEnv.start() called after close()');
    const started = performance.now();
    const start = buildStartCommand(sandbox.command);
    const creating = target.vefaas
      .createSandbox(
        createSandboxRequest({
          functionId: target.functionId,
          sandbox,
          command: start.command,
          metadata: { ...this.#o.metadata, [AGENT_ENV_LABEL_KEY]: this.#label },
        }),
        signal ? { signal } : {},
      )
      .then((result) => {
        // Set inside the call's own promise so a concurrent close() that awaits it sees the id.
        this.#sandboxId = result.SandboxId;
        return result;
      });
    this.#creating = creating;
    const created = await creating;
    const createMs = performance.now() - started;
    await this.#o.onCreated?.(created.SandboxId);
    this.#authToken = start.authToken;
    this.#swerex = this.#newClient(created.SandboxId, start.authToken);
    await this.ready();
    return { createMs, aliveMs: performance.now() - started };
  }

  /**
   * Waits until the sandbox's SWE-ReX server answers (probes back off; DescribeSandbox is asked, backing off
   * too, whether a sandbox the gateway does not know has Failed), then opens the bash session with the env.
   */
  async ready(options: ReadyOptions = {}): Promise<void> {
    const { sandbox, signal } = this.#o;
    const swerex = this.#client();
    if (this.#ready) return;
    await swerex.waitUntilAlive({
      timeoutMs: options.timeoutMs ?? sandbox.startup_timeout_s * SECOND_MS,
      ...(options.intervalMs === undefined ? {} : { intervalMs: options.intervalMs }),
      onDead: this.#failedStartCheck(this.#sandboxId ?? ''),
      ...(signal ? { signal } : {}),
    });
    try {
      await this.#openSession({ first: true });
    } catch (thrown) {
      // Nothing of the model's has run yet: a shell that will not start is the sandbox's fault.
      const err = coerceError(thrown);
      if (!(thrown instanceof SwerexRuntimeError) && err.code !== 'SESSION_SETUP_AMBIGUOUS') throw err;
      throw new RolloutError('SANDBOX_START_FAILED', `the bash session did not start: ${err.message}`, {
        cause: thrown,
      });
    }
    this.#ready = true;
  }

  /**
   * Replaces a session the model broke (see `RunResult.sessionLost`) with a new one in the same sandbox, set
   * up as the first one was (environment variables, tools on PATH). Throws SESSION_RESTART_FAILED (model) when
   * the sandbox answers but no working shell comes up — the model can poison what a new shell reads
   * (~/.bashrc) — and the transport's infra errors when the sandbox does not answer at all. A set-up whose
   * outcome is unknown (a stalled sandbox) is retried in a fresh session; only a shell that leaves
   * SESSION_ATTEMPTS sessions in a row unreadable is the model's doing.
   *
   * `setup` runs in each new session after ours (the recorded agent's own: repository directory, its tools); it
   * should read its commands with `runSetup` and throw SESSION_SETUP_AMBIGUOUS (`setupStatus`) when it cannot.
   */
  async restartSession(options: { setup?: () => Promise<void> } = {}): Promise<void> {
    this.#client();
    try {
      await this.#openSession({ first: false, ...(options.setup ? { setup: options.setup } : {}) });
    } catch (thrown) {
      const err = coerceError(thrown);
      const modelSide =
        thrown instanceof SwerexRuntimeError ||
        err.code === 'SESSION_SETUP_AMBIGUOUS' ||
        err.code === 'SANDBOX_START_FAILED' ||
        err.class === 'model';
      if (!modelSide) throw err;
      throw new RolloutError('SESSION_RESTART_FAILED', `a new bash session would not start: ${err.message}`, {
        cause: thrown,
      });
    }
  }

  /**
   * Opens a session and sets it up; a start the server refuses (a 511: the shell did not come up in time, or
   * died) or a set-up whose outcome is unknown discards that session and tries a fresh one, SESSION_ATTEMPTS in
   * all. A set-up command that ran and failed is final (thrown at once); so are transport errors.
   */
  async #openSession(o: { first: boolean; setup?: () => Promise<void> }): Promise<void> {
    const swerex = this.#client();
    const signal = this.#o.signal;
    for (let attempt = 1; ; attempt += 1) {
      if (!o.first || attempt > 1) {
        const old = this.#session;
        this.#restarts += 1;
        this.#session = `rf-session-${this.#restarts}`;
        // The old shell may be gone, wedged or out of step; closing it only reaps it, so failures do not matter.
        await swerex.closeSession(old, { timeoutMs: 5 * SECOND_MS, retries: 0 }).catch(() => undefined);
      }
      try {
        await swerex.createSession({ session: this.#session, startup_timeout: 10 }, signal ? { signal } : {});
        await this.#mustSetUp(this.#envExports(), 'the session environment');
        // The tools stay installed in the sandbox; a new shell only needs them on its PATH.
        if (!o.first)
          await this.#mustSetUp(`if [ -d ${TOOL_INSTALL_DIR} ]; then ${TOOL_PATH_EXPORT}; fi`, 'the tools on PATH');
        await o.setup?.();
        return;
      } catch (thrown) {
        const err = coerceError(thrown);
        const unknown = thrown instanceof SwerexRuntimeError || err.code === 'SESSION_SETUP_AMBIGUOUS';
        if (!unknown || attempt >= SESSION_ATTEMPTS || signal?.aborted) throw thrown;
        this.#o.logger?.warn(
          { err, session: this.#session, attempt },
          'a new bash session could not be set up; trying a fresh one',
        );
      }
    }
  }

  /**
   * `/execute`: one subprocess outside every session (argv list, `shell: false` unless asked), so nothing the
   * model did to its shell (functions, aliases, exported variables, a dead session) can touch it. `env`
   * replaces the server's whole environment when given.
   */
  async execute(command: CommandInput): Promise<CommandResponse> {
    const signal = this.#o.signal;
    return this.#client().execute(command, { retries: 1, ...(signal ? { signal } : {}) });
  }

  /** The session's environment line: the defaults every sandbox gets, then the episode's own variables. */
  #envExports(): string {
    const env = { ...DEFAULT_SESSION_ENV, ...this.#o.sandbox.env };
    // One line (one prompt): see session-setup.ts.
    return Object.entries(env)
      .map(([k, v]) => `export ${k}=${shellQuote(v)}`)
      .join(' && ');
  }

  /**
   * Is this sandbox still usable? One round trip: a trivial command in its session, bounded by `timeoutMs`
   * and not retried. It answers only if the server is up and the session works, so it subsumes `/is_alive`
   * (a second round trip per claim: an RL batch claims ~200 pool sandboxes at once). Used before handing out
   * a sandbox that waited in a pool.
   */
  async probe(options: { timeoutMs?: number } = {}): Promise<boolean> {
    const timeoutMs = options.timeoutMs ?? 5 * SECOND_MS;
    const signal = this.#o.signal;
    // A marker, not SWE-ReX's exit code: its 1 s exit-code fetch runs out on a slow but healthy sandbox (a loaded
    // host), which would discard a good warm sandbox and leave its session a prompt behind (session-setup.ts).
    const marked = markCommand(':');
    try {
      const observation = await this.#client().runInSession(
        {
          action_type: 'bash',
          session: this.#session,
          command: marked.command,
          timeout: Math.max(1, Math.ceil(timeoutMs / SECOND_MS)),
          check: 'ignore',
        },
        { timeoutMs, retries: 0, signal },
      );
      const read = marked.read(observation.output);
      return read.ran && read.status === 0;
    } catch (err) {
      if (signal?.aborted) throw err;
      return false;
    }
  }

  /** The SWE-ReX token the sandbox was started with (a secret: never log it). */
  get authToken(): string | undefined {
    return this.#authToken;
  }

  /** Uploads the tool bundle, makes it executable and puts it on the session's PATH. */
  async installTools(names: readonly ToolName[]): Promise<void> {
    await installToolBundle({ swerex: this.#client(), names, run: (cmd) => this.#mustSetUp(cmd, 'the tool set-up') });
  }

  /**
   * Runs one of our own one-line set-up commands in the session and reads its outcome from an end marker instead
   * of SWE-ReX's exit-code fetch, which a slow sandbox can miss (session-setup.ts). `ran: false` when the marker
   * did not come back: the session is out of step (or the command timed out) and the outcome is unknown.
   */
  async runSetup(command: string, options: { timeoutS?: number } = {}): Promise<SetupOutcome> {
    const marked = markCommand(command);
    const result = await this.#runIn(marked.command, {
      timeoutS: options.timeoutS ?? SETUP_TIMEOUT_S,
      check: 'ignore',
    });
    if (result.timedOut || result.sessionLost) return { ran: false, output: result.output };
    return marked.read(result.output);
  }

  /**
   * Waits until the session has run every command sent to it — the model's last one included — so what is read
   * from the sandbox next (the patch) reflects them all. A session left a prompt behind (a missed exit-code fetch
   * on a stalled sandbox, a model printing prompts) answers a command at a stale prompt before running it: the
   * model's last step may have "returned" before it ran. First a marker on the prompt path (`check: "ignore"`, so
   * no exit-code fetch): back at once when the session is in step. Otherwise markers sent with SWE-ReX's fallback
   * terminator, whose wait skips stale prompts: bash runs its input in order, so our marker means everything
   * before it has run. `rounds` of those (each bounded by `timeoutS`; a timeout interrupts what still runs),
   * then `out-of-sync`: the sandbox answered but the shell never printed our marker — prompts or fallback
   * terminators printed out of turn, a command that ignores Ctrl-C: the model's doing.
   */
  async settle(options: { timeoutS: number; rounds?: number }): Promise<SettleOutcome> {
    const fast = await this.#marked(':', options.timeoutS);
    if (fast !== 'unknown') return fast === 'ran' ? 'in-step' : 'ended';
    for (let round = 0; round < (options.rounds ?? 2); round += 1) {
      const caught = await this.#marked(FALLBACK_PATH_PREFIX, options.timeoutS);
      if (caught !== 'unknown') return caught === 'ran' ? 'caught-up' : 'ended';
    }
    return 'out-of-sync';
  }

  async #marked(command: string, timeoutS: number): Promise<'ran' | 'ended' | 'unknown'> {
    const marked = markCommand(command);
    let result: RunResult;
    try {
      result = await this.#runIn(marked.command, { timeoutS, check: 'ignore' });
    } catch (thrown) {
      // The server refused: no such session (a restart that failed) — nothing can still run in it.
      if (thrown instanceof SwerexRuntimeError) return 'ended';
      throw thrown;
    }
    if (result.sessionLost === 'ended') return 'ended';
    if (result.timedOut || result.sessionLost) return 'unknown';
    return marked.read(result.output).ran ? 'ran' : 'unknown';
  }

  /** Runs a command in the session and returns its output (throws on a timeout). */
  async communicate(command: string, options: { timeoutS?: number } = {}): Promise<string> {
    const result = await this.run(command, options);
    if (result.timedOut) {
      throw new RolloutError(
        'SWEREX_COMMAND_TIMEOUT',
        `command timed out after ${options.timeoutS ?? this.#defaultTimeoutS()} s`,
      );
    }
    return result.output;
  }

  /** Runs a command; a timeout interrupts it and keeps the session usable (`timedOut: true`). */
  // Not async: #runIn is, and a pass-through frame would be held for every in-flight step (swerex-client.ts #call).
  run(command: string, options: { timeoutS?: number } = {}): Promise<RunResult> {
    return this.#runIn(command, { timeoutS: options.timeoutS ?? this.#defaultTimeoutS(), check: 'silent' });
  }

  async #runIn(command: string, o: { timeoutS: number; check: 'silent' | 'ignore' }): Promise<RunResult> {
    const swerex = this.#client();
    const timeoutS = o.timeoutS;
    const started = performance.now();
    const signal = this.#o.signal;
    try {
      const observation = await swerex.runInSession(
        { action_type: 'bash', session: this.#session, command, timeout: timeoutS, check: o.check },
        { retries: 1, signal },
      );
      const result: RunResult = {
        output: observation.output,
        exitCode: observation.exit_code,
        durationMs: performance.now() - started,
        timedOut: false,
      };
      const outputBytes = observation.truncated?.['output']?.totalBytes;
      if (outputBytes !== undefined) result.outputBytes = outputBytes;
      return result;
    } catch (thrown) {
      const err = coerceError(thrown);
      const durationMs = (): number => performance.now() - started;
      if (err.code === 'SWEREX_SESSION_ENDED')
        return { output: '', exitCode: null, durationMs: durationMs(), timedOut: false, sessionLost: 'ended' };
      if (err.code !== 'SWEREX_COMMAND_TIMEOUT') throw err;
      const interrupted = await this.#interrupt();
      return {
        output: '',
        exitCode: null,
        durationMs: durationMs(),
        timedOut: true,
        ...(interrupted ? {} : { sessionLost: 'unresponsive' as const }),
      };
    }
  }

  /** Writes a file inside the sandbox (parents created). */
  async writeFile(path: string, content: string): Promise<void> {
    await this.#client().writeFile({ path, content }, this.#o.signal ? { signal: this.#o.signal } : {});
  }

  async readFile(path: string): Promise<string> {
    return (await this.#client().readFile({ path }, this.#o.signal ? { signal: this.#o.signal } : {})).content;
  }

  /** Asks for `seconds` more platform lifetime (SetSandboxTimeout); returns the new ExpireAt. */
  async extendLifetime(seconds: number): Promise<string | undefined> {
    if (!this.#sandboxId) return undefined;
    const result = await this.#o.target.vefaas.setSandboxTimeout({
      FunctionId: this.#o.target.functionId,
      SandboxId: this.#sandboxId,
      Timeout: Math.ceil(seconds / 60),
    });
    return result.ExpireAt;
  }

  /** Idempotent: closes the session (best effort) and kills the sandbox; safe after a half-done start(). */
  close(): Promise<void> {
    this.#closing ??= this.#close();
    return this.#closing;
  }

  async [Symbol.asyncDispose](): Promise<void> {
    await this.close();
  }

  async #close(): Promise<void> {
    // A close() racing start() waits for CreateSandbox, so the sandbox it creates is not missed.
    await this.#creating?.catch(() => undefined);
    const sandboxId = this.#sandboxId;
    if (!sandboxId) {
      if (this.#creating) await this.#killUnnamed();
      return;
    }
    // After an abort a command may still hold the single-request server: closing the session would only
    // wait for it, and KillSandbox ends the session anyway.
    if (this.#swerex && !this.#o.signal?.aborted) {
      await this.#swerex.closeSession(this.#session, { timeoutMs: 2 * SECOND_MS, retries: 0 }).catch(() => undefined);
    }
    try {
      await this.#o.target.vefaas.killSandbox({ FunctionId: this.#o.target.functionId, SandboxId: sandboxId });
    } catch (thrown) {
      const err = coerceError(thrown);
      if (err.code !== 'VEFAAS_NOT_FOUND') throw err;
    }
    await this.#o.onClosed?.(sandboxId);
  }

  /** CreateSandbox failed or was aborted: a sandbox may exist all the same; find it by our label and kill it. */
  async #killUnnamed(): Promise<void> {
    const { vefaas, functionId } = this.#o.target;
    const strays = await vefaas.listAllSandboxes({
      FunctionId: functionId,
      Metadata: { [AGENT_ENV_LABEL_KEY]: this.#label },
    });
    for (const stray of strays) {
      if (stray.Status === 'Terminating') continue;
      this.#o.logger?.warn({ sandboxId: stray.Id }, 'killing a sandbox whose CreateSandbox call did not complete');
      try {
        await vefaas.killSandbox({ FunctionId: functionId, SandboxId: stray.Id });
      } catch (thrown) {
        const err = coerceError(thrown);
        if (err.code !== 'VEFAAS_NOT_FOUND') throw err;
      }
    }
  }

  /**
   * While /is_alive says "no such instance", asks DescribeSandbox whether the sandbox Failed (e.g. an unknown
   * image): then the start fails at once instead of after the whole startup timeout. The first question goes
   * at once; later ones back off (1 s, 2 s, 4 s … at most 10 s apart), so a slow cold start costs few calls.
   */
  #failedStartCheck(sandboxId: string): (error: RolloutError) => Promise<void> {
    let nextCheck = 0;
    let gapMs = SECOND_MS;
    return async (error) => {
      if (performance.now() < nextCheck) return;
      nextCheck = performance.now() + gapMs;
      gapMs = Math.min(10 * SECOND_MS, gapMs * 2);
      const described = await this.#o.target.vefaas
        .describeSandbox(
          { FunctionId: this.#o.target.functionId, SandboxId: sandboxId },
          this.#o.signal ? { signal: this.#o.signal } : {},
        )
        .catch(() => undefined);
      if (described?.Status !== 'Failed') return;
      const reason = [described.ErrorCode, described.ErrorMessage].filter(Boolean).join(': ') || 'no reason given';
      throw new RolloutError(
        errorCodeForFailedStart(described.ErrorCode),
        `sandbox ${sandboxId} failed to start (${reason})`,
        {
          cause: error,
          details: { sandboxId, errorCode: described.ErrorCode },
        },
      );
    };
  }

  /** Ctrl-C after a timeout; false when the session would not come back (a model-side failure: see run()). */
  async #interrupt(): Promise<boolean> {
    try {
      await this.#client().interrupt(this.#session, {
        retries: 1,
        ...(this.#o.signal ? { signal: this.#o.signal } : {}),
      });
      return true;
    } catch (thrown) {
      const err = coerceError(thrown);
      // The sandbox answered that the shell would not stop (or was gone): the model's doing. Transport and
      // sandbox failures stay infra.
      if (err.class === 'model') return false;
      throw err;
    }
  }

  /**
   * A set-up command that must succeed: unknown outcome → SESSION_SETUP_AMBIGUOUS, non-zero → SANDBOX_START_FAILED.
   * A command answered without its marker is sent again once the session is back in step (#resync): a new
   * session can be born a prompt behind — on a loaded sandbox bash's line editor echoes the start line, whose
   * `SHELLPS1PREFIX` the start then takes for the prompt (seen at load ~25).
   */
  async #mustSetUp(command: string, what: string): Promise<string> {
    let outcome = await this.runSetup(command);
    if (!outcome.ran && (await this.#resync())) outcome = await this.runSetup(command);
    const status = setupStatus(outcome, what);
    if (status !== 0) {
      throw new RolloutError(
        'SANDBOX_START_FAILED',
        `${what} failed (exit ${status}): ${outcome.output.slice(0, 500)}`,
      );
    }
    return outcome.output;
  }

  /**
   * Brings a session a prompt (or a few) behind back in step: Ctrl-C at the idle prompt, whose answer (SWE-ReX
   * reads on for 0.5 s after the prompt it matched) takes every stale prompt with it; a marker then tells whether
   * it worked. Two tries; false when the session still answers out of step.
   */
  async #resync(): Promise<boolean> {
    const signal = this.#o.signal;
    for (let round = 0; round < 2; round += 1) {
      try {
        await this.#client().interrupt(this.#session, { retries: 0, ...(signal ? { signal } : {}) });
      } catch (thrown) {
        if (!(thrown instanceof SwerexRuntimeError)) throw thrown;
        return false;
      }
      if ((await this.runSetup(':')).ran) return true;
    }
    return false;
  }

  #newClient(sandboxId: string, authToken: string): SwerexClient {
    const { target } = this.#o;
    return new SwerexClient({
      baseUrl: target.gatewayUrl,
      instanceName: sandboxId,
      apiKey: authToken,
      ...(target.gatewayKey ? { gatewayKey: target.gatewayKey } : {}),
      ...(target.dispatcher ? { dispatcher: target.dispatcher } : {}),
      ...(target.maxResponseBytes === undefined ? {} : { maxResponseBytes: target.maxResponseBytes }),
      ...(this.#o.logger ? { logger: this.#o.logger } : {}),
    });
  }

  #client(): SwerexClient {
    if (!this.#swerex) throw new RolloutError('INTERNAL', 'AgentEnv used before start()');
    return this.#swerex;
  }

  #defaultTimeoutS(): number {
    return this.#o.defaultTimeoutS ?? 300;
  }
}
