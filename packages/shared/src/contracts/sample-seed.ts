/**
 * Seeds per sample (docs/policy.md, "Seeds"): `sampling.seed` is a base seed. Sent unchanged to every sample of
 * a group it would make a seeded server (vLLM, SGLang) return G identical rollouts — zero advantage, silently —
 * so sample `i` of episode `e` is sent a seed derived from (seed, e, i): the same submission reproduces the same
 * seeds, and samples of a group differ. Derived seeds fit a signed 32-bit integer, which every server accepts.
 */
import { createHash } from 'node:crypto';

export function sampleSeed(baseSeed: number, episodeId: string, sampleIndex: number): number {
  const digest = createHash('sha256')
    .update(`rollout-fleet sample seed\0${baseSeed}\0${episodeId}\0${sampleIndex}`)
    .digest();
  return digest.readUInt32BE(0) >>> 1;
}
