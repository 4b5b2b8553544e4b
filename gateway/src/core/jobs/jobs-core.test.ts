import { describe, expect, it } from 'vitest';
import { TesseraError } from '../../../../shared/src/errors/index.js';
import { AdmissionQueue } from '../admission/index.js';
import { fromBase64, toBase64 } from './bytes.js';
import { idempotencyKeyOf, idempotentJobId, JOB_ID_PATTERN, randomJobId } from './idempotency.js';
import { asyncPreference } from './prefer-header.js';
import { isQueueTimeoutRejection } from './spill-over.js';
import { generateWebhookSecret, signWebhook, verifyWebhookSignature } from './webhook-signing.js';

describe('Prefer header', () => {
  it('reads respond-async and spill-over as RFC 7240 tokens', () => {
    expect(asyncPreference(null)).toEqual({ always: false, spillOver: false });
    expect(asyncPreference('respond-async')).toEqual({ always: true, spillOver: false });
    expect(asyncPreference('Respond-Async; wait=10')).toEqual({ always: true, spillOver: false });
    expect(asyncPreference('respond-async, spill-over')).toEqual({ always: false, spillOver: true });
    expect(asyncPreference('return=minimal,SPILL-OVER')).toEqual({ always: false, spillOver: true });
    expect(asyncPreference('return=minimal')).toEqual({ always: false, spillOver: false });
  });
});

describe('idempotency', () => {
  it('derives one id per tenant and key, and different ids across tenants', async () => {
    const a = await idempotentJobId('ta', 'k1');
    expect(a).toBe(await idempotentJobId('ta', 'k1'));
    expect(a).not.toBe(await idempotentJobId('tb', 'k1'));
    expect(a).not.toBe(await idempotentJobId('ta', 'k2'));
    expect(JOB_ID_PATTERN.test(a)).toBe(true);
    expect(JOB_ID_PATTERN.test(randomJobId())).toBe(true);
    expect(randomJobId()).not.toBe(randomJobId());
  });

  it('accepts plain and quoted keys and refuses malformed ones', () => {
    expect(idempotencyKeyOf(new Headers())).toBeUndefined();
    expect(idempotencyKeyOf(new Headers({ 'idempotency-key': '"abc-1"' }))).toBe('abc-1');
    expect(() => idempotencyKeyOf(new Headers({ 'idempotency-key': 'a b' }))).toThrow(TesseraError);
    expect(() => idempotencyKeyOf(new Headers({ 'idempotency-key': 'x'.repeat(256) }))).toThrow(/1-255/);
  });
});

describe('webhook signatures', () => {
  it('verifies what it signs, within the tolerance, with the right secret only', async () => {
    const secret = generateWebhookSecret();
    const now = 1_700_000_000_000;
    const header = await signWebhook(secret, '{"a":1}', now);
    expect(header).toMatch(/^t=1700000000,v1=[0-9a-f]{64}$/);
    expect(await verifyWebhookSignature(secret, '{"a":1}', header, now + 1000)).toBe(true);
    expect(await verifyWebhookSignature(secret, '{"a":2}', header, now)).toBe(false);
    expect(await verifyWebhookSignature(generateWebhookSecret(), '{"a":1}', header, now)).toBe(false);
    expect(await verifyWebhookSignature(secret, '{"a":1}', header, now + 301_000)).toBe(false);
    expect(await verifyWebhookSignature(secret, '{"a":1}', null, now)).toBe(false);
  });
});

describe('base64', () => {
  it('round-trips large binary bodies', () => {
    const bytes = Uint8Array.from({ length: 100_000 }, (_, i) => (i * 7) % 256);
    expect(Buffer.from(fromBase64(toBase64(bytes))).equals(Buffer.from(bytes))).toBe(true);
  });
});

describe('spill-over', () => {
  it('spills only admission refusals for the queue timeout', () => {
    const rejections: TesseraError[] = [];
    const queue = new AdmissionQueue({ name: 'm', load: { room: () => 0, capacity: () => 1, execTimeMs: () => 1000 } });
    const handlers = { dispatch: () => {}, reject: (e: TesseraError) => rejections.push(e) };
    queue.admit({ tier: 't', priority: 1, share: 1, deadline: Date.now() + 10 }, handlers); // estimate says: too late
    expect(rejections).toHaveLength(1);
    expect(isQueueTimeoutRejection(rejections[0])).toBe(true);
    expect(isQueueTimeoutRejection(TesseraError.unavailable('no node'))).toBe(false);
    const noNode = new AdmissionQueue({ name: 'm', load: { room: () => 0, capacity: () => 0, execTimeMs: () => null } });
    noNode.admit({ tier: 't', priority: 1, share: 1, deadline: Date.now() + 10_000 }, handlers);
    expect(isQueueTimeoutRejection(rejections[1])).toBe(false);
  });
});
