/**
 * Sandbox lifecycle: Starting → Ready | Failed, Kill/expiry → Terminating → removed (Describe then answers
 * ResourceNotFound). The manager owns every instance it launched and kills them all on close.
 *
 * Local choices where the real service is UNCERTAIN (vefaas-api.md §6):
 * - Expiry kills the sandbox (same path as KillSandbox); no pause, no grace.
 * - An instance that dies on its own (crash, admin kill-instance, injected death) is reported `Failed` with
 *   ErrorCode `function_health_check_failed` (or removed, with `onInstanceDeath: 'gone'`).
 * - A Failed sandbox stays listed until it is killed or expires.
 */
import { EventEmitter } from 'node:events';
import { randomBytes } from 'node:crypto';
import type { Logger } from '@rollout-fleet/shared';
import { LaunchError, type RunningInstance, type SandboxBackend } from '../backends/backend.js';
import type { FaultController } from '../faults/fault-controller.js';
import {
  SANDBOX_STATUSES,
  type SandboxErrorCode,
  type SandboxRecord,
  type SandboxSpec,
  type SandboxStatus,
} from './sandbox-record.js';

const SECOND = 1000;

export interface SandboxManagerOptions {
  functionId: string;
  backend: SandboxBackend;
  faults: FaultController;
  logger: Logger;
  /** How long a sandbox may stay Starting before it is failed. @defaultValue 120 * SECOND */
  coldStartTimeoutMs?: number;
  /** Pause between `/is_alive` probes while starting. @defaultValue 50 ms */
  aliveProbeIntervalMs?: number;
  /** What Describe shows after an instance died by itself. @defaultValue 'failed' */
  onInstanceDeath?: 'failed' | 'gone';
  now?: () => number;
}

export interface SandboxEvents {
  status: [record: SandboxRecord];
  removed: [id: string];
}

export class SandboxManager extends EventEmitter<SandboxEvents> {
  private readonly records = new Map<string, SandboxRecord>();
  private readonly pending = new Set<Promise<unknown>>();
  private readonly now: () => number;
  private readonly coldStartTimeoutMs: number;
  private readonly probeIntervalMs: number;
  private closed = false;
  /** Sandboxes ever created, and the summed lifetime (create → gone) of those already gone, ms. */
  private readonly usageTotals = { created: 0, goneMs: 0 };

  constructor(private readonly options: SandboxManagerOptions) {
    super();
    // Tests and the create path wait on events per sandbox; thousands of sandboxes are normal.
    this.setMaxListeners(0);
    this.now = options.now ?? Date.now;
    this.coldStartTimeoutMs = options.coldStartTimeoutMs ?? 120 * SECOND;
    this.probeIntervalMs = options.aliveProbeIntervalMs ?? 50;
  }

  get functionId(): string {
    return this.options.functionId;
  }

  get(id: string): SandboxRecord | undefined {
    return this.records.get(id);
  }

  list(): SandboxRecord[] {
    return [...this.records.values()];
  }

  counts(): Record<SandboxStatus, number> & { total: number } {
    const counts = { total: this.records.size, Starting: 0, Ready: 0, Failed: 0, Terminating: 0 };
    for (const record of this.records.values()) counts[record.status]++;
    return counts;
  }

  /**
   * What a bill would count: sandboxes created so far, and sandbox-seconds (create → gone; the live ones up
   * to now).
   */
  usage(): { created: number; sandboxSeconds: number } {
    let liveMs = 0;
    const now = this.now();
    for (const record of this.records.values()) liveMs += now - record.createdAt;
    return { created: this.usageTotals.created, sandboxSeconds: (this.usageTotals.goneMs + liveMs) / 1000 };
  }

  /** Sandboxes whose instance is (or may still be) running. */
  liveInstances(): number {
    let live = 0;
    for (const record of this.records.values()) if (record.instance !== null) live++;
    return live;
  }

  /**
   * Registers the sandbox (status Starting) and starts it in the background. `started` settles once it is
   * Ready or Failed; it never rejects.
   */
  create(
    spec: SandboxSpec,
    lifetimeMs: number,
    coldStartDelayMs = 0,
  ): { record: SandboxRecord; started: Promise<void> } {
    if (this.closed) throw new Error('sandbox manager is closed');
    const createdAt = this.now();
    const record: SandboxRecord = {
      id: newSandboxId(),
      functionId: this.options.functionId,
      spec,
      status: 'Starting',
      errorCode: '',
      errorMessage: '',
      createdAt,
      expireAt: createdAt + lifetimeMs,
      instance: null,
      terminating: false,
      startTimedOut: false,
      expiryTimer: null,
    };
    this.records.set(record.id, record);
    this.usageTotals.created += 1;
    this.armExpiry(record);
    this.options.logger.info({ sandboxId: record.id, image: spec.image, lifetimeMs }, 'sandbox starting');
    const started = this.track(this.start(record, coldStartDelayMs));
    return { record, started };
  }

  /** Moves the deadline to now + lifetime (SetSandboxTimeout counts from now). */
  setLifetime(record: SandboxRecord, lifetimeMs: number): void {
    record.expireAt = this.now() + lifetimeMs;
    this.armExpiry(record);
  }

  /**
   * Starts termination: the sandbox reports Terminating at once and disappears once its processes are
   * dead (plus an injected stuck window). `done` resolves when it is gone.
   */
  kill(record: SandboxRecord, reason: 'kill' | 'expired' | 'shutdown'): { done: Promise<void> } {
    if (record.terminating) return { done: this.waitRemoved(record.id) };
    record.terminating = true;
    this.clearExpiry(record);
    this.setStatus(record, 'Terminating');
    this.options.logger.info({ sandboxId: record.id, reason }, 'sandbox terminating');
    const stuckMs = reason === 'shutdown' ? 0 : this.options.faults.stuckTerminatingMs();
    const done = this.track(
      (async () => {
        await this.stopInstance(record);
        if (stuckMs > 0) await delay(stuckMs, () => this.closed);
        this.remove(record);
      })(),
    );
    return { done };
  }

  /** Kills the instance's processes but keeps the record: the gateway then sees a dead instance. */
  async killInstance(record: SandboxRecord): Promise<void> {
    const instance = record.instance;
    if (instance === null) return;
    await instance.kill();
    await instance.exited;
  }

  /** Kills every sandbox and waits for all of them (and all background work) to finish. */
  async close(): Promise<void> {
    this.closed = true;
    for (const record of this.records.values()) this.kill(record, 'shutdown');
    while (this.pending.size > 0) await Promise.allSettled([...this.pending]);
  }

  private async start(record: SandboxRecord, coldStartDelayMs: number): Promise<void> {
    const deadline = this.now() + this.coldStartTimeoutMs;
    if (coldStartDelayMs > 0) await delay(coldStartDelayMs, () => record.terminating);
    if (record.terminating) return;
    let instance: RunningInstance;
    try {
      instance = await this.options.backend.launch({
        sandboxId: record.id,
        command: record.spec.command,
        image: record.spec.image === '' ? null : record.spec.image,
        envs: Object.fromEntries(record.spec.envs.map((env) => [env.Key, env.Value])),
        memoryMB: record.spec.memoryMB,
        cpuMilli: record.spec.cpuMilli,
      });
    } catch (err) {
      const message = err instanceof Error ? err.message : String(err);
      if (!(err instanceof LaunchError))
        this.options.logger.warn({ sandboxId: record.id, err }, 'sandbox launch failed');
      this.fail(record, 'function_initialize_failed', message);
      return;
    }
    if (record.terminating) {
      await instance.kill();
      return;
    }
    record.instance = instance;
    void instance.exited.then((exit) => this.onExited(record, instance, exit));
    while (!record.terminating && record.instance === instance && record.status === 'Starting') {
      if (await instance.isAlive()) {
        if (record.status === 'Starting' && !record.terminating) this.setStatus(record, 'Ready');
        this.options.logger.info(
          { sandboxId: record.id, pid: instance.pid, startMs: this.now() - record.createdAt },
          'sandbox ready',
        );
        return;
      }
      if (this.now() >= deadline) {
        record.startTimedOut = true;
        this.fail(record, 'function_health_check_failed', `server not alive within ${this.coldStartTimeoutMs} ms`);
        await instance.kill();
        return;
      }
      await delay(this.probeIntervalMs, () => record.terminating);
    }
  }

  private onExited(
    record: SandboxRecord,
    instance: RunningInstance,
    exit: { code: number | null; signal: string | null },
  ): void {
    if (record.instance === instance) record.instance = null;
    if (record.terminating || !this.records.has(record.id)) return;
    const message = `instance exited (code ${String(exit.code)}, signal ${String(exit.signal)})`;
    this.options.logger.warn({ sandboxId: record.id, exit }, 'sandbox instance died');
    if (record.status === 'Starting') {
      this.fail(record, 'function_initialize_failed', message);
    } else if (this.options.onInstanceDeath === 'gone') {
      this.clearExpiry(record);
      this.remove(record);
    } else if (record.status !== 'Failed') {
      this.fail(record, 'function_health_check_failed', message);
    }
  }

  private fail(record: SandboxRecord, code: SandboxErrorCode, message: string): void {
    if (record.terminating) return;
    record.errorCode = code;
    record.errorMessage = message;
    this.setStatus(record, 'Failed');
    this.options.logger.warn({ sandboxId: record.id, errorCode: code, errorMessage: message }, 'sandbox failed');
  }

  private async stopInstance(record: SandboxRecord): Promise<void> {
    const instance = record.instance;
    if (instance === null) return;
    try {
      await instance.kill();
      await instance.exited;
    } catch (err) {
      this.options.logger.error({ sandboxId: record.id, err }, 'could not kill sandbox instance');
    }
    record.instance = null;
  }

  private remove(record: SandboxRecord): void {
    if (this.records.get(record.id) !== record) return;
    this.records.delete(record.id);
    this.usageTotals.goneMs += this.now() - record.createdAt;
    this.options.logger.info({ sandboxId: record.id }, 'sandbox removed');
    this.emit('removed', record.id);
  }

  private setStatus(record: SandboxRecord, status: SandboxStatus): void {
    record.status = status;
    this.emit('status', record);
  }

  private armExpiry(record: SandboxRecord): void {
    this.clearExpiry(record);
    const wait = Math.max(0, record.expireAt - this.now());
    record.expiryTimer = setTimeout(() => {
      record.expiryTimer = null;
      if (this.records.get(record.id) === record) this.kill(record, 'expired');
    }, wait);
    record.expiryTimer.unref();
  }

  private clearExpiry(record: SandboxRecord): void {
    if (record.expiryTimer !== null) clearTimeout(record.expiryTimer);
    record.expiryTimer = null;
  }

  private waitRemoved(id: string): Promise<void> {
    if (!this.records.has(id)) return Promise.resolve();
    return new Promise((resolve) => {
      const onRemoved = (removed: string): void => {
        if (removed !== id) return;
        this.off('removed', onRemoved);
        resolve();
      };
      this.on('removed', onRemoved);
    });
  }

  private track<T>(work: Promise<T>): Promise<T> {
    this.pending.add(work);
    void work.finally(() => this.pending.delete(work));
    return work;
  }

  static readonly statuses = SANDBOX_STATUSES;
}

/** Sandbox ids look like the instance names veFaaS hands out: lower-case, DNS-safe, unique. */
function newSandboxId(): string {
  return `sbx-${randomBytes(8).toString('hex')}`;
}

/** Waits `ms`, polling `cancelled` so a kill cuts the wait short without leaving timers behind. */
function delay(ms: number, cancelled: () => boolean): Promise<void> {
  return new Promise((resolve) => {
    const end = Date.now() + ms;
    const tick = (): void => {
      const left = end - Date.now();
      if (left <= 0 || cancelled()) resolve();
      else setTimeout(tick, Math.min(left, 100)).unref();
    };
    tick();
  });
}
