/**
 * The `grpc-timeout` request header: how long the server has for the call, as at most 8 digits and a
 * unit (gRPC over HTTP/2 spec). The node's grpc-js server turns it into the call's deadline, so the
 * node stops working for a caller that no longer waits.
 */

const MAX_DIGITS_VALUE = 99_999_999;
/** From the finest unit the gateway needs (its deadlines are in ms) to the coarsest the spec has. */
const UNITS: readonly (readonly [suffix: string, ms: number])[] = [
  ['m', 1],
  ['S', 1000],
  ['M', 60_000],
  ['H', 3_600_000],
];

/**
 * The header value for `remainingMs` milliseconds left, rounded up so the server never sees a shorter
 * deadline than the gateway's own; at least 1 ms (a timeout of 0 would already be expired).
 */
export function grpcTimeoutHeader(remainingMs: number): string {
  const ms = Math.max(1, Math.ceil(remainingMs));
  for (const [suffix, unitMs] of UNITS) {
    const amount = Math.ceil(ms / unitMs);
    if (amount <= MAX_DIGITS_VALUE) return `${amount}${suffix}`;
  }
  return `${MAX_DIGITS_VALUE}H`;
}
