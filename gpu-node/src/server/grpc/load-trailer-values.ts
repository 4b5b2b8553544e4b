/**
 * The trailing load headers of an answer (queue depth and in-flight count of its model) as one frozen
 * object per pair of figures. The figures repeat from answer to answer (a wave of 64 sees a few dozen
 * pairs), and a frozen field set is merged with `grpc-status` and HPACK-encoded once
 * (shared/src/grpc/h2-unary-call.ts, shared/src/http/raw-http2/hpack-encoder.ts) instead of per answer.
 */
export const QUEUE_DEPTH_KEY = 'tessera-queue-depth';
export const INFLIGHT_KEY = 'tessera-inflight';

export type LoadTrailerValues = Readonly<Record<string, string>>;

/**
 * Pairs with both figures below this are kept; others are made per call. At most its square (16,384 pairs): every
 * pair kept, with its trailers merged and HPACK-encoded, holds ~2 MB, a quarter of what 256 held (measured, ~8 MB).
 * A wave of 64 stays inside it.
 */
export const CACHED_LOAD_BELOW = 128;

const cached = new Map<number, LoadTrailerValues>();

/** The frozen field set for `queued` and `inflight`: the same object for the same figures while both are below CACHED_LOAD_BELOW. */
export function loadFields(queued: number, inflight: number): LoadTrailerValues {
  const small = Number.isInteger(queued) && Number.isInteger(inflight) && queued >= 0 && inflight >= 0 && queued < CACHED_LOAD_BELOW && inflight < CACHED_LOAD_BELOW;
  if (!small) return { [QUEUE_DEPTH_KEY]: String(queued), [INFLIGHT_KEY]: String(inflight) };
  const key = queued * CACHED_LOAD_BELOW + inflight;
  let fields = cached.get(key);
  if (fields === undefined) {
    fields = Object.freeze({ [QUEUE_DEPTH_KEY]: String(queued), [INFLIGHT_KEY]: String(inflight) });
    cached.set(key, fields);
  }
  return fields;
}
