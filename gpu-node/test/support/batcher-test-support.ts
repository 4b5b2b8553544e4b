/**
 * Test doubles for the batcher's tests: an instance whose executions finish only when the test says so,
 * recording every batch it was given, and a request builder.
 */
import type { BatcherRequest } from '../../src/scheduler/dynamic/batcher-request.js';
import type { BatchExecutor } from '../../src/scheduler/dynamic/dynamic-batcher.js';

interface Execution {
  readonly payloads: readonly string[];
  readonly resolve: (out: { results: readonly string[] }) => void;
  readonly reject: (err: unknown) => void;
}

export class FakeInstance implements BatchExecutor<string, string> {
  /** Every batch received, in order (payloads are request ids). */
  readonly batches: string[][] = [];
  private readonly executing: Execution[] = [];

  execute(payloads: readonly string[]): Promise<{ results: readonly string[] }> {
    this.batches.push([...payloads]);
    return new Promise((resolve, reject) => this.executing.push({ payloads, resolve, reject }));
  }

  /** Executions started and not yet completed. */
  get running(): number {
    return this.executing.length;
  }

  /** Completes the oldest running execution; each request's result is `out:<payload>`. */
  complete(): void {
    const e = this.executing.shift();
    if (e === undefined) throw new Error('no execution is running');
    e.resolve({ results: e.payloads.map((p) => `out:${p}`) });
  }

  fail(err: unknown): void {
    const e = this.executing.shift();
    if (e === undefined) throw new Error('no execution is running');
    e.reject(err);
  }

  /** Completes with a wrong number of results (a backend bug). */
  completeShort(): void {
    const e = this.executing.shift();
    if (e === undefined) throw new Error('no execution is running');
    e.resolve({ results: [] });
  }
}

export interface RequestSpec {
  readonly batchSize?: number;
  /** Shape of input `x` beyond the batch dimension; default [4]. */
  readonly dims?: readonly number[];
  readonly priority?: number;
  readonly timeoutUs?: number;
  readonly signal?: AbortSignal;
}

/** A request whose payload is its id. */
export function req(id: string, spec: RequestSpec = {}): BatcherRequest<string> {
  const batchSize = spec.batchSize ?? 1;
  return {
    id,
    payload: id,
    batchSize,
    inputs: [{ name: 'x', shape: [batchSize, ...(spec.dims ?? [4])] }],
    ...(spec.priority !== undefined ? { priority: spec.priority } : {}),
    ...(spec.timeoutUs !== undefined ? { timeoutUs: spec.timeoutUs } : {}),
    ...(spec.signal !== undefined ? { signal: spec.signal } : {}),
  };
}

/** Tracks how a promise settled, without ever leaving a rejection unhandled. */
export function track<T>(promise: Promise<T>): { status: 'pending' | 'resolved' | 'rejected'; value?: T; error?: unknown } {
  const t: { status: 'pending' | 'resolved' | 'rejected'; value?: T; error?: unknown } = { status: 'pending' };
  promise.then(
    (value) => {
      t.status = 'resolved';
      t.value = value;
    },
    (error: unknown) => {
      t.status = 'rejected';
      t.error = error;
    },
  );
  return t;
}
