/**
 * A wave's answers are written from views of the batch's one output buffer (issue 18, 2026-11-26f): an
 * HTTP binary answer writes its JSON header and its own rows of the output as they are, a gRPC answer its
 * protobuf head and then its rows. Strangers share that buffer, so each must get exactly its own rows,
 * byte for byte, never a neighbour's, over both protocols and with a mix of binary and JSON answers in
 * one batch. Real node servers (HTTP and gRPC on loopback) and a real onnxruntime session in the pool.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { rm } from 'node:fs/promises';
import { createNodeCore } from '../../gpu-node/src/server-api/node-core-impl.js';
import { createHttpServer } from '../../gpu-node/src/server/http/index.js';
import { createGrpcServer } from '../../gpu-node/src/server/grpc/index.js';
import { createHttpInferClient } from '../../loadtests/src/lib/clients/http-client.js';
import { createGrpcInferClient } from '../../loadtests/src/lib/clients/grpc-client.js';
import type { InferRequest } from '../../shared/src/tensors/index.js';
import { writeDoublerRepository } from './support/doubler-repository.js';

const WIDTH = 1024;
const WAVE = 8;

function row(seed: number): Float32Array {
  return new Float32Array(WIDTH).map((_, i) => seed * 10_000 + i);
}

function request(seed: number, binary: boolean, id = `wave-${seed}`): InferRequest {
  const values = row(seed);
  return {
    id,
    modelName: 'doubler',
    inputs: [{ name: 'INPUT0', datatype: 'FP32', shape: [1, WIDTH], data: new Uint8Array(values.buffer) }],
    outputs: [{ name: 'OUTPUT0', binaryData: binary }],
    parameters: {},
  };
}

function expectedBytes(seed: number): Buffer {
  return Buffer.from(row(seed).map((v) => v * 2).buffer);
}

let dir: string;
let core: ReturnType<typeof createNodeCore>;
let http: ReturnType<typeof createHttpServer>;
let grpc: ReturnType<typeof createGrpcServer>;
let httpPort: number;
let grpcPort: number;

beforeAll(async () => {
  // A long delay: the wave is formed by its size, so all eight share one run.
  const batching = `dynamic_batching { preferred_batch_size: [ ${WAVE} ] max_queue_delay_microseconds: 2000000 }`;
  dir = await writeDoublerRepository('tessera-sec-wave-', { width: WIDTH, maxBatchSize: WAVE, extraConfig: [batching] });
  core = createNodeCore({ repositoryPath: dir, controlMode: 'explicit', loadModels: ['doubler'] });
  await core.start();
  http = createHttpServer(core, {});
  httpPort = (await http.listen(0, '127.0.0.1')).port;
  grpc = createGrpcServer(core, {});
  grpcPort = (await grpc.listen(0, '127.0.0.1')).port;
}, 60_000);

afterAll(async () => {
  await http?.close({ graceMs: 100 });
  await grpc?.close(100);
  await core?.shutdown({ timeoutMs: 5000 });
  await rm(dir, { recursive: true, force: true });
});

describe('the answers of one wave', () => {
  it('over HTTP: each caller gets exactly its own rows, binary and JSON alike', async () => {
    const client = createHttpInferClient('127.0.0.1', httpPort, WAVE);
    try {
      const seeds = Array.from({ length: WAVE }, (_, i) => i + 1);
      const answers = await Promise.all(seeds.map((seed) => client.infer(request(seed, seed % 3 !== 0))));
      answers.forEach((answer, i) => {
        const output = answer.response.outputs[0]!;
        expect(answer.response.id).toBe(`wave-${seeds[i]}`);
        expect(Buffer.from(output.data).equals(expectedBytes(seeds[i]!))).toBe(true);
      });
    } finally {
      await client.close();
    }
  });

  it('over gRPC: each caller gets exactly its own rows', async () => {
    const client = createGrpcInferClient('127.0.0.1', grpcPort);
    try {
      const seeds = Array.from({ length: WAVE }, (_, i) => 100 + i);
      const answers = await Promise.all(seeds.map((seed) => client.infer(request(seed, true))));
      answers.forEach((answer, i) => {
        expect(answer.response.id).toBe(`wave-${seeds[i]}`);
        expect(Buffer.from(answer.response.outputs[0]!.data).equals(expectedBytes(seeds[i]!))).toBe(true);
      });
    } finally {
      await client.close();
    }
  });

  // Answers without an id are sent as a remembered head (answer-head-memo.ts) and the caller's rows: two
  // waves in a row, with and without ids mixed, so remembered and fresh heads go out side by side.
  it('over gRPC with remembered answer heads: each caller still gets exactly its own rows and its own id', async () => {
    const client = createGrpcInferClient('127.0.0.1', grpcPort);
    try {
      for (const first of [200, 300]) {
        const seeds = Array.from({ length: WAVE }, (_, i) => first + i);
        const ids = seeds.map((seed) => (seed % 2 === 0 ? '' : `wave-${seed}`));
        const answers = await Promise.all(seeds.map((seed, i) => client.infer(request(seed, true, ids[i]))));
        answers.forEach((answer, i) => {
          expect(answer.response.id).toBe(ids[i]);
          expect(answer.response.outputs[0]!.shape).toEqual([1, WIDTH]);
          expect(Buffer.from(answer.response.outputs[0]!.data).equals(expectedBytes(seeds[i]!))).toBe(true);
        });
      }
    } finally {
      await client.close();
    }
  });
});
