/**
 * Fault-injection configuration (validated; unknown keys rejected). Rates are probabilities in [0, 1];
 * latencies are milliseconds, either fixed or uniform in [min, max]. Per-key maps take an action name
 * (CreateSandbox, ...) or a SWE-ReX path (/run_in_session, ...), with "*" as the fallback for every key.
 */
import { z } from 'zod';

const Rate = z.number().min(0).max(1);
const Millis = z.number().int().min(0);
export const LatencySpecSchema = z.union([Millis, z.strictObject({ min: Millis, max: Millis })]);
const PerKeyLatency = z.record(z.string(), LatencySpecSchema);
const PerKeyRate = z.record(z.string(), Rate);

export const FaultConfigSchema = z.strictObject({
  /** Seed of the fault dice. @defaultValue 1 */
  seed: z.number().int().optional(),
  controlPlane: z
    .strictObject({
      /** Added before the action runs, per action name or "*". */
      latencyMs: PerKeyLatency.optional(),
      /** Probability of answering 5xx `InternalError` instead of running the action. */
      errorRate: Rate.optional(),
      /** @defaultValue 500 */
      errorStatus: z.number().int().min(500).max(599).optional(),
      /** Probability per action of never answering (the socket stays open until the client gives up). */
      hang: PerKeyRate.optional(),
      /**
       * Probability per action that the action RUNS (a CreateSandbox does create its sandbox) but its answer
       * never comes: the client times out not knowing what happened.
       */
      lostAnswer: PerKeyRate.optional(),
      /**
       * Per action or "*": every call answers this veFaaS error instead of running (e.g. ListSandboxes →
       * `{"code": "AccessDenied", "status": 403}`, a key pair without a veFaaS policy; KillSandbox → a kill that fails).
       */
      answer: z
        .record(
          z.string(),
          z.strictObject({
            code: z.string().min(1),
            status: z.number().int().min(400).max(599),
            message: z.string().optional(),
          }),
        )
        .optional(),
    })
    .optional(),
  gateway: z
    .strictObject({
      /** Added before the request is forwarded, per SWE-ReX path or "*". */
      latencyMs: PerKeyLatency.optional(),
      /** Probability of a gateway 5xx instead of forwarding. */
      errorRate: Rate.optional(),
      /** @defaultValue 502 */
      errorStatus: z.number().int().min(500).max(599).optional(),
      /** Probability per path of never answering. */
      hang: PerKeyRate.optional(),
      /** Probability per path that the instance dies while the request is in flight. */
      instanceDeathRate: PerKeyRate.optional(),
    })
    .optional(),
  throttle: z
    .strictObject({
      /** More CreateSandbox calls than this within any 1 s window are rejected. Unset = unlimited. */
      createPerSecond: z.number().int().min(0).optional(),
      /**
       * Token bucket: CreateSandbox calls admitted per second on average (fractions allowed, e.g. 500/min ≈ 8.33),
       * with up to `burst` at once after a quiet spell. Checked in addition to `createPerSecond`.
       */
      ratePerSecond: z.number().positive().optional(),
      /** @defaultValue 1 */
      burst: z.number().int().min(1).optional(),
      /** @defaultValue "AccountFlowLimitExceeded" */
      code: z.string().min(1).optional(),
      /** @defaultValue 429 */
      status: z.number().int().min(400).max(599).optional(),
    })
    .optional(),
  coldStart: z
    .strictObject({
      /** Extra time a sandbox spends in Starting before its process is launched. */
      delayMs: LatencySpecSchema.optional(),
      /** Probability that CreateSandbox fails with a cold-start timeout (`UserTimeoutError`). */
      timeoutRate: Rate.optional(),
      /**
       * While a sandbox is Starting, the gateway answers as for an unknown instance (the dead-instance answer,
       * 404 by default) instead of 503 InstanceNotReady: a platform whose route learns an instance only once it
       * runs. Clients then ask DescribeSandbox whether the start Failed. @defaultValue false
       */
      unknownToGateway: z.boolean().optional(),
    })
    .optional(),
  /**
   * The sandbox's shell freezes (every process of its terminal stopped) for `ms` right after a command's prompt
   * came back, when the SWE-ReX server goes on to fetch the exit code: a starved CPU at the worst moment. The
   * reference's 1 s exit-code wait runs out (exit_code null) and the late exit code and prompt stay in the
   * terminal for the next command (a desynced session). Commands run with `check: "ignore"` have no exit-code
   * step and are not affected. Socket sandboxes only (the in-process emulation ignores it).
   */
  shellStall: z
    .strictObject({
      /** Probability per /run_in_session request (among the commands `match` selects). */
      rate: Rate,
      /** How long the shell stays frozen. @defaultValue 1500 */
      ms: LatencySpecSchema.optional(),
      /** Only commands in which this regular expression (Python `re.search`) finds a match; unset = every command. */
      match: z
        .string()
        .min(1)
        .refine((source) => isRegExp(source), 'not a valid regular expression')
        .optional(),
    })
    .optional(),
  terminating: z
    .strictObject({
      /** Probability that a killed sandbox stays `Terminating` for `stuckMs` before it disappears. */
      stuckRate: Rate.optional(),
      /** @defaultValue 30_000 */
      stuckMs: Millis.optional(),
    })
    .optional(),
});

function isRegExp(source: string): boolean {
  try {
    new RegExp(source);
    return true;
  } catch {
    return false;
  }
}

export type FaultConfig = z.infer<typeof FaultConfigSchema>;
export type LatencySpec = z.infer<typeof LatencySpecSchema>;

/** Parses untrusted input (admin endpoint, --faults file); throws a readable Error listing every problem. */
export function parseFaultConfig(input: unknown): FaultConfig {
  const parsed = FaultConfigSchema.safeParse(input);
  if (!parsed.success) {
    const problems = parsed.error.issues.map((issue) => `${issue.path.join('.') || '(root)'}: ${issue.message}`);
    throw new Error(`invalid fault config: ${problems.join('; ')}`);
  }
  return parsed.data;
}
