/** Fakes for the sequence unit tests: a fixed fleet, and a transport that answers at once with the node's id. */
import { TesseraError } from '../../../shared/src/errors/index.js';
import type { InferRequest } from '../../../shared/src/tensors/index.js';
import type { NodeDirectory, NodeTransport, NodeView, SequenceAffinity, SequenceBinding, SequenceRef, Tier, UpstreamInferResult } from '../../src/core/ports/index.js';
import { markNotAccepted } from '../../src/core/routing/index.js';
import { testTier } from '../../src/core/routing/test-tier.js';

export const MODEL = 'vad';

export class FixedDirectory implements NodeDirectory {
  nodes: NodeView[];
  constructor(ids: string[]) {
    this.nodes = ids.map((id) => ({
      id,
      httpAddress: null,
      grpcAddress: `${id}:8001`,
      draining: false,
      localInflight: 0,
      models: new Map([[MODEL, { queued: 0, inflight: 0, capacity: 100, execTimeEmaMs: null, versions: ['1'] }]]),
    }));
  }
  candidates(model: string) {
    return this.nodes.filter((n) => n.models.has(model));
  }
  all() {
    return this.nodes;
  }
  observe() {}
  track() {
    return () => {};
  }
  remove(id: string) {
    this.nodes = this.nodes.filter((n) => n.id !== id);
  }
  async close() {}
}

/** Answers every infer at once; OUTPUT names the node. `dead` nodes refuse the connection (notAccepted). */
export class AnsweringTransport implements NodeTransport {
  readonly calls: { node: string; request: InferRequest }[] = [];
  readonly dead = new Set<string>();
  configCalls = 0;
  idleMicroseconds = '5000000';
  async infer(node: NodeView, request: InferRequest): Promise<UpstreamInferResult> {
    this.calls.push({ node: node.id, request });
    if (this.dead.has(node.id)) throw markNotAccepted(TesseraError.unavailable(`node '${node.id}' is unreachable: connect ECONNREFUSED`));
    return { response: { id: '', modelName: request.modelName, modelVersion: '1', outputs: [], parameters: { node: node.id } } };
  }
  async modelConfig() {
    this.configCalls++;
    return { name: MODEL, sequence_batching: { max_sequence_idle_microseconds: this.idleMicroseconds } };
  }
  async modelMetadata() {
    return {};
  }
  async close() {}
}

/** A store that wraps another and records every TTL it was given; `failing` makes every call throw. */
export class RecordingStore implements SequenceAffinity {
  readonly ttls: number[] = [];
  failing = false;
  constructor(private readonly inner: SequenceAffinity) {}
  async get(ref: SequenceRef, refreshTtlMs?: number) {
    if (this.failing) throw new Error('connection is closed');
    if (refreshTtlMs !== undefined) this.ttls.push(refreshTtlMs);
    return this.inner.get(ref, refreshTtlMs);
  }
  async set(ref: SequenceRef, binding: SequenceBinding, ttlMs: number) {
    if (this.failing) throw new Error('connection is closed');
    this.ttls.push(ttlMs);
    return this.inner.set(ref, binding, ttlMs);
  }
  async delete(ref: SequenceRef) {
    if (this.failing) throw new Error('connection is closed');
    return this.inner.delete(ref);
  }
}

export const tier: Tier = testTier(1000);

export function seqRequest(id: number | string | bigint, flags: { start?: boolean; end?: boolean } = {}): InferRequest {
  return {
    id: '',
    modelName: MODEL,
    inputs: [],
    parameters: {
      sequence_id: id,
      ...(flags.start === undefined ? {} : { sequence_start: flags.start }),
      ...(flags.end === undefined ? {} : { sequence_end: flags.end }),
    },
  };
}
