/**
 * Seeded pseudo-random streams. Each fault decision point (an action, a SWE-ReX path, the cold start...) draws
 * from its own stream derived from (seed, key), so the faults one endpoint sees depend only on the seed and on
 * the order of requests to that endpoint — interleaving with other endpoints does not shift them.
 */

/** FNV-1a 32-bit hash of a string; mixes the stream key into the seed. */
function fnv1a(text: string): number {
  let hash = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    hash ^= text.charCodeAt(i);
    hash = Math.imul(hash, 0x01000193);
  }
  return hash >>> 0;
}

/** mulberry32: tiny, fast, good enough for fault dice; returns floats in [0, 1). */
export function mulberry32(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

export class RandomStreams {
  private readonly streams = new Map<string, () => number>();

  constructor(private readonly seed: number) {}

  /** Next float in [0, 1) from the stream named `key`. */
  next(key: string): number {
    let stream = this.streams.get(key);
    if (stream === undefined) {
      stream = mulberry32((this.seed ^ fnv1a(key)) >>> 0);
      this.streams.set(key, stream);
    }
    return stream();
  }
}
