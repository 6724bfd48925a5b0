/**
 * AgentEnv: one sandbox for one episode — the seed's four verbs (start, install tools, communicate,
 * close) in TypeScript. Wire contract: veFaaS control plane (CreateSandbox / SetSandboxTimeout /
 * KillSandbox, V4-signed) + SWE-ReX through the function's gateway route, pinned to the sandbox by
 * X-Faas-Instance-Name. The same code runs against the cloud and vefaas-local; only the target differs.
 */
import { randomUUID } from 'node:crypto';
import type { Dispatcher } from 'undici';
import type { SandboxSpec, ToolName } from '../contracts/episode.js';
import { coerceError } from '../errors/coerce.js';
import { RolloutError } from '../errors/rollout-error.js';
import type { Logger } from '../logging/create-logger.js';
import { SwerexClient } from '../swerex/swerex-client.js';
import { shellQuote } from '../tools/shell-quote.js';
import type { VefaasClient } from '../vefaas/control-plane-client.js';
import { installToolBundle } from './install-tools.js';
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

export interface RunResult {
  output: string;
  exitCode: number | null;
  durationMs: number;
  timedOut: boolean;
}

export interface StartTimings {
  createMs: number;
  aliveMs: number;
}

const SESSION = 'default';

/**
 * Metadata key every sandbox of an AgentEnv carries, with a value unique to that AgentEnv: when CreateSandbox
 * is aborted or times out, the platform may have created the sandbox without us ever learning its id, and
 * close() finds it by this label (ListSandboxes) and kills it.
 */
export const AGENT_ENV_LABEL_KEY = 'rf-env';

/** What `export NAME=...` accepts; anything else would fail (or inject) in the session set-up line. */
const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

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

  constructor(options: AgentEnvOptions) {
    this.#o = options;
  }

  get sandboxId(): string | undefined {
    return this.#sandboxId;
  }

  /** CreateSandbox → wait until alive (startup timeout) → bash session with the env variables. */
  async start(): Promise<StartTimings> {
    if (this.#creating) throw new RolloutError('INTERNAL', 'AgentEnv.start() called twice');
    const { target, sandbox, signal } = this.#o;
    const badNames = Object.keys(sandbox.env).filter((name) => !ENV_NAME.test(name));
    if (badNames.length > 0) {
      throw new RolloutError('INPUT_INVALID', `sandbox env names must be shell identifiers: ${badNames.map((n) => JSON.stringify(n)).join(', ')}`);
    }
    if (this.#closing) throw new RolloutError('INTERNAL', 'AgentEnv.start() called after close()');
    const started = performance.now();
    const start = buildStartCommand(sandbox.command);
    const creating = target.vefaas.createSandbox(
      {
        FunctionId: target.functionId,
        // Minutes are the documented unit; round up so the platform never undercuts the lifetime.
        Timeout: Math.ceil(sandbox.lifetime_s / 60),
        InstanceImageInfo: { Image: sandbox.image, Command: start.command, Port: sandbox.port },
        CpuMilli: sandbox.cpu_milli,
        MemoryMB: sandbox.memory_mb,
        Envs: Object.entries(sandbox.env).map(([Key, Value]) => ({ Key, Value })),
        Metadata: { ...this.#o.metadata, [AGENT_ENV_LABEL_KEY]: this.#label },
      },
      signal ? { signal } : {},
    ).then((result) => {
      // Set inside the call's own promise so a concurrent close() that awaits it sees the id.
      this.#sandboxId = result.SandboxId;
      return result;
    });
    this.#creating = creating;
    const created = await creating;
    const createMs = performance.now() - started;
    await this.#o.onCreated?.(created.SandboxId);
    this.#swerex = new SwerexClient({
      baseUrl: target.gatewayUrl,
      instanceName: created.SandboxId,
      apiKey: start.authToken,
      ...(target.gatewayKey ? { gatewayKey: target.gatewayKey } : {}),
      ...(target.dispatcher ? { dispatcher: target.dispatcher } : {}),
      ...(this.#o.logger ? { logger: this.#o.logger } : {}),
    });
    await this.#swerex.waitUntilAlive({
      timeoutMs: sandbox.startup_timeout_s * SECOND_MS,
      onDead: this.#failedStartCheck(created.SandboxId),
      ...(signal ? { signal } : {}),
    });
    await this.#swerex.createSession({ session: SESSION, startup_timeout: 10 }, signal ? { signal } : {});
    const env = { ...DEFAULT_SESSION_ENV, ...sandbox.env };
    await this.#mustRun(Object.entries(env).map(([k, v]) => `export ${k}=${shellQuote(v)}`).join('\n'));
    return { createMs, aliveMs: performance.now() - started };
  }

  /** Uploads the tool bundle, makes it executable and puts it on the session's PATH. */
  async installTools(names: readonly ToolName[]): Promise<void> {
    await installToolBundle({ swerex: this.#client(), names, run: (cmd) => this.#mustRun(cmd) });
  }

  /** Runs a command in the session and returns its output (throws on a timeout). */
  async communicate(command: string, options: { timeoutS?: number } = {}): Promise<string> {
    const result = await this.run(command, options);
    if (result.timedOut) {
      throw new RolloutError('SWEREX_COMMAND_TIMEOUT', `command timed out after ${options.timeoutS ?? this.#defaultTimeoutS()} s`);
    }
    return result.output;
  }

  /** Runs a command; a timeout interrupts it and keeps the session usable (`timedOut: true`). */
  async run(command: string, options: { timeoutS?: number } = {}): Promise<RunResult> {
    const swerex = this.#client();
    const timeoutS = options.timeoutS ?? this.#defaultTimeoutS();
    const started = performance.now();
    const signal = this.#o.signal;
    try {
      const observation = await swerex.runInSession(
        { action_type: 'bash', session: SESSION, command, timeout: timeoutS, check: 'silent' },
        { retries: 1, ...(signal ? { signal } : {}) },
      );
      return { output: observation.output, exitCode: observation.exit_code, durationMs: performance.now() - started, timedOut: false };
    } catch (thrown) {
      const err = coerceError(thrown);
      if (err.code !== 'SWEREX_COMMAND_TIMEOUT') throw err;
      await this.#interrupt();
      return { output: '', exitCode: null, durationMs: performance.now() - started, timedOut: true };
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
      await this.#swerex.closeSession(SESSION, { timeoutMs: 2 * SECOND_MS, retries: 0 }).catch(() => undefined);
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
    const strays = await vefaas.listAllSandboxes({ FunctionId: functionId, Metadata: { [AGENT_ENV_LABEL_KEY]: this.#label } });
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
   * While /is_alive says "no such instance", asks DescribeSandbox (at most every 2 s) whether the sandbox
   * Failed (e.g. an unknown image): then the start fails at once instead of after the whole startup timeout.
   */
  #failedStartCheck(sandboxId: string): (error: RolloutError) => Promise<void> {
    let lastCheck = 0;
    return async (error) => {
      if (performance.now() - lastCheck < 2 * SECOND_MS) return;
      lastCheck = performance.now();
      const described = await this.#o.target.vefaas
        .describeSandbox({ FunctionId: this.#o.target.functionId, SandboxId: sandboxId }, this.#o.signal ? { signal: this.#o.signal } : {})
        .catch(() => undefined);
      if (described?.Status !== 'Failed') return;
      const reason = [described.ErrorCode, described.ErrorMessage].filter(Boolean).join(': ') || 'no reason given';
      throw new RolloutError('SANDBOX_START_FAILED', `sandbox ${sandboxId} failed to start (${reason})`, {
        cause: error,
        details: { sandboxId, errorCode: described.ErrorCode },
      });
    };
  }

  async #interrupt(): Promise<void> {
    try {
      await this.#client().interrupt(SESSION, { retries: 1 });
    } catch (thrown) {
      throw new RolloutError('SWEREX_INTERRUPT_FAILED', 'could not interrupt the session after a timeout', { cause: thrown });
    }
  }

  async #mustRun(command: string): Promise<string> {
    const result = await this.run(command, { timeoutS: 60 });
    if (result.timedOut || result.exitCode !== 0) {
      throw new RolloutError('SANDBOX_START_FAILED', `setup command failed (exit ${result.exitCode}): ${result.output.slice(0, 500)}`);
    }
    return result.output;
  }

  #client(): SwerexClient {
    if (!this.#swerex) throw new RolloutError('INTERNAL', 'AgentEnv used before start()');
    return this.#swerex;
  }

  #defaultTimeoutS(): number {
    return this.#o.defaultTimeoutS ?? 300;
  }
}
