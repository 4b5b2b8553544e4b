import { describe, expect, it } from 'vitest';
import { TesseraError } from '../../../../shared/src/errors/index.js';
import { FakeClock } from '../admission/index.js';
import type { NodeDirectory, NodeView } from '../ports/index.js';
import { LlmRouter, type LeaseRequest } from './llm-router.js';

/** Nodes serving model `m`, each counting the streams tracked on it. */
function directoryOf(ids: string[]): NodeDirectory & { nodes: (NodeView & { localInflight: number })[] } {
  const nodes = ids.map((id) => ({
    id,
    httpAddress: `${id}:8000`,
    grpcAddress: null,
    draining: false,
    localInflight: 0,
    models: new Map([['m', { queued: 0, inflight: 0, capacity: 1, execTimeEmaMs: null, versions: ['1'] }]]),
  }));
  return {
    nodes,
    candidates: (model) => nodes.filter((n) => n.models.has(model)),
    all: () => nodes,
    observe: () => undefined,
    track(nodeId) {
      const node = nodes.find((n) => n.id === nodeId)!;
      node.localInflight++;
      let done = false;
      return () => {
        if (!done) node.localInflight--;
        done = true;
      };
    },
    close: async () => undefined,
  };
}

const ask = (clock: FakeClock, tier: string, priority: number, signal = new AbortController().signal): LeaseRequest => ({
  tier,
  priority,
  share: 1,
  deadline: clock.now() + 10_000,
  signal,
});

describe('LlmRouter', () => {
  it('sends each stream to the node with the fewest streams (least-queue)', async () => {
    const clock = new FakeClock();
    const directory = directoryOf(['a', 'b', 'c']);
    const router = new LlmRouter({ directory, clock, maxStreamsPerNode: 10 });
    const leases = [];
    for (let i = 0; i < 6; i++) leases.push(await router.acquire('m', ask(clock, 'standard', 2)));
    expect(directory.nodes.map((n) => n.localInflight)).toEqual([2, 2, 2]);
    leases.filter((l) => l.node.id === 'b').forEach((l) => l.release());
    expect((await router.acquire('m', ask(clock, 'standard', 2))).node.id).toBe('b');
  });

  it('holds streams past maxStreamsPerNode in the admission queue, higher tiers first', async () => {
    const clock = new FakeClock();
    const directory = directoryOf(['a']);
    const router = new LlmRouter({ directory, clock, maxStreamsPerNode: 1 });
    const running = await router.acquire('m', ask(clock, 'standard', 2));
    const order: string[] = [];
    const free = router.acquire('m', ask(clock, 'free', 3)).then((lease) => (order.push('free'), lease));
    const premium = router.acquire('m', ask(clock, 'premium', 1)).then((lease) => (order.push('premium'), lease));
    expect(router.queueDepth('m')).toBe(2);
    running.release();
    (await premium).release();
    (await free).release();
    expect(order).toEqual(['premium', 'free']);
    expect(directory.nodes[0]!.localInflight).toBe(0);
  });

  it('rejects a waiting stream at its deadline with UNAVAILABLE and a Retry-After; a client leaving is CANCELLED', async () => {
    const clock = new FakeClock();
    const router = new LlmRouter({ directory: directoryOf(['a']), clock, maxStreamsPerNode: 1 });
    await router.acquire('m', ask(clock, 'standard', 2));
    const late = router.acquire('m', { ...ask(clock, 'standard', 2), deadline: clock.now() + 100 });
    clock.advance(101);
    const error = await late.catch((e: unknown) => e);
    expect(error).toBeInstanceOf(TesseraError);
    expect((error as TesseraError).code).toBe('UNAVAILABLE');
    expect((error as TesseraError).retryAfterMs).toBeGreaterThan(0);
    const leaving = new AbortController();
    const gone = router.acquire('m', ask(clock, 'standard', 2, leaving.signal));
    leaving.abort();
    await expect(gone).rejects.toMatchObject({ code: 'CANCELLED' });
    expect(router.queueDepth('m')).toBe(0);
  });

  it('counts its own streams even when a load report says the node is idle', async () => {
    const clock = new FakeClock();
    const directory = directoryOf(['a']);
    const router = new LlmRouter({ directory, clock, maxStreamsPerNode: 1 });
    await router.acquire('m', ask(clock, 'standard', 2));
    directory.nodes[0]!.localInflight = 0; // as if a fresh report had reset what was sent since
    const second = router.acquire('m', ask(clock, 'standard', 2));
    expect(router.queueDepth('m')).toBe(1);
    router.close();
    await expect(second).rejects.toMatchObject({ code: 'UNAVAILABLE' });
  });

  it('routes around a node whose breaker is open', async () => {
    const clock = new FakeClock();
    const router = new LlmRouter({ directory: directoryOf(['a', 'b']), clock, breakers: { isOpen: (id) => id === 'a' } });
    for (let i = 0; i < 3; i++) expect((await router.acquire('m', ask(clock, 'standard', 2))).node.id).toBe('b');
  });
});
