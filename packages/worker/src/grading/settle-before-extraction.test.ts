import { describe, expect, it } from 'vitest';
import { createLogger } from '@rollout-fleet/shared';
import { type SettleOutcome } from '@rollout-fleet/sandbox';
import { settleBeforeExtraction } from './settle-before-extraction.js';

const logger = createLogger({ level: 'silent', format: 'json' });
const shell = (outcome: SettleOutcome, asked: number[] = []) => ({
  settle: async (o: { timeoutS: number }) => {
    asked.push(o.timeoutS);
    return outcome;
  },
});

describe('settleBeforeExtraction', () => {
  it.each(['in-step', 'caught-up', 'ended'] as const)('%s: nothing to record', async (outcome) => {
    expect(await settleBeforeExtraction(shell(outcome), { stepTimeoutS: 300, logger })).toBeNull();
  });

  it('a shell that never catches up is the model’s doing: graded with SESSION_OUT_OF_SYNC, not retried', async () => {
    expect(await settleBeforeExtraction(shell('out-of-sync'), { stepTimeoutS: 300, logger })).toMatchObject({
      code: 'SESSION_OUT_OF_SYNC',
      class: 'model',
    });
  });

  it('waits per marker as long as a step may take, at most 60 s', async () => {
    const asked: number[] = [];
    await settleBeforeExtraction(shell('in-step', asked), { stepTimeoutS: 300, logger });
    await settleBeforeExtraction(shell('in-step', asked), { stepTimeoutS: 5, logger });
    expect(asked).toEqual([60, 5]);
  });
});
