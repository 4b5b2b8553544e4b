/**
 * The gateway's upstream ModelStreamInfer (h2-stream-infer.ts) on its one HTTP/2 client
 * (h2-node-connection.ts) against real nodes over the decoupled repository: the node's gRPC port on
 * grpc-js (`--grpc-raw-h2 false`) and on its raw HTTP/2 front (`--grpc-raw-h2 true`). Every response
 * handed over as it arrives, the final flag, a node's error status, cancellation and the deadline mid-
 * stream, and unary and streamed calls sharing the node's one connection.
 */
import { rm } from 'node:fs/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { InferRequest, InferResponse } from '../../../../shared/src/tensors/index.js';
import type { NodeView } from '../../core/ports/index.js';
import { createStaticNodeDirectory } from '../fleet/index.js';
import type { GrpcTransport } from './grpc-node-transport.js';
import { createH2Transport } from './h2-transport.js';
import { writeDecoupledRepository } from '../../../test/support/decoupled-repository.js';
import { spawnNode, type SpawnedNode } from '../../../test/support/test-node-process.js';

const uint32 = (values: readonly number[]) => new Uint8Array(Uint32Array.from(values).buffer);

/** repeat_int32: one response per element of `values` (OUT = value), the i-th `delaysMs[i]` after the one before. */
function repeatRequest(values: readonly number[], delaysMs: readonly number[] = []): InferRequest {
  return {
    id: 'r',
    modelName: 'repeat_int32',
    inputs: [
      { name: 'IN', datatype: 'INT32', shape: [values.length], data: new Uint8Array(Int32Array.from(values).buffer) },
      { name: 'DELAY', datatype: 'UINT32', shape: [values.length], data: uint32(values.map((_, i) => delaysMs[i] ?? 0)) },
      { name: 'WAIT', datatype: 'UINT32', shape: [1], data: uint32([0]) },
    ],
    parameters: {},
  };
}

const outValue = (response: InferResponse): number | undefined => {
  const out = response.outputs.find((o) => o.name === 'OUT');
  return out?.data === undefined ? undefined : new DataView(out.data.buffer, out.data.byteOffset, out.data.byteLength).getInt32(0, true);
};

describe.each([
  ['grpc-js', ['--grpc-raw-h2', 'false']],
  ['its raw HTTP/2 front', ['--grpc-raw-h2', 'true']],
])('upstream ModelStreamInfer on the gateway HTTP/2 client against a real node on %s', (_front, args) => {
  let repository: string;
  let node: SpawnedNode;
  let view: NodeView;
  let transport: GrpcTransport;

  beforeAll(async () => {
    repository = await writeDecoupledRepository();
    node = await spawnNode(repository, args);
    view = createStaticNodeDirectory([{ id: 'n', grpcAddress: `127.0.0.1:${node.grpcPort}` }]).all()[0]!;
    transport = createH2Transport({ breaker: { volumeThreshold: 1000 } });
  }, 60_000);

  afterAll(async () => {
    await transport?.close();
    if (node !== undefined && node.process.exitCode === null && node.process.signalCode === null) {
      node.process.kill('SIGTERM');
      await node.exited;
    }
    if (repository !== undefined) await rm(repository, { recursive: true, force: true });
  });

  const soon = (): number => Date.now() + 20_000;

  it('hands over every response in order, then the final one, and resolves with it', async () => {
    const seen: InferResponse[] = [];
    const result = await transport.streamInfer!(view, repeatRequest([7, 8, 9]), { deadline: soon() }, (response) => seen.push(response));
    expect(seen.slice(0, 3).map(outValue)).toEqual([7, 8, 9]);
    // The empty final response the gateway asks for (triton_enable_empty_final_response).
    expect(seen).toHaveLength(4);
    expect(seen[3]!.parameters?.['triton_final_response']).toBe(true);
    expect(result.response).toBe(seen[3]);
  });

  it("a node's error ends the call with the node's status and message", async () => {
    const error = await transport.streamInfer!(view, { ...repeatRequest([1]), modelName: 'nope' }, { deadline: soon() }, () => undefined).then(
      () => ({ code: 'OK', message: '' }),
      (e: unknown) => e as { code: string; message: string },
    );
    expect(error).toMatchObject({ code: 'INVALID_ARG' });
    expect(error.message).toMatch(/nope/);
  });

  it('cancelling mid-stream fails at once with CANCELLED; the next stream is served', async () => {
    const controller = new AbortController();
    const seen: InferResponse[] = [];
    const call = transport.streamInfer!(view, repeatRequest([1, 2, 3], [0, 5000, 5000]), { deadline: soon(), signal: controller.signal }, (response) => {
      seen.push(response);
      controller.abort();
    });
    await expect(call).rejects.toMatchObject({ code: 'CANCELLED' });
    expect(seen).toHaveLength(1);
    const again: InferResponse[] = [];
    await transport.streamInfer!(view, repeatRequest([3]), { deadline: soon() }, (response) => again.push(response));
    expect(outValue(again[0]!)).toBe(3);
  });

  it('a deadline that passes mid-stream: DEADLINE_EXCEEDED after the responses already handed over', async () => {
    const seen: InferResponse[] = [];
    const error = await transport
      .streamInfer!(view, repeatRequest([1, 2, 3], [0, 8000]), { deadline: Date.now() + 3000 }, (response) => seen.push(response))
      .catch((e: unknown) => e as { code: string });
    expect(error).toMatchObject({ code: 'DEADLINE_EXCEEDED' });
    expect(seen.map(outValue)).toEqual([1]);
  });

  it('unary and streamed calls interleaved on the one connection each get their own answer', async () => {
    const [metadata, streamed] = await Promise.all([
      transport.modelMetadata(view, 'repeat_int32', undefined, { deadline: soon() }) as Promise<{ name: string }>,
      (async () => {
        const seen: InferResponse[] = [];
        await transport.streamInfer!(view, repeatRequest([4, 5]), { deadline: soon() }, (response) => seen.push(response));
        return seen.map(outValue);
      })(),
    ]);
    expect(metadata.name).toBe('repeat_int32');
    expect(streamed).toEqual([4, 5, undefined]);
  });
});
