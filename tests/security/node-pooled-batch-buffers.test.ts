/**
 * A batch's joined inputs go to the worker thread in a buffer that comes back after the run and is
 * reused for the next batch of the same size (gpu-node/src/backends/onnxruntime/batch-buffer-pool.ts).
 * Strangers share those buffers one after another, so: a buffer is handed to one batch at a time, every
 * byte of it is the new batch's, a buffer an answer still refers to is never taken back (an output that
 * shares an input's buffer stays out of the pool), and the pool's memory is bounded. The end-to-end
 * case runs real onnxruntime sessions in the pool with an Identity graph, the model whose outputs could
 * most easily be its inputs.
 */
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { encodeModel, OnnxDataType } from '../../gpu-node/src/example-models/onnx-writer.js';
import { createOnnxRuntimeBackend } from '../../gpu-node/src/backends/onnxruntime/index.js';
import { BatchBufferPool } from '../../gpu-node/src/backends/onnxruntime/batch-buffer-pool.js';
import { collectSpentInputs } from '../../gpu-node/src/backends/onnxruntime/onnxruntime-sessions.js';
import type { ExecutionResult, ModelSource } from '../../gpu-node/src/backends/backend.js';
import { cpuSpec, modelConfig, request, tempRepo, typedTensor, type TempRepo } from '../../gpu-node/test/support/backend-test-support.js';
import type { WireTensor } from '../../gpu-node/src/backends/worker/protocol.js';

const WIDTH = 256;

/** OUTPUT0 = INPUT0, FP32 [batch, 256]. */
function identity(): Uint8Array {
  const io = (name: string) => ({ name, elemType: OnnxDataType.FLOAT, shape: ['batch', WIDTH] });
  return encodeModel({
    graph: { name: 'identity_fp32', nodes: [{ opType: 'Identity', inputs: ['INPUT0'], outputs: ['OUTPUT0'] }], inputs: [io('INPUT0')], outputs: [io('OUTPUT0')] },
  });
}

function row(seed: number): Float32Array {
  return new Float32Array(WIDTH).map((_, i) => seed * 1000 + i);
}

function output(result: ExecutionResult | undefined): number[] {
  if (result === undefined || 'error' in result) throw new Error(`expected outputs, got ${String(result && 'error' in result ? result.error : result)}`);
  const data = result.outputs[0]!.data;
  return [...new Float32Array(data.buffer.slice(data.byteOffset, data.byteOffset + data.byteLength))];
}

describe('pooled batch input buffers', () => {
  let repo: TempRepo;
  let source: ModelSource;
  // Two cores: the model runs in a pool thread, so its inputs cross and come back.
  const backend = createOnnxRuntimeBackend({ cores: 2, threadPoolSize: 1 });

  beforeAll(async () => {
    repo = await tempRepo();
    source = await repo.source(modelConfig({ name: 'identity_fp32', backend: 'onnxruntime', maxBatchSize: 8 }), 'model.onnx', identity());
  });
  afterAll(async () => {
    await backend.pool.close();
    await repo.remove();
  });

  it('keeps every earlier answer exact while later batches of the same size reuse the buffer', async () => {
    const instance = await backend.createInstance(source, cpuSpec('identity_fp32_0'));
    // Spies that call through: to show that buffers did come back and were reused.
    const give = vi.spyOn(BatchBufferPool.prototype, 'give');
    const take = vi.spyOn(BatchBufferPool.prototype, 'take');
    try {
      const held: { expected: number[]; result: ExecutionResult | undefined }[] = [];
      for (let wave = 0; wave < 6; wave++) {
        const rows = [row(wave * 2 + 1), row(wave * 2 + 2)];
        const { results } = await instance.execute(rows.map((r) => request([typedTensor('INPUT0', 'FP32', [1, WIDTH], r)])));
        rows.forEach((r, i) => held.push({ expected: [...r], result: results[i] }));
        // The callers' own tensors are whole and unchanged (they were copied into the batch, not lent).
        expect(rows.map((r) => [r.byteLength, r[0]])).toEqual([
          [WIDTH * 4, (wave * 2 + 1) * 1000],
          [WIDTH * 4, (wave * 2 + 2) * 1000],
        ]);
      }
      // Read after all six waves: no later batch wrote into an earlier answer.
      for (const { expected, result } of held) expect(output(result)).toEqual(expected);
      const given = new Set(give.mock.calls.map(([buffer]) => buffer));
      const reused = take.mock.results.filter((r) => r.type === 'return' && given.has((r.value as Uint8Array).buffer as ArrayBuffer));
      expect(reused.length).toBeGreaterThan(0);
    } finally {
      give.mockRestore();
      take.mockRestore();
      await instance.close();
    }
  });
});

describe('what the worker hands back', () => {
  const wire = (name: string, data: ArrayBuffer): WireTensor => ({ name, datatype: 'FP32', shape: [1, data.byteLength / 4], data });

  it('never hands back an input buffer that an output shares', () => {
    const shared = new ArrayBuffer(16);
    const own = new ArrayBuffer(16);
    // The outputs are on the transfer list first; `shared` is one of them.
    const transfer = [shared];
    const spent: ArrayBuffer[] = [];
    collectSpentInputs([wire('A', shared), wire('B', own)], transfer, spent);
    expect(spent).toEqual([own]);
    expect(spent[0]).toBe(own);
    expect(transfer).toEqual([shared, own]);
  });

  it('never hands back a lent view of a request (not the node\'s own buffer) or an empty buffer', () => {
    const body = new Uint8Array(64);
    const spent: ArrayBuffer[] = [];
    collectSpentInputs([{ name: 'A', datatype: 'FP32', shape: [1, 4], data: body.subarray(16, 32) }, wire('B', new ArrayBuffer(0))], [], spent);
    expect(spent).toEqual([]);
  });
});

describe('the pool', () => {
  it('hands a kept buffer to one batch only, and only at its exact size', () => {
    const pool = new BatchBufferPool();
    const buffer = new ArrayBuffer(1024);
    pool.give(buffer);
    pool.give(buffer);
    expect(pool.take(512).buffer).not.toBe(buffer);
    const first = pool.take(1024);
    const second = pool.take(1024);
    expect(first.buffer).toBe(buffer);
    expect(second.buffer).not.toBe(buffer);
  });

  it('keeps at most its count and bytes, and nothing detached', () => {
    const pool = new BatchBufferPool(2, 3000);
    for (let i = 0; i < 5; i++) pool.give(new ArrayBuffer(1000));
    expect(pool.size).toBe(2);
    const big = new BatchBufferPool(4, 3000);
    big.give(new ArrayBuffer(2000));
    big.give(new ArrayBuffer(2000));
    expect(big.size).toBe(1);
    const detached = new ArrayBuffer(8);
    structuredClone(detached, { transfer: [detached] });
    big.give(detached);
    expect(big.size).toBe(1);
  });
});
