import { describe, expect, it } from 'vitest';
import { closestNames, didYouMean, editDistance } from './did-you-mean.js';

const KNOWN = ['RF_QUEUE', 'RF_PREFIX', 'VEFAAS_SECRET_KEY', 'VEFAAS_ACCESS_KEY', 'RF_WORKER_CONCURRENCY'];

describe('didYouMean', () => {
  it('measures edit distance', () => {
    expect(editDistance('kitten', 'sitting')).toBe(3);
    expect(editDistance('', 'abc')).toBe(3);
    expect(editDistance('same', 'same')).toBe(0);
  });

  it('suggests typos, truncations and extra suffixes, and nothing for unrelated names', () => {
    expect(didYouMean('RF_QEUUE', KNOWN)).toBe('RF_QUEUE');
    expect(didYouMean('VEFAAS_SECRET', KNOWN)).toBe('VEFAAS_SECRET_KEY');
    expect(didYouMean('VEFAAS_ACCESS_KEY_ID', KNOWN)).toBe('VEFAAS_ACCESS_KEY');
    expect(didYouMean('RF_QUEUE_NAME', KNOWN)).toBe('RF_QUEUE');
    expect(didYouMean('RF_CONCURRENCY', KNOWN)).toBeUndefined();
    expect(didYouMean('RF_SOMETHING_ELSE', KNOWN)).toBeUndefined();
  });
});

describe('closestNames', () => {
  it('lists the near misses closest first, at most `max`, never the name itself or far-off names', () => {
    const runs = ['exp-41', 'exp-42', 'exp-420', 'sweep-1', 'exp-42b', 'exp-4'];
    expect(closestNames('exp-43', runs)).toEqual(['exp-41', 'exp-42', 'exp-4']);
    expect(closestNames('exp-43', runs, 2)).toEqual(['exp-41', 'exp-42']);
    expect(closestNames('exp-42', runs)).toEqual(['exp-41', 'exp-420', 'exp-42b']);
    expect(closestNames('completely-different', runs)).toEqual([]);
  });
});
