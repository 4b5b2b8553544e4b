/**
 * A gRPC ModelInfer cancelled while it waits in the dynamic batcher's queue leaves the queue at once and
 * is never executed; a deadline that passes in the queue does the same. Real grpc-js client, the node's
 * real gRPC server (its ModelInfer fast path, whose call record is the request's cancellation: no
 * AbortSignal is made), the real core and batcher; the fake backend holds the first batch at its gate so
 * the second request has to queue.
 */
import { create } from '@bufbuild/protobuf';
import { status, type Client, type ServiceError } from '@grpc/grpc-js';
import { afterEach, describe, expect, it } from 'vitest';
import { GRPCInferenceService, ModelInferRequestSchema } from '../../shared/src/gen/grpc_service_pb.js';
import { callUnary, clientServiceDefinition } from '../../shared/src/grpc/index.js';
import { createGrpcServer, type GrpcServer } from '../src/server/grpc/index.js';
import { fakeConfig } from './support/models/test-repository.js';
import { startTestCore, type TestCore } from './support/test-core.js';
import { grpcClient } from './support.js';

const svc = clientServiceDefinition(GRPCInferenceService);
const cleanups: (() => Promise<void>)[] = [];

afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

function inferRequest(id: string) {
  return create(ModelInferRequestSchema, {
    modelName: 'm',
    id,
    inputs: [{ name: 'IN', datatype: 'INT32', shape: [1n, 4n] }],
    rawInputContents: [new Uint8Array(new Int32Array([1, 2, 3, 4]).buffer)],
  });
}

async function startNode(): Promise<{ t: TestCore; client: Client }> {
  // One instance and a batch of one: the first request executes (held), the next one queues behind it.
  const t = await startTestCore(cleanups, (repo) =>
    repo.addModel('m', fakeConfig('instance_group [ { count: 1 kind: KIND_CPU } ]\ndynamic_batching { }', 1), [1]),
  );
  const server: GrpcServer = createGrpcServer(t.core);
  const { port } = await server.listen(0, '127.0.0.1');
  const client = grpcClient(`127.0.0.1:${port}`);
  cleanups.push(async () => {
    client.close();
    await server.close(200);
  });
  t.backend.gate = true;
  return { t, client };
}

function statusOf(call: Promise<unknown>): Promise<number> {
  return call.then(
    () => status.OK,
    (error: ServiceError) => error.code,
  );
}

describe('a queued gRPC ModelInfer', () => {
  it('leaves the queue when the client cancels, and is not executed', async () => {
    const { t, client } = await startNode();
    const first = callUnary(client, svc.modelInfer, inferRequest('first'));
    await t.backend.waitForHeld(1);
    const controller = new AbortController();
    const second = statusOf(callUnary(client, svc.modelInfer, inferRequest('second'), { signal: controller.signal }));
    await expect.poll(() => t.core.modelLoad('m').queued).toBe(1);
    controller.abort();
    expect(await second).toBe(status.CANCELLED);
    // Gone from the queue while the first batch is still held: the cancel itself removed it.
    await expect.poll(() => t.core.modelLoad('m').queued).toBe(0);
    expect(t.backend.held).toHaveLength(1);
    t.backend.releaseAll();
    await first;
    // The batcher starts its next batch as the first one finishes, before the first answer is written.
    expect(t.backend.executed.map((e) => e.requests.length)).toEqual([1]);
    expect(t.core.modelLoad('m')).toEqual({ queued: 0, inflight: 0 });
  });

  it('leaves the queue when its deadline passes, and is not executed', async () => {
    const { t, client } = await startNode();
    const first = callUnary(client, svc.modelInfer, inferRequest('first'));
    await t.backend.waitForHeld(1);
    const second = statusOf(callUnary(client, svc.modelInfer, inferRequest('second'), { deadline: Date.now() + 300 }));
    expect(await second).toBe(status.DEADLINE_EXCEEDED);
    await expect.poll(() => t.core.modelLoad('m').queued).toBe(0);
    t.backend.releaseAll();
    await first;
    expect(t.backend.executed.map((e) => e.requests.length)).toEqual([1]);
  });
});
