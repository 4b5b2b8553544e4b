/**
 * Sequence affinity in the dispatcher, with fakes: two dispatchers sharing one store stand for two
 * gateway replicas sharing Redis.
 */
import { describe, expect, it } from 'vitest';
import { httpStatusOf, TesseraError } from '../../../shared/src/errors/index.js';
import { isCacheable } from '../../../shared/src/cache-key/index.js';
import { createMemorySequenceAffinity } from '../../src/adapters/memory/index.js';
import { FakeClock } from '../../src/core/admission/index.js';
import { createDispatcher, type Dispatcher, type DispatchContext } from '../../src/core/routing/index.js';
import { readSequenceParams } from '../../src/core/sequences/index.js';
import { AnsweringTransport, FixedDirectory, MODEL, RecordingStore, seqRequest, tier } from './fakes.js';

function setup(ids = ['a', 'b', 'c'], open = new Set<string>()) {
  const clock = new FakeClock();
  const directory = new FixedDirectory(ids);
  const transport = new AnsweringTransport();
  const store = new RecordingStore(createMemorySequenceAffinity({ now: () => clock.now() }));
  // Two replicas whose p2c draws differ, so without affinity they would pick different nodes.
  const replica = (random: () => number): Dispatcher =>
    createDispatcher({ directory, transport, clock, random, breakers: { isOpen: (id) => open.has(id) }, sequences: { store } });
  let draws = 0;
  const gateways = [replica(() => 0), replica(() => [0.99, 0.5, 0.01][draws++ % 3]!)];
  const ctx = (tenantId = 't1'): DispatchContext => ({ tenantId, tier, deadline: clock.now() + 1000 });
  const nodeOf = async (p: ReturnType<Dispatcher['dispatch']>) => (await p).response.parameters?.node;
  return { clock, directory, transport, store, gateways, ctx, nodeOf, open };
}

async function failure(promise: Promise<unknown>): Promise<TesseraError> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(TesseraError);
  return error as TesseraError;
}

describe('sequence affinity in the dispatcher', () => {
  it('records the START node; every later request, through either replica, goes there; END forgets it', async () => {
    const t = setup();
    const holder = await t.nodeOf(t.gateways[0]!.dispatch(seqRequest(42, { start: true }), t.ctx()));
    for (let i = 0; i < 10; i++) {
      expect(await t.nodeOf(t.gateways[i % 2]!.dispatch(seqRequest(42), t.ctx()))).toBe(holder);
    }
    expect(await t.nodeOf(t.gateways[1]!.dispatch(seqRequest(42, { end: true }), t.ctx()))).toBe(holder);
    expect(t.transport.calls.map((c) => c.node)).toEqual(Array(12).fill(holder));
    expect(await t.store.get({ tenantId: 't1', model: MODEL, sequenceId: 'u:42' })).toBeUndefined();
    const after = await failure(t.gateways[0]!.dispatch(seqRequest(42), t.ctx()));
    expect(after.code).toBe('INVALID_ARG');
  });

  it('keeps the version that answered the START', async () => {
    const t = setup();
    await t.gateways[0]!.dispatch(seqRequest(1, { start: true }), t.ctx());
    expect(await t.store.get({ tenantId: 't1', model: MODEL, sequenceId: 'u:1' })).toMatchObject({ version: '1' });
    await t.gateways[1]!.dispatch(seqRequest(1), t.ctx());
    expect(t.transport.calls[1]!.request.modelVersion).toBe('1');
  });

  it('answers a 400 naming the sequence when a non-START request has no binding', async () => {
    const t = setup();
    const error = await failure(t.gateways[0]!.dispatch(seqRequest(7), t.ctx()));
    expect(error.code).toBe('INVALID_ARG');
    expect(httpStatusOf(error.code)).toBe(400);
    expect(error.message).toBe(`sequence 7 of model '${MODEL}' is not known to the gateway: send sequence_start first`);
    expect(t.transport.calls).toHaveLength(0);
  });

  it('answers a 503 and forgets the binding when the holding node left the directory; a new START goes elsewhere', async () => {
    const t = setup();
    const holder = (await t.nodeOf(t.gateways[0]!.dispatch(seqRequest(9, { start: true }), t.ctx()))) as string;
    t.directory.remove(holder);
    const error = await failure(t.gateways[1]!.dispatch(seqRequest(9), t.ctx()));
    expect(error.code).toBe('UNAVAILABLE');
    expect(httpStatusOf(error.code)).toBe(503);
    expect(error.message).toBe(`the node holding sequence 9 of model '${MODEL}' is gone; start the sequence again`);
    expect(t.transport.calls).toHaveLength(1);
    await expect(t.store.get({ tenantId: 't1', model: MODEL, sequenceId: 'u:9' })).resolves.toBeUndefined();
    const again = await t.nodeOf(t.gateways[1]!.dispatch(seqRequest(9, { start: true }), t.ctx()));
    expect(again).not.toBe(holder);
    expect(await t.nodeOf(t.gateways[0]!.dispatch(seqRequest(9), t.ctx()))).toBe(again);
  });

  it('never retries a follow-up on another node when the holder refuses the connection; 503 and binding gone', async () => {
    const t = setup();
    const holder = (await t.nodeOf(t.gateways[0]!.dispatch(seqRequest(3, { start: true }), t.ctx()))) as string;
    t.transport.dead.add(holder);
    const error = await failure(t.gateways[1]!.dispatch(seqRequest(3), t.ctx()));
    expect(error.code).toBe('UNAVAILABLE');
    expect(error.message).toMatch(new RegExp(`^the node holding sequence 3 of model '${MODEL}' is gone \\(.*ECONNREFUSED.*\\); start the sequence again$`));
    expect(t.transport.calls.map((c) => c.node)).toEqual([holder, holder]);
    await expect(t.store.get({ tenantId: 't1', model: MODEL, sequenceId: 'u:3' })).resolves.toBeUndefined();
  });

  it('treats an open breaker on the holder as gone', async () => {
    const t = setup();
    const holder = (await t.nodeOf(t.gateways[0]!.dispatch(seqRequest(4, { start: true }), t.ctx()))) as string;
    t.open.add(holder);
    const error = await failure(t.gateways[0]!.dispatch(seqRequest(4), t.ctx()));
    expect(error.message).toContain('is gone; start the sequence again');
    expect(t.transport.calls).toHaveLength(1);
  });

  it('retries a START refused before the node took it, and records the node that answered', async () => {
    const t = setup(['a', 'b']);
    t.transport.dead.add('a'); // random 0 → p2c picks a first
    expect(await t.nodeOf(t.gateways[0]!.dispatch(seqRequest(5, { start: true }), t.ctx()))).toBe('b');
    expect(await t.store.get({ tenantId: 't1', model: MODEL, sequenceId: 'u:5' })).toMatchObject({ nodeId: 'b' });
  });

  it('namespaces sequences per tenant, and numeric 5 is not string "5"', async () => {
    const t = setup();
    await t.gateways[0]!.dispatch(seqRequest(5, { start: true }), t.ctx('tenant-a'));
    expect((await failure(t.gateways[0]!.dispatch(seqRequest(5), t.ctx('tenant-b')))).code).toBe('INVALID_ARG');
    expect((await failure(t.gateways[0]!.dispatch(seqRequest('5'), t.ctx('tenant-a')))).message).toContain('sequence 5 of model');
    await expect(t.gateways[1]!.dispatch(seqRequest(5), t.ctx('tenant-a'))).resolves.toBeDefined();
  });

  it('records nothing for START + END in one request', async () => {
    const t = setup();
    await t.gateways[0]!.dispatch(seqRequest(6, { start: true, end: true }), t.ctx());
    await expect(t.store.get({ tenantId: 't1', model: MODEL, sequenceId: 'u:6' })).resolves.toBeUndefined();
  });

  it('lives 60 s until the idle time is known, then the model idle time + 2 s, refreshed by every request', async () => {
    const t = setup();
    await t.gateways[0]!.dispatch(seqRequest(8, { start: true }), t.ctx());
    expect(t.store.ttls).toEqual([60_000]);
    await new Promise((resolve) => setImmediate(resolve)); // the background config read settles
    expect(t.transport.configCalls).toBe(1);
    await t.gateways[0]!.dispatch(seqRequest(8), t.ctx());
    expect(t.store.ttls).toEqual([60_000, 7_000]);
    t.clock.advance(6_999);
    await t.gateways[0]!.dispatch(seqRequest(8), t.ctx()); // still there, and refreshed again
    t.clock.advance(7_000);
    expect((await failure(t.gateways[0]!.dispatch(seqRequest(8), t.ctx()))).code).toBe('INVALID_ARG');
  });

  it('answers 503 with Retry-After when the store fails, without sending anything', async () => {
    const t = setup();
    t.store.failing = true;
    const error = await failure(t.gateways[0]!.dispatch(seqRequest(2), t.ctx()));
    expect(error.code).toBe('UNAVAILABLE');
    expect(error.retryAfterMs).toBe(1000);
    expect(error.message).toContain('the sequence store failed');
    expect(t.transport.calls).toHaveLength(0);
  });

  it('refuses a malformed sequence_id as the node does; requests outside a sequence are untouched', async () => {
    const t = setup();
    const bad = { ...seqRequest(1), parameters: { sequence_id: 1.5 } };
    expect((await failure(t.gateways[0]!.dispatch(bad, t.ctx()))).code).toBe('INVALID_ARG');
    await t.gateways[0]!.dispatch({ ...seqRequest(0), parameters: { sequence_id: 0 } }, t.ctx());
    expect(t.store.ttls).toEqual([]);
  });
});

describe('sequence parameters', () => {
  it('reads ids like the node: uint64 (int64 -1 is 2^64-1), strings, 0 and "" mean none', () => {
    expect(readSequenceParams({ sequence_id: -1, sequence_start: true })).toEqual({ id: 'u:18446744073709551615', display: '18446744073709551615', start: true, end: false });
    expect(readSequenceParams({ sequence_id: 12n })?.id).toBe('u:12');
    expect(readSequenceParams({ sequence_id: 'abc', sequence_end: true })).toEqual({ id: 's:abc', display: 'abc', start: false, end: true });
    expect(readSequenceParams({ sequence_id: 0 })).toBeUndefined();
    expect(readSequenceParams({ sequence_id: '' })).toBeUndefined();
    expect(readSequenceParams({})).toBeUndefined();
    expect(() => readSequenceParams({ sequence_id: 1, sequence_start: 'yes' })).toThrow(/sequence_start must be a boolean/);
  });

  it('sequence requests are never cacheable (shared/src/cache-key)', () => {
    expect(isCacheable(seqRequest(1, { start: true }))).toBe(false);
    expect(isCacheable(seqRequest(0))).toBe(false);
  });
});
