/**
 * The `Prefer` request header (RFC 7240) on an infer request:
 *
 * - `Prefer: respond-async`              always answer 202 with a job (the inference runs in a worker).
 * - `Prefer: respond-async, spill-over`  try to answer synchronously; only when admission refuses the
 *                                        request for its queue timeout (the model could not answer
 *                                        before the tier's deadline), answer 202 with a job instead.
 * - `spill-over` alone means the same as with `respond-async` (it only makes sense with it).
 *
 * Tokens are case-insensitive, may come in several Prefer headers (joined by commas), and may carry
 * `=value` or `;params`, which we ignore. Unknown preferences are ignored, as the RFC asks. A server
 * without a job queue (no Redis) ignores both and answers synchronously (RFC 7240: a preference may be
 * ignored); a 202 carries `Preference-Applied: respond-async`.
 */

export interface AsyncPreference {
  /** Answer 202 with a job right away. */
  readonly always: boolean;
  /** Answer synchronously, but turn a queue-timeout rejection into a 202 job. */
  readonly spillOver: boolean;
}

export function asyncPreference(prefer: string | null | undefined): AsyncPreference {
  if (prefer === null || prefer === undefined || prefer.trim() === '') return { always: false, spillOver: false };
  const tokens = new Set(
    prefer
      .split(',')
      .map((part) => part.split(';')[0]!.split('=')[0]!.trim().toLowerCase())
      .filter((t) => t !== ''),
  );
  const spillOver = tokens.has('spill-over');
  return { always: tokens.has('respond-async') && !spillOver, spillOver };
}
