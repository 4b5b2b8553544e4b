/**
 * mulberry32: uniform numbers in [0, 1) from a 32-bit seed, the same sequence on every machine. Small and fast;
 * used for example-model weights, seeded sampling and benchmark arrival times, none of which need more.
 */
export function mulberry32(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 2 ** 32;
  };
}
