/**
 * Remote sessions: each one a sandbox acquired from the fleet's sandbox supply (role `session`: it counts
 * against the fleet caps, is created within the fleet's create rate, is leased and reaped like any other),
 * plus what makes it a session — an id, an idle timer (the supply's, kept alive while a call runs), a lifetime,
 * one call at a time in order, and a record of how it ended so later calls get a typed answer.
 *
 * Sessions live in the API process that created them (the sandbox connection is here). If that process dies,
 * its leases lapse and the reaper kills the sandboxes; a client then gets SESSION_NOT_FOUND from any other API
 * process and starts again.
 */
import { randomBytes } from 'node:crypto';
import {
  RolloutError,
  SandboxSpecSchema,
  coerceError,
  jobSecrets,
  redactJobData,
  redactJobText,
  type Logger,
  type ToolName,
} from '@rollout-fleet/shared';
import { toolCallToCommand, type SandboxRequest, type SuppliedSandbox } from '@rollout-fleet/sandbox';
import { createStepExecutor } from '@rollout-fleet/worker';
import type { SessionBody, SessionCreate, SessionRun, SessionRunResult } from '../contracts/session-contracts.js';

const SECOND = 1000;
/** How many ended sessions are remembered (to answer SESSION_CLOSED with the reason instead of NOT_FOUND). */
const ENDED_KEPT = 10_000;

export type EndReason = 'deleted' | 'idle' | 'lifetime' | 'sandbox-lost' | 'shutdown';

/** The one door to sandboxes the sessions use (the fleet's SandboxSupply). */
export interface SessionSupply {
  acquire(request: SandboxRequest): Promise<SuppliedSandbox>;
}

export interface SessionManagerOptions {
  supply: SessionSupply;
  logger: Logger;
  defaults: {
    image: string | undefined;
    idleTimeoutS: number;
    startupTimeoutS: number;
    stepTimeoutS: number;
  };
  now?: () => number;
}

interface Session {
  readonly id: string;
  readonly held: SuppliedSandbox;
  readonly image: string;
  /** Installed tools (grows with installTools). */
  readonly tools: ToolName[];
  /** The session's spec as it may be shown (env values redacted). */
  readonly shownEnv: Record<string, string>;
  readonly createdAt: number;
  readonly expiresAt: number;
  readonly idleTimeoutS: number;
  readonly stepTimeoutS: number;
  readonly controller: AbortController;
  readonly lifetimeTimer: NodeJS.Timeout;
  lastUsedAt: number;
  /** Calls in flight or queued. */
  pending: number;
  /** The tail of the call queue: calls run one at a time. */
  queue: Promise<unknown>;
}

export class SessionManager {
  readonly #o: SessionManagerOptions;
  readonly #now: () => number;
  readonly #live = new Map<string, Session>();
  readonly #ended = new Map<string, { reason: EndReason; at: number }>();
  #closed = false;

  constructor(options: SessionManagerOptions) {
    this.#o = options;
    this.#now = options.now ?? Date.now;
  }

  get size(): number {
    return this.#live.size;
  }

  /**
   * Acquires a sandbox and opens a session on it. `signal` is the caller's (an HTTP client going away): before
   * the sandbox is ready it cancels the acquisition; afterwards it no longer matters.
   */
  async create(request: SessionCreate, signal?: AbortSignal): Promise<SessionBody> {
    if (this.#closed)
      throw new RolloutError('SESSION_CLOSED', 'this API server is shutting down; start the session on another one');
    const { defaults } = this.#o;
    const image = request.image ?? defaults.image;
    if (image === undefined) {
      throw new RolloutError(
        'INPUT_INVALID',
        'no sandbox image: give `image` (or set RF_SANDBOX_IMAGE on the API server)',
        {
          details: {
            problems: [
              {
                file: '(request)',
                field: 'image',
                message: 'missing',
                hint: 'give the sandbox image',
                code: 'INPUT_INVALID',
              },
            ],
          },
        },
      );
    }
    const id = `ses_${randomBytes(12).toString('base64url')}`;
    const idleTimeoutS = request.idle_timeout_s ?? defaults.idleTimeoutS;
    const stepTimeoutS = request.step_timeout_s ?? defaults.stepTimeoutS;
    const createdAt = this.#now();
    const expiresAt = createdAt + request.lifetime_s * SECOND;
    const sandbox = SandboxSpecSchema.parse({
      image,
      env: request.env,
      startup_timeout_s: request.startup_timeout_s ?? defaults.startupTimeoutS,
      ...(request.cpu_milli === undefined ? {} : { cpu_milli: request.cpu_milli }),
      ...(request.memory_mb === undefined ? {} : { memory_mb: request.memory_mb }),
    });
    const logger = this.#o.logger.child({ sessionId: id });
    // The session's own signal: it cancels the acquisition (client gone, wait over) and, later, the sandbox's calls.
    const controller = new AbortController();
    const waitOver = new RolloutError(
      'SANDBOX_ACQUIRE_TIMEOUT',
      `no sandbox within ${request.wait_s} s (wait_s): the fleet is at its caps or create rate`,
    );
    const waitTimer =
      request.wait_s === undefined ? undefined : setTimeout(() => controller.abort(waitOver), request.wait_s * SECOND);
    const clientGone = (): void =>
      controller.abort(new RolloutError('SESSION_CLOSED', 'the client went away while the session was starting'));
    signal?.addEventListener('abort', clientGone, { once: true });
    let held: SuppliedSandbox;
    try {
      held = await this.#o.supply.acquire({
        sandbox,
        tools: request.tools,
        role: 'session',
        runId: request.label ?? 'sessions',
        jobId: id,
        deadline: expiresAt,
        signal: controller.signal,
        logger,
        idleTimeoutMs: idleTimeoutS * SECOND,
        defaultTimeoutS: stepTimeoutS,
        onLost: (err) => void this.#end(id, err.code === 'SANDBOX_IDLE' ? 'idle' : 'sandbox-lost', err),
      });
    } catch (thrown) {
      if (controller.signal.aborted && controller.signal.reason instanceof RolloutError) throw controller.signal.reason;
      // A failed set-up may quote the session's own environment (`export NAME=value`): never into an answer or a log.
      const err = coerceError(thrown);
      const secrets = jobSecrets({ env: request.env });
      throw new RolloutError(err.code, redactJobText(err.message, secrets), {
        details: redactJobData(err.details, { env: request.env }),
      });
    } finally {
      if (waitTimer) clearTimeout(waitTimer);
      signal?.removeEventListener('abort', clientGone);
    }
    if (signal?.aborted || this.#closed) {
      // Nobody can learn this session's id: give the sandbox back at once.
      await held.release();
      throw new RolloutError(
        'SESSION_CLOSED',
        'the session was ready after its client went away (or the server began shutting down); released',
      );
    }
    const lifetimeTimer = setTimeout(() => void this.#end(id, 'lifetime'), expiresAt - this.#now());
    lifetimeTimer.unref();
    const session: Session = {
      id,
      held,
      image,
      tools: [...request.tools],
      shownEnv: redactJobData({ env: request.env }).env,
      createdAt,
      expiresAt,
      idleTimeoutS,
      stepTimeoutS,
      controller,
      lifetimeTimer,
      lastUsedAt: this.#now(),
      pending: 0,
      queue: Promise.resolve(),
    };
    this.#live.set(id, session);
    logger.info(
      { sandboxId: held.sandboxId, image, acquireMs: Math.round(held.acquireMs), warm: held.warm },
      'session started',
    );
    return this.#describe(session);
  }

  describe(id: string): SessionBody {
    return this.#describe(this.#session(id));
  }

  list(): SessionBody[] {
    return [...this.#live.values()].map((s) => this.#describe(s));
  }

  /** Runs a command or a tool call; model-side trouble (bad call, syntax error, timeout) is an observation. */
  run(id: string, call: SessionRun): Promise<SessionRunResult> {
    return this.#call(id, async (session) => {
      const toolCall = call.tool_call;
      const command = call.command;
      const execute = createStepExecutor({
        shell: session.held.env,
        // A plain command runs as typed; a tool call becomes its command line by SWE-agent's rules (or an error observation).
        toCommand: () => (toolCall === undefined ? { ok: true, command: command ?? '' } : toolCallToCommand(toolCall)),
        stepTimeoutS: session.stepTimeoutS,
        // The record keeps a clipped copy; the answer carries the whole observation.
        outputLimitBytes: 1,
      });
      const name = toolCall?.name ?? 'bash';
      const args = toolCall === undefined || typeof toolCall.arguments === 'string' ? {} : toolCall.arguments;
      const step = await execute({ name, arguments: args, timeout_s: call.timeout_s }, 0);
      const { record } = step;
      return {
        output: step.output,
        exit_code: record.exit_code,
        duration_ms: record.duration_ms,
        timed_out: record.timed_out,
        ...(record.command === undefined ? {} : { command: record.command }),
        ...(record.error === undefined ? {} : { error: record.error }),
      };
    });
  }

  /** Installs more tools in a running session (the seed's `install_tools` after `start`). */
  installTools(id: string, tools: readonly ToolName[]): Promise<SessionBody> {
    return this.#call(id, async (session) => {
      await session.held.env.installTools(tools);
      for (const tool of tools) if (!session.tools.includes(tool)) session.tools.push(tool);
      return this.#describe(session);
    });
  }

  readFile(id: string, path: string): Promise<string> {
    return this.#call(id, (session) => session.held.env.readFile(path));
  }

  writeFile(id: string, path: string, content: string): Promise<void> {
    return this.#call(id, (session) => session.held.env.writeFile(path, content));
  }

  /** Ends a session and kills its sandbox (waits for a running call to be cut off). */
  async close(id: string): Promise<void> {
    this.#session(id);
    await this.#end(id, 'deleted');
  }

  /** Ends every session (server shutdown). */
  async closeAll(): Promise<void> {
    this.#closed = true;
    await Promise.all([...this.#live.keys()].map((id) => this.#end(id, 'shutdown')));
  }

  #session(id: string): Session {
    const session = this.#live.get(id);
    if (session) return session;
    const ended = this.#ended.get(id);
    if (ended) throw this.#closedError(id, ended);
    throw new RolloutError('SESSION_NOT_FOUND', `no session ${id} on this API server`);
  }

  #closedError(id: string, ended: { reason: EndReason; at: number }): RolloutError {
    return new RolloutError(
      'SESSION_CLOSED',
      `session ${id} ended (${ended.reason}) at ${new Date(ended.at).toISOString()}`,
      { details: { reason: ended.reason } },
    );
  }

  /** Queues `fn` behind the session's other calls; keeps the idle timer from firing while it runs. */
  #call<T>(id: string, fn: (session: Session) => Promise<T>): Promise<T> {
    const session = this.#session(id);
    session.pending += 1;
    session.held.touch();
    const run = session.queue.then(async () => {
      // The session may have ended while this call waited its turn.
      const current = this.#session(id);
      const keepAlive = setInterval(() => current.held.touch(), Math.max(SECOND, (current.idleTimeoutS * SECOND) / 3));
      keepAlive.unref();
      try {
        return await fn(current);
      } catch (thrown) {
        const err = coerceError(thrown);
        if (err.code === 'SANDBOX_DEAD') {
          await this.#end(id, 'sandbox-lost', err);
          throw err;
        }
        // A call cut off because the session ended (deleted, idle, lifetime) answers with why it ended.
        const ended = this.#ended.get(id);
        if (ended && current.controller.signal.aborted) throw this.#closedError(id, ended);
        throw err;
      } finally {
        clearInterval(keepAlive);
        current.lastUsedAt = this.#now();
        current.pending -= 1;
        current.held.touch();
      }
    });
    session.queue = run.catch(() => undefined);
    return run;
  }

  async #end(id: string, reason: EndReason, cause?: RolloutError): Promise<void> {
    const session = this.#live.get(id);
    if (!session) return;
    this.#live.delete(id);
    this.#ended.set(id, { reason, at: this.#now() });
    if (this.#ended.size > ENDED_KEPT) this.#ended.delete(this.#ended.keys().next().value as string);
    clearTimeout(session.lifetimeTimer);
    session.controller.abort(new RolloutError('SESSION_CLOSED', `session ${id} ended (${reason})`));
    const log = reason === 'sandbox-lost' ? 'warn' : 'info';
    this.#o.logger[log](
      { sessionId: id, sandboxId: session.held.sandboxId, reason, ...(cause ? { err: cause } : {}) },
      'session ended',
    );
    await session.held
      .release()
      .catch((err: unknown) =>
        this.#o.logger.warn({ err, sessionId: id }, 'could not release the session sandbox; the reaper will'),
      );
  }

  #describe(s: Session): SessionBody {
    return {
      id: s.id,
      sandbox_id: s.held.sandboxId,
      image: s.image,
      tools: [...s.tools],
      env: s.shownEnv,
      created_at: new Date(s.createdAt).toISOString(),
      expires_at: new Date(s.expiresAt).toISOString(),
      last_used_at: new Date(s.lastUsedAt).toISOString(),
      idle_timeout_s: s.idleTimeoutS,
      step_timeout_s: s.stepTimeoutS,
      busy: s.pending > 0,
    };
  }
}
