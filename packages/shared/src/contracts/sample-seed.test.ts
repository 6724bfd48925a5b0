import { describe, expect, it } from 'vitest';
import { sampleSeed } from './sample-seed.js';

describe('sampleSeed', () => {
  it('gives every sample of a group its own seed, the same on every call', () => {
    const seeds = Array.from({ length: 64 }, (_, i) => sampleSeed(7, 'astropy__astropy-12907', i));
    expect(new Set(seeds).size).toBe(64);
    expect(Array.from({ length: 64 }, (_, i) => sampleSeed(7, 'astropy__astropy-12907', i))).toEqual(seeds);
  });

  it('depends on the base seed and the episode, and fits a signed 32-bit integer', () => {
    expect(sampleSeed(7, 'a', 0)).not.toBe(sampleSeed(8, 'a', 0));
    expect(sampleSeed(7, 'a', 0)).not.toBe(sampleSeed(7, 'b', 0));
    // "a" + sample 10 must not collide with "a1" + sample 0 (the parts are separated).
    expect(sampleSeed(7, 'a', 10)).not.toBe(sampleSeed(7, 'a1', 0));
    for (let i = 0; i < 1000; i++) {
      const seed = sampleSeed(-3, `e${i}`, i);
      expect(Number.isInteger(seed) && seed >= 0 && seed <= 2 ** 31 - 1).toBe(true);
    }
  });
});
