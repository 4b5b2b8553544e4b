/**
 * The `grpc-timeout` request header: how long the server has for the call, as at most 8 digits and a
 * unit (gRPC over HTTP/2 spec). The gateway writes it from a request's remaining deadline; the node
 * reads it into the call's deadline, so it stops working for a caller that no longer waits.
 */

const MAX_DIGITS_VALUE = 99_999_999;
/** From the finest unit the gateway writes (its deadlines are in ms) to the coarsest the spec has. */
const UNITS: readonly (readonly [suffix: string, ms: number])[] = [
  ['m', 1],
  ['S', 1000],
  ['M', 60_000],
  ['H', 3_600_000],
];
/** Every unit a sender may use, in ms. */
const UNIT_MS: Readonly<Record<string, number>> = { ...Object.fromEntries(UNITS), u: 0.001, n: 0.000001 };
const TIMEOUT_PATTERN = /^(\d{1,8})([HMSmun])$/;

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

/** Milliseconds the header grants: Infinity without a header, undefined when the value is not valid. */
export function grpcTimeoutMs(header: string | string[] | undefined): number | undefined {
  if (header === undefined) return Number.POSITIVE_INFINITY;
  const match = TIMEOUT_PATTERN.exec(String(header));
  return match === null ? undefined : Number(match[1]) * UNIT_MS[match[2]!]!;
}
