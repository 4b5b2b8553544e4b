/**
 * The gRPC transport's contract (our node:http2 client; the grpc-js one it replaced is retired) and
 * the dispatcher over it, against a REAL node process (bin/tessera-node.js) on loopback, plus a
 * loopback port where nothing listens for the unreachable-node paths. A transport added beside it
 * joins `transports` and runs every case. `raw` is the node transport with HTTP clients' infers sent
 * as raw HTTP/1.1 to the node's HTTP port (node-http/raw-infer-upstream.ts); its gRPC transport refuses
 * infers here, so every infer case below is proven to have gone raw.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TesseraError } from '../../../../shared/src/errors/index.js';
import type { InferRequest } from '../../../../shared/src/tensors/index.js';
import type { NodeView, Tier, UpstreamEvent } from '../../core/ports/index.js';
import { createDispatcher } from '../../core/routing/index.js';
import { createStaticNodeDirectory } from '../fleet/index.js';
import type { GrpcTransport } from './grpc-node-transport.js';
import { createH2Transport } from './h2-transport.js';
import { createRawInferUpstream } from '../node-http/raw-infer-upstream.js';
import type { NodeBreakerOptions } from './node-breakers.js';
import { deadAddress, startNodeProcess } from '../../../test/support/test-node-process.js';
import { simpleRequest, sleepyRequest } from '../../../test/support/test-node-requests.js';
import type { NodeProcess } from '../../../test/support/test-node-process.js';
import { testTier } from '../../core/routing/test-tier.js';

let node: NodeProcess;
let dead: string;
let nodeHttp: string;

beforeAll(async () => {
  [node, dead] = await Promise.all([startNodeProcess(), deadAddress()]);
  nodeHttp = `127.0.0.1:${node.httpPort}`;
});

afterAll(async () => {
  await node?.stop();
});

type MakeTransport = (breaker: NodeBreakerOptions) => GrpcTransport;
/** gRPC for everything but infer, which must go raw. */
function grpcWithoutInfer(breaker: NodeBreakerOptions): GrpcTransport {
  const grpc = createH2Transport({ breaker });
  return Object.assign(grpc, { infer: () => Promise.reject(new Error('an infer went over gRPC, not raw HTTP/1.1')) });
}
const transports: [string, MakeTransport][] = [
  ['http2', (breaker) => createH2Transport({ breaker })],
  ['raw', (breaker) => createRawInferUpstream({ grpc: grpcWithoutInfer(breaker), rawBelowCalls: 1000 })],
];

const A = Array.from({ length: 16 }, (_, i) => i);
// The client's own priority is replaced by the tier's.
const simple: InferRequest = { ...simpleRequest(0), id: 'req-1', parameters: { priority: 99 } };
/** `sleepy` holds the request `ms` at the node. */
const sleepy = (ms: number): InferRequest => sleepyRequest(ms);

/** A node at `address`; its HTTP port too (the raw transport's way in) unless it is the dead address. */
const view = (id: string, address: string): NodeView =>
  createStaticNodeDirectory([{ id, grpcAddress: address, httpAddress: address === dead ? dead : nodeHttp }]).all()[0]!;

const soon = () => Date.now() + 20_000;

async function failure(promise: Promise<unknown>): Promise<TesseraError & { notAccepted?: boolean }> {
  try {
    await promise;
  } catch (error) {
    return error as TesseraError & { notAccepted?: boolean };
  }
  throw new Error('expected a failure');
}

describe.each(transports)('%s transport against a real node', (_name, makeTransport) => {
  let transport: GrpcTransport;
  beforeAll(() => {
    transport = makeTransport({ volumeThreshold: 1000 });
  });
  afterAll(async () => {
    await transport?.close();
  });

  it('infers, with priority and timeout parameters, and reads the load trailer', async () => {
    const live = view('live', node.grpcAddress);
    const result = await transport.infer(live, simple, { deadline: soon(), priority: 1, timeoutUs: 5_000_000 });
    expect(result.response.id).toBe('req-1');
    const sum = result.response.outputs.find((o) => o.name === 'OUTPUT0')!;
    expect([...new Int32Array(sum.data.slice().buffer)]).toEqual(A.map((a) => a + 1));
    expect(result.load).toEqual({ queued: expect.any(Number), inflight: expect.any(Number) });
  });

  it('answers Triton JSON for model metadata and config', async () => {
    const live = view('live', node.grpcAddress);
    await expect(transport.modelMetadata(live, 'simple', undefined, { deadline: soon() })).resolves.toEqual({
      name: 'simple',
      versions: ['1'],
      platform: 'onnxruntime_onnx',
      inputs: [
        { name: 'INPUT0', datatype: 'INT32', shape: [-1, 16] },
        { name: 'INPUT1', datatype: 'INT32', shape: [-1, 16] },
      ],
      outputs: [
        { name: 'OUTPUT0', datatype: 'INT32', shape: [-1, 16] },
        { name: 'OUTPUT1', datatype: 'INT32', shape: [-1, 16] },
      ],
    });
    await expect(transport.modelConfig(live, 'simple', '1', { deadline: soon() })).resolves.toMatchObject({
      name: 'simple',
      max_batch_size: 8,
      input: [expect.objectContaining({ name: 'INPUT0', data_type: 'TYPE_INT32', dims: [16] }), expect.anything()],
    });
  });

  it("passes the node's NOT_FOUND (unknown version) and INVALID_ARG (unknown model) through as the caller's mistake, not retryable, not a breaker failure", async () => {
    const live = view('live', node.grpcAddress);
    const error = await failure(transport.infer(live, { ...simple, modelVersion: '9' }, { deadline: soon() }));
    expect(error.code).toBe('NOT_FOUND');
    expect(error.notAccepted).toBe(false);
    const unknown = await failure(transport.infer(live, { ...simple, modelName: 'nope' }, { deadline: soon() }));
    expect(unknown.code).toBe('INVALID_ARG');
    expect(unknown.notAccepted).toBe(false);
    expect(transport.breakers.state('live')).toBe('closed');
  });

  it('ends cleanly with DEADLINE_EXCEEDED when the deadline passes at the node', async () => {
    const live = view('live', node.grpcAddress);
    const error = await failure(transport.infer(live, sleepy(1500), { deadline: Date.now() + 300, timeoutUs: 300_000 }));
    expect(error.code).toBe('DEADLINE_EXCEEDED');
    expect(error.notAccepted).toBe(false);
    // A deadline already gone never reaches the network.
    const early = await failure(transport.infer(live, simple, { deadline: Date.now() - 1 }));
    expect(early.code).toBe('DEADLINE_EXCEEDED');
  });

  it('cancels the upstream call when the signal aborts', async () => {
    const live = view('live', node.grpcAddress);
    const controller = new AbortController();
    const pending = failure(transport.infer(live, sleepy(1500), { deadline: soon(), signal: controller.signal }));
    await new Promise((resolve) => setImmediate(resolve));
    controller.abort();
    const error = await pending;
    expect(error.code).toBe('CANCELLED');
    expect(error.notAccepted).toBe(false);
  });

  it('marks a refused connection as not accepted', async () => {
    const error = await failure(transport.infer(view('gone', dead), simple, { deadline: soon() }));
    expect(error.code).toBe('UNAVAILABLE');
    expect(error.notAccepted).toBe(true);
    expect(error.message).toMatch(/node 'gone' is unreachable/);
  });
});

const tier: Tier = testTier(20_000);

describe.each(transports)('dispatcher over the %s transport', (_name, makeTransport) => {
  it('retries once on another node when the first one refuses the connection', async () => {
    const directory = createStaticNodeDirectory([
      { id: 'a-dead', grpcAddress: dead, httpAddress: dead },
      { id: 'b-live', grpcAddress: node.grpcAddress, httpAddress: nodeHttp },
    ]);
    const events: UpstreamEvent[] = [];
    const grpc = makeTransport({ volumeThreshold: 1000 });
    const dispatcher = createDispatcher({
      directory,
      transport: grpc,
      breakers: grpc.breakers,
      routing: { policy: 'round-robin' },
      observer: { upstream: (e) => events.push(e) },
    });
    try {
      const result = await dispatcher.dispatch(simple, { tenantId: 't', tier, deadline: soon() });
      expect(result.response.modelName).toBe('simple');
      expect(events.map((e) => [e.nodeId, e.outcome, e.retry])).toEqual([
        ['a-dead', 'UNAVAILABLE', false],
        ['b-live', 'OK', true],
      ]);
      expect(directory.all().map((n) => n.localInflight)).toEqual([0, 0]);
    } finally {
      await dispatcher.close();
      await grpc.close();
    }
  });

  it('opens the breaker of a failing node, which then leaves the pick set', async () => {
    const directory = createStaticNodeDirectory([
      { id: 'a-dead', grpcAddress: dead, httpAddress: dead },
      { id: 'b-live', grpcAddress: node.grpcAddress, httpAddress: nodeHttp },
    ]);
    const events: UpstreamEvent[] = [];
    const states: string[] = [];
    const grpc = makeTransport({ volumeThreshold: 2, errorThresholdPercentage: 50, resetTimeoutMs: 60_000 });
    grpc.breakers.onStateChange((id, state) => states.push(`${id}:${state}`));
    const dispatcher = createDispatcher({
      directory,
      transport: grpc,
      breakers: grpc.breakers,
      routing: { policy: 'round-robin' },
      observer: { upstream: (e) => events.push(e) },
    });
    try {
      for (let i = 0; i < 10 && !grpc.breakers.isOpen('a-dead'); i++) {
        await dispatcher.dispatch(simple, { tenantId: 't', tier, deadline: soon() });
      }
      expect(grpc.breakers.isOpen('a-dead')).toBe(true);
      expect(states).toEqual(['a-dead:open']);
      const before = events.length;
      for (let i = 0; i < 4; i++) await dispatcher.dispatch(simple, { tenantId: 't', tier, deadline: soon() });
      expect(events.slice(before).map((e) => e.nodeId)).toEqual(['b-live', 'b-live', 'b-live', 'b-live']);
      expect(dispatcher.modelReady('simple')).toBe(true);
      await expect(dispatcher.modelMetadata('simple', undefined, { deadline: soon() })).resolves.toMatchObject({ name: 'simple' });
    } finally {
      await dispatcher.close();
      await grpc.close();
    }
  });
});
