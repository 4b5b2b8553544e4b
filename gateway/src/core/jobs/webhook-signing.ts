/**
 * Webhook signatures: HMAC-SHA256 with the tenant's webhook secret, over `<timestamp>.<body>`, sent as
 *
 *   Tessera-Signature: t=<unix seconds>,v1=<hex digest>
 *
 * (the scheme Stripe and others use: the timestamp in the signed text lets a receiver refuse replays
 * older than its tolerance). Receivers verify with `verifyWebhookSignature`, or recompute
 * `HMAC_SHA256(secret, t + "." + rawBody)` and compare in constant time. Web Crypto only.
 */
import { toHex } from './bytes.js';

export const SIGNATURE_HEADER = 'tessera-signature';
/** Default tolerance of `verifyWebhookSignature`: 5 minutes. */
export const DEFAULT_SIGNATURE_TOLERANCE_SECONDS = 300;

async function hmacHex(secret: string, text: string): Promise<string> {
  const utf8 = new TextEncoder();
  const key = await crypto.subtle.importKey('raw', utf8.encode(secret), { name: 'HMAC', hash: 'SHA-256' }, false, ['sign']);
  return toHex(await crypto.subtle.sign('HMAC', key, utf8.encode(text)));
}

/** The `Tessera-Signature` value for `body` sent at `nowMs`. */
export async function signWebhook(secret: string, body: string, nowMs: number): Promise<string> {
  const t = Math.floor(nowMs / 1000);
  return `t=${t},v1=${await hmacHex(secret, `${t}.${body}`)}`;
}

/** True when `header` signs `body` with `secret` and its timestamp is within the tolerance of `nowMs`. */
export async function verifyWebhookSignature(
  secret: string,
  body: string,
  header: string | null,
  nowMs: number,
  toleranceSeconds = DEFAULT_SIGNATURE_TOLERANCE_SECONDS,
): Promise<boolean> {
  if (header === null) return false;
  const parts = new Map(header.split(',').map((p) => p.trim().split('=', 2) as [string, string | undefined]));
  const t = Number(parts.get('t'));
  const v1 = parts.get('v1');
  if (!Number.isSafeInteger(t) || v1 === undefined || Math.abs(nowMs / 1000 - t) > toleranceSeconds) return false;
  const expected = await hmacHex(secret, `${t}.${body}`);
  if (expected.length !== v1.length) return false;
  let diff = 0;
  for (let i = 0; i < expected.length; i++) diff |= expected.charCodeAt(i) ^ v1.charCodeAt(i);
  return diff === 0;
}

/** A new webhook secret: "whsec_" + 32 random bytes in hex. */
export function generateWebhookSecret(): string {
  return `whsec_${toHex(crypto.getRandomValues(new Uint8Array(32)))}`;
}
