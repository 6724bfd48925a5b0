/**
 * Decides, request by request, which fault (if any) to inject. Deterministic: the same seed and the same
 * sequence of requests per endpoint give the same decisions (see prng.ts). Replacing the config re-seeds.
 */
import { type FaultConfig, type LatencySpec, parseFaultConfig } from './fault-config.js';
import { RandomStreams } from './prng.js';

const SECOND = 1000;

export interface InjectedError {
  status: number;
  code: string;
  message: string;
}

export interface RequestFault {
  /** Delay before handling; 0 = none. */
  latencyMs: number;
  /** Never answer. */
  hang: boolean;
  /** Answer with this error instead of handling. */
  error: InjectedError | null;
}

export interface ControlPlaneFault extends RequestFault {
  /** Run the action, then never answer. */
  lostAnswer: boolean;
}

export interface GatewayFault extends RequestFault {
  /** Kill the instance while the request is in flight. */
  killInstance: boolean;
  /** Freeze the sandbox's shell before the exit code is fetched (`/run_in_session` only). */
  shellStall: ShellStall | null;
}

/** What the sandbox's SWE-ReX server is told to do (header, see runtime/rex_stall.py). */
export interface ShellStall {
  ms: number;
  /** Only commands this regular expression matches. */
  match?: string;
}

const SHELL_STALL_MS = 1500;

export interface ColdStartFault {
  delayMs: number;
  /** Fail CreateSandbox with a cold-start timeout. */
  timeout: boolean;
}

export interface FaultControllerOptions {
  /** Clock for the throttle window (ms). @defaultValue Date.now */
  now?: () => number;
}

export class FaultController {
  private current: FaultConfig;
  private dice: RandomStreams;
  private readonly now: () => number;
  private createTimes: number[] = [];
  /** Token bucket of `throttle.ratePerSecond`: tokens left and when they were counted. */
  private bucket: { tokens: number; at: number } | null = null;
  /** `injectedErrors` is every injected 5xx; `controlPlaneErrors` + `gatewayErrors` split it by where. */
  private readonly counters = {
    injectedErrors: 0,
    controlPlaneErrors: 0,
    gatewayErrors: 0,
    hangs: 0,
    throttled: 0,
    instanceDeaths: 0,
    shellStalls: 0,
    lostAnswers: 0,
    coldStartTimeouts: 0,
    createsAdmitted: 0,
  };
  /** Requests seen, by `cp:<Action>` and `gw:<path>` (how often a client polls: readiness back-off tests). */
  private readonly requests = new Map<string, number>();

  constructor(config: FaultConfig = {}, options: FaultControllerOptions = {}) {
    this.current = parseFaultConfig(config);
    this.dice = new RandomStreams(this.current.seed ?? 1);
    this.now = options.now ?? Date.now;
  }

  get config(): FaultConfig {
    return structuredClone(this.current);
  }

  /** How many faults were injected so far, by kind. */
  get stats(): Readonly<typeof this.counters> {
    return { ...this.counters };
  }

  /** Requests seen so far by control-plane action (`cp:DescribeSandbox`) and gateway path (`gw:/is_alive`). */
  get calls(): Record<string, number> {
    return Object.fromEntries(this.requests);
  }

  /** Replaces the whole config (validated) and restarts the dice from its seed. */
  configure(config: unknown): FaultConfig {
    this.current = parseFaultConfig(config);
    this.dice = new RandomStreams(this.current.seed ?? 1);
    this.createTimes = [];
    this.bucket = null;
    return this.config;
  }

  /** Removes every fault (keeps the seed). */
  reset(): void {
    this.configure({ seed: this.current.seed });
  }

  controlPlane(action: string): ControlPlaneFault {
    const cfg = this.current.controlPlane ?? {};
    const key = `cp:${action}`;
    this.seen(key);
    const latencyMs = this.latency(`${key}:latency`, pick(cfg.latencyMs, action));
    const hang = this.roll(`${key}:hang`, pick(cfg.hang, action) ?? 0);
    const failed = this.roll(`${key}:error`, cfg.errorRate ?? 0);
    const lostAnswer = this.roll(`${key}:lost`, pick(cfg.lostAnswer, action) ?? 0);
    const answer = pick(cfg.answer, action);
    const error = answer
      ? {
          status: answer.status,
          code: answer.code,
          message: answer.message ?? `injected fault: ${action} answers ${answer.code}`,
        }
      : failed
        ? { status: cfg.errorStatus ?? 500, code: 'InternalError', message: 'injected fault: internal error' }
        : null;
    if (lostAnswer && !hang && !error) this.counters.lostAnswers++;
    if (error && !hang) this.counters.controlPlaneErrors++;
    return { ...this.count({ latencyMs, hang, error }), lostAnswer };
  }

  gateway(path: string): GatewayFault {
    const cfg = this.current.gateway ?? {};
    const key = `gw:${path}`;
    this.seen(key);
    const latencyMs = this.latency(`${key}:latency`, pick(cfg.latencyMs, path));
    const hang = this.roll(`${key}:hang`, pick(cfg.hang, path) ?? 0);
    const failed = this.roll(`${key}:error`, cfg.errorRate ?? 0);
    const killInstance = this.roll(`${key}:death`, pick(cfg.instanceDeathRate, path) ?? 0);
    if (killInstance) this.counters.instanceDeaths++;
    const error = failed
      ? { status: cfg.errorStatus ?? 502, code: 'GatewayError', message: 'injected fault: bad gateway' }
      : null;
    if (error && !hang) this.counters.gatewayErrors++;
    const shellStall = path === '/run_in_session' ? this.shellStall() : null;
    return { ...this.count({ latencyMs, hang, error }), killInstance, shellStall };
  }

  /**
   * The platform's create limit: a sliding 1 s window (`createPerSecond`) and/or a token bucket
   * (`ratePerSecond` + `burst`). Returns the error to answer, or null when admitted.
   */
  admitCreate(): InjectedError | null {
    const cfg = this.current.throttle;
    if (cfg?.createPerSecond === undefined && cfg?.ratePerSecond === undefined) {
      this.counters.createsAdmitted++;
      return null;
    }
    const now = this.now();
    const throttled = (why: string): InjectedError => {
      this.counters.throttled++;
      return {
        status: cfg.status ?? 429,
        code: cfg.code ?? 'AccountFlowLimitExceeded',
        message: `flow limit exceeded: ${why}`,
      };
    };
    if (cfg.createPerSecond !== undefined) {
      this.createTimes = this.createTimes.filter((t) => now - t < SECOND);
      if (this.createTimes.length >= cfg.createPerSecond)
        return throttled(`more than ${cfg.createPerSecond} CreateSandbox per second`);
    }
    if (cfg.ratePerSecond !== undefined) {
      const burst = cfg.burst ?? 1;
      const previous = this.bucket ?? { tokens: burst, at: now };
      const tokens = Math.min(burst, previous.tokens + ((now - previous.at) / SECOND) * cfg.ratePerSecond);
      if (tokens < 1) {
        this.bucket = { tokens, at: now };
        return throttled(`more than ${cfg.ratePerSecond} CreateSandbox per second (burst ${burst})`);
      }
      this.bucket = { tokens: tokens - 1, at: now };
    }
    if (cfg.createPerSecond !== undefined) this.createTimes.push(now);
    this.counters.createsAdmitted++;
    return null;
  }

  coldStart(): ColdStartFault {
    const cfg = this.current.coldStart ?? {};
    const delayMs = this.latency('cold-start:delay', cfg.delayMs);
    const timeout = this.roll('cold-start:timeout', cfg.timeoutRate ?? 0);
    if (timeout) this.counters.coldStartTimeouts++;
    return { delayMs, timeout };
  }

  private shellStall(): ShellStall | null {
    const cfg = this.current.shellStall;
    if (!cfg || !this.roll('gw:/run_in_session:stall', cfg.rate)) return null;
    this.counters.shellStalls++;
    const ms = cfg.ms === undefined ? SHELL_STALL_MS : this.latency('gw:/run_in_session:stall-ms', cfg.ms);
    return { ms, ...(cfg.match === undefined ? {} : { match: cfg.match }) };
  }

  /** Does the gateway answer for a Starting instance as for an unknown one (coldStart.unknownToGateway)? */
  startingUnknownToGateway(): boolean {
    return this.current.coldStart?.unknownToGateway === true;
  }

  /** How long a killed sandbox lingers in Terminating (0 = it goes away as soon as its process is dead). */
  stuckTerminatingMs(): number {
    const cfg = this.current.terminating ?? {};
    return this.roll('terminating:stuck', cfg.stuckRate ?? 0) ? (cfg.stuckMs ?? 30 * SECOND) : 0;
  }

  private seen(key: string): void {
    this.requests.set(key, (this.requests.get(key) ?? 0) + 1);
  }

  private count<T extends RequestFault>(fault: T): T {
    if (fault.hang) this.counters.hangs++;
    else if (fault.error) this.counters.injectedErrors++;
    return fault;
  }

  /** Always consumes one draw when a rate is configured, so the sequence does not depend on earlier outcomes. */
  private roll(key: string, rate: number): boolean {
    if (rate <= 0) return false;
    return this.dice.next(key) < rate;
  }

  private latency(key: string, spec: LatencySpec | undefined): number {
    if (spec === undefined) return 0;
    if (typeof spec === 'number') return spec;
    const span = Math.max(0, spec.max - spec.min);
    return spec.min + Math.floor(this.dice.next(key) * (span + 1));
  }
}

function pick<T>(map: Record<string, T> | undefined, key: string): T | undefined {
  if (map === undefined) return undefined;
  return Object.hasOwn(map, key) ? map[key] : map['*'];
}
