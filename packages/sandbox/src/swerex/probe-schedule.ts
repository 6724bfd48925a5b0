/**
 * When to ask a starting sandbox again whether it is up. A pause that grows by a fixed factor per probe
 * (100 ms × 1.5ⁿ) finds a sandbox up to a third of its start time late, 0.15–0.5 s on a 0.3–0.8 s start and
 * up to 2 s on a 3–8 s one; every episode pays that, and the fleet's last episodes pay it in the makespan.
 * Bounding each pause by a fraction of the time waited so far keeps the lateness a small, fixed share of the
 * start time whatever the platform's cold start is, for a few more probes (about 4 a second per starting
 * sandbox at 10 %).
 */
export interface ProbeSchedule {
  /** Shortest pause (and the first). */
  minIntervalMs: number;
  /** Longest pause. */
  maxIntervalMs: number;
  /** Longest pause as a fraction of the time waited so far. */
  overshoot: number;
}

/**
 * The pause before the next probe after `waitedMs` without an answer: `overshoot` × `waitedMs` within
 * [minIntervalMs, maxIntervalMs], jittered down by up to 20 % (`random` in [0, 1)) — never up, so the bound
 * holds and thousands of starting sandboxes still do not probe in lock-step.
 */
export function probePauseMs(waitedMs: number, schedule: ProbeSchedule, random = Math.random()): number {
  const pause = Math.min(
    schedule.maxIntervalMs,
    Math.max(schedule.minIntervalMs, schedule.overshoot * Math.max(0, waitedMs)),
  );
  return pause * (0.8 + 0.2 * random);
}
