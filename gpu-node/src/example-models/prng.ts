/**
 * Seeded pseudo-random numbers for example weights: the same seed gives the same model bytes on every
 * machine, so generated models can be compared, cached and regenerated instead of shipped.
 */
import { mulberry32 } from '../../../shared/src/random/mulberry32.js';

export { mulberry32 };

/** Fills `out` with uniform values in [-limit, limit). */
export function fillUniform(out: Float32Array, seed: number, limit: number): Float32Array {
  const next = mulberry32(seed);
  for (let i = 0; i < out.length; i++) out[i] = (next() * 2 - 1) * limit;
  return out;
}

/**
 * He-uniform weights for a layer feeding a ReLU: limit sqrt(6 / fanIn) keeps the activations'
 * variance roughly constant from layer to layer, so deep stacks neither blow up nor vanish.
 */
export function heUniform(count: number, fanIn: number, seed: number): Float32Array {
  return fillUniform(new Float32Array(count), seed, Math.sqrt(6 / fanIn));
}
