import { describe, expect, it } from 'vitest';
import { TesseraError } from '../../../../shared/src/errors/index.js';
import type { InferRequest } from '../../../../shared/src/tensors/index.js';
import { FakeClock } from '../admission/index.js';
import type { NodeDirectory, NodeModelLoad, NodeTransport, NodeView, Tier, UpstreamCallOptions, UpstreamInferResult } from '../ports/index.js';
import { createDispatcher } from './dispatcher.js';
import type { DispatchContext } from './dispatcher.js';
import { markNotAccepted } from './upstream-errors.js';
import { testTier } from './test-tier.js';

/** A directory over fixed nodes that records every track and every release, and flags double releases. */
class CountingDirectory implements NodeDirectory {
  readonly nodes: (NodeView & { localInflight: number })[];
  tracked = 0;
  released = 0;
  doubleReleases = 0;
  readonly observed: { nodeId: string; queued: number }[] = [];
  constructor(ids: string[], load: Partial<NodeModelLoad> = {}) {
    this.nodes = ids.map((id) => ({
      id,
      httpAddress: null,
      grpcAddress: `${id}:8001`,
      draining: false,
      localInflight: 0,
      models: new Map([['m', { queued: 0, inflight: 0, capacity: 1, execTimeEmaMs: null, versions: ['1', '2'], ...load }]]),
    }));
  }
  candidates(model: string, version?: string) {
    return this.nodes.filter((n) => n.models.get(model)?.versions.includes(version ?? n.models.get(model)!.versions[0]!));
  }
  all() {
    return this.nodes;
  }
  observe(nodeId: string, _model: string, load: { queued: number }) {
    this.observed.push({ nodeId, queued: load.queued });
  }
  track(nodeId: string) {
    const node = this.nodes.find((n) => n.id === nodeId)!;
    node.localInflight++;
    this.tracked++;
    let done = false;
    return () => {
      if (done) {
        this.doubleReleases++;
        return;
      }
      done = true;
      node.localInflight--;
      this.released++;
    };
  }
  get inflight() {
    return this.nodes.reduce((s, n) => s + n.localInflight, 0);
  }
  async close() {}
}

interface Call {
  node: string;
  request: InferRequest;
  options: UpstreamCallOptions;
  resolve: (r: UpstreamInferResult) => void;
  reject: (e: unknown) => void;
}

/** A transport whose calls the test settles by hand; honours the signal like the gRPC one does. */
class ManualTransport implements NodeTransport {
  readonly calls: Call[] = [];
  /** Nodes that refuse connections at once (notAccepted). */
  readonly dead = new Set<string>();
  infer(node: NodeView, request: InferRequest, options: UpstreamCallOptions): Promise<UpstreamInferResult> {
    if (this.dead.has(node.id)) {
      this.calls.push({ node: node.id, request, options, resolve: () => {}, reject: () => {} });
      return Promise.reject(markNotAccepted(TesseraError.unavailable(`connect ECONNREFUSED ${node.grpcAddress}`)));
    }
    return new Promise((resolve, reject) => {
      this.calls.push({ node: node.id, request, options, resolve, reject });
      options.signal?.addEventListener('abort', () => reject(TesseraError.cancelled('call cancelled')), { once: true });
    });
  }
  async modelConfig(node: NodeView) {
    return { name: 'm', from: node.id };
  }
  async modelMetadata(node: NodeView) {
    return { name: 'm', from: node.id };
  }
  async close() {}
}

const gold: Tier = testTier(1000);

const request: InferRequest = { id: 'r', modelName: 'm', inputs: [], parameters: { priority: 1, timeout: 5_000_000_000 } };
const response: UpstreamInferResult = { response: { id: 'r', modelName: 'm', modelVersion: '1', outputs: [] }, load: { queued: 3, inflight: 1 } };

function setup(ids = ['a'], opts: { open?: Set<string>; routing?: Parameters<typeof createDispatcher>[0]['routing'] } = {}) {
  const clock = new FakeClock();
  const directory = new CountingDirectory(ids);
  const transport = new ManualTransport();
  const upstream: { nodeId: string; outcome: string; retry: boolean }[] = [];
  const dispatcher = createDispatcher({
    directory,
    transport,
    clock,
    breakers: { isOpen: (id) => opts.open?.has(id) ?? false },
    random: () => 0,
    ...(opts.routing ? { routing: opts.routing } : {}),
    admission: { overcommit: 0 },
    observer: { upstream: (e) => upstream.push(e) },
  });
  const ctx = (extra: Partial<DispatchContext> = {}): DispatchContext => ({ tenantId: 't', tier: gold, deadline: clock.now() + 1000, ...extra });
  /** Lets promise callbacks run (the settled transport call → the dispatcher's finally). */
  const flush = () => new Promise<void>((resolve) => setImmediate(resolve));
  return { clock, directory, transport, dispatcher, ctx, flush, upstream };
}

describe('Dispatcher', () => {
  it('sends with the deadline, the tier priority and the remaining time, and observes the trailing load', async () => {
    const t = setup();
    const pending = t.dispatcher.dispatch(request, t.ctx());
    expect(t.transport.calls).toHaveLength(1);
    const call = t.transport.calls[0]!;
    expect(call.options).toMatchObject({ deadline: t.clock.now() + 1000, priority: 1, timeoutUs: 1_000_000 });
    call.resolve(response);
    await expect(pending).resolves.toBe(response);
    expect(t.directory.observed).toEqual([{ nodeId: 'a', queued: 3 }]);
  });

  it('releases the in-flight counter exactly once on success, error, deadline and cancel', async () => {
    const t = setup();
    const outcomes: Promise<string>[] = [];
    const controller = new AbortController();
    // The outcome is read as soon as it exists, so no rejection goes unhandled meanwhile.
    const start = (ctx: DispatchContext) =>
      outcomes.push(t.dispatcher.dispatch(request, ctx).then(() => 'OK', (error: TesseraError) => error.code));
    // Capacity 1, overcommit 0: one at a time, the others wait in the queue.
    start(t.ctx());
    start(t.ctx());
    start(t.ctx());
    start(t.ctx({ signal: controller.signal }));
    expect(t.dispatcher.queueDepth('m')).toBe(3);
    t.transport.calls[0]!.resolve(response);
    await t.flush();
    t.transport.calls[1]!.reject(TesseraError.internal('model crashed'));
    await t.flush();
    t.transport.calls[2]!.reject(TesseraError.deadlineExceeded('deadline exceeded'));
    await t.flush();
    expect(t.transport.calls).toHaveLength(4);
    controller.abort();
    expect(await Promise.all(outcomes)).toEqual([
      'OK',
      'INTERNAL',
      'DEADLINE_EXCEEDED',
      'CANCELLED',
    ]);
    expect(t.directory.tracked).toBe(4);
    expect(t.directory.released).toBe(4);
    expect(t.directory.doubleReleases).toBe(0);
    expect(t.directory.inflight).toBe(0);
    expect(t.upstream.map((e) => e.outcome)).toEqual(['OK', 'INTERNAL', 'DEADLINE_EXCEEDED', 'CANCELLED']);
  });

  it('never tracks a request that is rejected while it waits (expiry, cancel)', async () => {
    const t = setup();
    const busy = t.dispatcher.dispatch(request, t.ctx({ deadline: t.clock.now() + 5000 }));
    const controller = new AbortController();
    const expiring = t.dispatcher.dispatch(request, t.ctx({ deadline: t.clock.now() + 100 }));
    const leaving = t.dispatcher.dispatch(request, t.ctx({ signal: controller.signal }));
    controller.abort();
    t.clock.advance(100);
    await expect(expiring).rejects.toMatchObject({ code: 'UNAVAILABLE', retryAfterMs: expect.any(Number) });
    await expect(leaving).rejects.toMatchObject({ code: 'CANCELLED' });
    t.transport.calls[0]!.resolve(response);
    await busy;
    expect(t.transport.calls).toHaveLength(1);
    expect([t.directory.tracked, t.directory.released]).toEqual([1, 1]);
  });

  it('retries a not-accepted failure once on another node, and nothing else', async () => {
    const t = setup(['a', 'b', 'c']);
    t.transport.dead.add('a');
    t.transport.dead.add('b');
    // random() = 0 draws 'a' then 'b'; both idle, so 'a' (first drawn) is tried, then one retry.
    await expect(t.dispatcher.dispatch(request, t.ctx())).rejects.toMatchObject({ code: 'UNAVAILABLE' });
    expect(t.transport.calls.map((c) => c.node)).toEqual(['a', expect.stringMatching(/^[bc]$/)]);
    expect(t.transport.calls).toHaveLength(2);
    t.transport.dead.delete('b');
    t.transport.calls.length = 0;
    const pending = t.dispatcher.dispatch(request, t.ctx());
    await t.flush();
    expect(t.transport.calls.map((c) => c.node)).toEqual(['a', 'b']);
    t.transport.calls[1]!.resolve(response);
    await expect(pending).resolves.toBe(response);
    expect(t.upstream.slice(-2).map((e) => [e.nodeId, e.outcome, e.retry])).toEqual([
      ['a', 'UNAVAILABLE', false],
      ['b', 'OK', true],
    ]);
    // An error after the node accepted the request is final.
    t.transport.calls.length = 0;
    const failing = t.dispatcher.dispatch(request, t.ctx());
    await t.flush();
    expect(t.transport.calls.map((c) => c.node)).toEqual(['a', 'b']);
    t.transport.calls[1]!.reject(TesseraError.unavailable('node overloaded'));
    await expect(failing).rejects.toThrow(/node overloaded/);
    expect(t.transport.calls).toHaveLength(2);
    expect(t.directory.tracked).toBe(t.directory.released);
    expect(t.directory.doubleReleases).toBe(0);
  });

  it('leaves nodes behind an open breaker out, and answers 503 at once when none is left', async () => {
    const open = new Set(['a']);
    const t = setup(['a', 'b'], { open });
    const pending = t.dispatcher.dispatch(request, t.ctx());
    expect(t.transport.calls.map((c) => c.node)).toEqual(['b']);
    t.transport.calls[0]!.resolve(response);
    await pending;
    open.add('b');
    expect(t.dispatcher.modelReady('m')).toBe(false);
    // Every breaker open: the version chosen is still the fleet's latest (version-chooser.ts).
    await expect(t.dispatcher.dispatch(request, t.ctx())).rejects.toMatchObject({
      code: 'UNAVAILABLE',
      message: expect.stringMatching(/no node is ready to serve model 'm@2'/),
    });
  });

  it("answers Triton's INVALID_ARG for a model no node has had, NOT_FOUND for an unknown version of a known one", async () => {
    const t = setup();
    await expect(t.dispatcher.dispatch({ ...request, modelName: 'nope' }, t.ctx())).rejects.toMatchObject({
      code: 'INVALID_ARG',
      message: "Request for unknown model: 'nope' is not found",
    });
    await expect(t.dispatcher.dispatch({ ...request, modelVersion: '7' }, t.ctx())).rejects.toMatchObject({
      code: 'NOT_FOUND',
      message: "Request for unknown model: 'm' version 7 is not found",
    });
    await expect(t.dispatcher.modelConfig('nope', undefined, t.ctx())).rejects.toMatchObject({ code: 'INVALID_ARG' });
    await expect(t.dispatcher.modelMetadata('m', undefined, t.ctx())).resolves.toEqual({ name: 'm', from: 'a' });
  });

  it('answers 503 (UNAVAILABLE, retry after) for a model it knows once no node serves it, and lists it in models()', async () => {
    const t = setup(['a']);
    expect(t.dispatcher.models()).toEqual([{ name: 'm', versions: [{ version: '1', ready: true }, { version: '2', ready: true }] }]);
    t.directory.nodes.splice(0); // the only node went away (restart, crash)
    const error = await t.dispatcher.dispatch(request, t.ctx()).catch((e: unknown) => e);
    expect(error).toMatchObject({ code: 'UNAVAILABLE', message: "no node is serving model 'm' right now", retryAfterMs: 1000 });
    await expect(t.dispatcher.modelMetadata('m', undefined, t.ctx())).rejects.toMatchObject({ code: 'UNAVAILABLE' });
    await expect(t.dispatcher.dispatch({ ...request, modelName: 'nope' }, t.ctx())).rejects.toMatchObject({ code: 'INVALID_ARG' });
    expect(t.dispatcher.models()).toEqual([{ name: 'm', versions: [{ version: '1', ready: false }, { version: '2', ready: false }] }]);
  });

  it('routes by the traffic split, sticky by header', async () => {
    const t = setup(['a'], {
      routing: { models: { m: { splits: [{ version: '1', weight: 50 }, { version: '2', weight: 50 }], stickyHeader: 'x-session' } } },
    });
    const headers = new Headers({ 'x-session': 'alice' });
    const versions: (string | undefined)[] = [];
    for (let i = 0; i < 3; i++) {
      const pending = t.dispatcher.dispatch(request, t.ctx({ headers }));
      const call = t.transport.calls.at(-1)!;
      versions.push(call.request.modelVersion);
      call.resolve(response);
      await pending;
    }
    expect(new Set(versions).size).toBe(1);
    expect(['1', '2']).toContain(versions[0]);
    // An explicit version wins over the split.
    const pinned = t.dispatcher.dispatch({ ...request, modelVersion: '2' }, t.ctx({ headers }));
    expect(t.transport.calls.at(-1)!.request.modelVersion).toBe('2');
    t.transport.calls.at(-1)!.resolve(response);
    await pinned;
  });

  it('rejects waiting requests on close', async () => {
    const t = setup();
    const running = t.dispatcher.dispatch(request, t.ctx());
    const waiting = t.dispatcher.dispatch(request, t.ctx());
    await t.dispatcher.close();
    await expect(waiting).rejects.toMatchObject({ code: 'UNAVAILABLE', message: 'the gateway is shutting down' });
    t.transport.calls[0]!.resolve(response);
    await running;
    await expect(t.dispatcher.dispatch(request, t.ctx())).rejects.toMatchObject({ code: 'UNAVAILABLE' });
    expect(t.clock.pendingTimers).toBe(0);
  });
});
