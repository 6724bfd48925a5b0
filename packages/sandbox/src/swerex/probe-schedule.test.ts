import { describe, expect, it } from 'vitest';
import { probePauseMs } from './probe-schedule.js';

const schedule = { minIntervalMs: 100, maxIntervalMs: 2000, overshoot: 0.1 };

describe('probePauseMs', () => {
  it('is a tenth of the time waited once that exceeds the shortest pause', () => {
    expect(probePauseMs(3000, schedule, 1)).toBe(300);
    expect(probePauseMs(8000, schedule, 1)).toBe(800);
  });

  it('stays within [minIntervalMs, maxIntervalMs]', () => {
    expect(probePauseMs(0, schedule, 1)).toBe(100);
    expect(probePauseMs(500, schedule, 1)).toBe(100);
    expect(probePauseMs(60_000, schedule, 1)).toBe(2000);
    expect(probePauseMs(-5, schedule, 1)).toBe(100);
  });

  it('jitters down by up to 20 %, never up', () => {
    expect(probePauseMs(3000, schedule, 0)).toBeCloseTo(240);
    for (let i = 0; i < 100; i++) {
      const pause = probePauseMs(4000, schedule);
      expect(pause).toBeGreaterThanOrEqual(320);
      expect(pause).toBeLessThanOrEqual(400);
    }
  });

  it('finds a sandbox at most `overshoot` of its start time late, whatever the start time', () => {
    for (const startMs of [300, 550, 800, 3000, 5500, 8000]) {
      // Probes as waitUntilAlive sends them (instant answers, worst jitter: none).
      let t = 0;
      while (t < startMs) t += probePauseMs(t, schedule, 1);
      expect(t - startMs).toBeLessThanOrEqual(Math.max(schedule.minIntervalMs, schedule.overshoot * startMs));
    }
  });
});
