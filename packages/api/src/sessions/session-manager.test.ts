/**
 * SessionManager's own rules, apart from any sandbox: a session's environment values never reach an answer or a
 * log — neither in its description nor in the message of a failed start (the supply here only refuses, as a real
 * one does when a set-up command fails and quotes what it ran) — and unknown or ended ids get typed errors.
 */
import { describe, expect, it } from 'vitest';
import { RolloutError, createLogger } from '@rollout-fleet/shared';
import { memorySink } from '@rollout-fleet/test-kit/memory-sink';
import { SessionManager } from './session-manager.js';

const SECRET = 'hf_live_8c1d77a0e2';

describe('SessionManager', () => {
  it("keeps the session environment out of a failed start's error and the logs", async () => {
    const sink = memorySink();
    const manager = new SessionManager({
      supply: {
        acquire: () =>
          Promise.reject(
            new RolloutError(
              'SANDBOX_START_FAILED',
              `setup command failed (exit 1): export HF_TOKEN=${SECRET}\nbash: oops`,
              { details: { output: `HF_TOKEN=${SECRET}` } },
            ),
          ),
      },
      logger: createLogger({ level: 'trace', format: 'json', destination: sink }),
      defaults: { image: 'pyutils', idleTimeoutS: 60, startupTimeoutS: 10, stepTimeoutS: 10 },
    });
    const failed = manager.create({ env: { HF_TOKEN: SECRET }, tools: [], lifetime_s: 600 });
    await expect(failed).rejects.toMatchObject({
      code: 'SANDBOX_START_FAILED',
      message: expect.stringContaining('export HF_TOKEN=[REDACTED]'),
    });
    const err = (await failed.catch((e: unknown) => e)) as RolloutError;
    expect(JSON.stringify(err.details)).not.toContain(SECRET);
    expect(err.message).not.toContain(SECRET);
    expect(sink.text()).not.toContain(SECRET);
    expect(manager.size).toBe(0);
  });

  it('answers SESSION_NOT_FOUND for an id it never had', () => {
    const manager = new SessionManager({
      supply: { acquire: () => Promise.reject(new Error('unused')) },
      logger: createLogger({ level: 'silent', format: 'json' }),
      defaults: { image: undefined, idleTimeoutS: 60, startupTimeoutS: 10, stepTimeoutS: 10 },
    });
    expect(() => manager.describe('ses_nope')).toThrow(expect.objectContaining({ code: 'SESSION_NOT_FOUND' }));
    return expect(manager.create({ env: {}, tools: [], lifetime_s: 600 })).rejects.toMatchObject({
      code: 'INPUT_INVALID',
      message: expect.stringContaining('no sandbox image'),
    });
  });
});
