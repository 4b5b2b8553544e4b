/**
 * On a one-core node, tiny CPU ONNX models run on the main thread (gpu-node/src/backends/worker/inline-session.ts). A
 * stranger can send such a model a tensor as large as the body limits allow, and a small graph over big
 * tensors would hold the event loop: such a batch runs in the worker pool instead, its answer unaltered,
 * and a malformed request is refused on its own without harming the next. A request's tensors are lent to
 * the main thread's run as they are (views of its body, at any offset): the model reads exactly the bytes
 * sent, and a run in the pool gets a copy, never the caller's buffer. Real onnxruntime sessions.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { encodeModel, OnnxDataType } from '../../gpu-node/src/example-models/onnx-writer.js';
import { createOnnxRuntimeBackend } from '../../gpu-node/src/backends/onnxruntime/index.js';
import type { ExecutionResult, ModelSource } from '../../gpu-node/src/backends/backend.js';
import { cpuSpec, modelConfig, request, tempRepo, typedTensor, type TempRepo } from '../../gpu-node/test/support/backend-test-support.js';

/** OUTPUT0 = INPUT0 + INPUT1, OUTPUT1 = INPUT0 - INPUT1 over INT32 [batch, n] of any n: a file of ~200 bytes. */
function addSubAnyWidth(): Uint8Array {
  const io = (name: string) => ({ name, elemType: OnnxDataType.INT32, shape: ['batch', 'n'] });
  return encodeModel({
    graph: {
      name: 'add_sub_any',
      nodes: [
        { opType: 'Add', inputs: ['INPUT0', 'INPUT1'], outputs: ['OUTPUT0'] },
        { opType: 'Sub', inputs: ['INPUT0', 'INPUT1'], outputs: ['OUTPUT1'] },
      ],
      inputs: [io('INPUT0'), io('INPUT1')],
      outputs: [io('OUTPUT0'), io('OUTPUT1')],
    },
  });
}

function int32Output(result: ExecutionResult | undefined, name: string): Int32Array {
  if (result === undefined || 'error' in result) throw new Error(`expected outputs, got ${String(result && 'error' in result ? result.error : result)}`);
  const tensor = result.outputs.find((o) => o.name === name);
  if (tensor === undefined) throw new Error(`no output ${name}`);
  return new Int32Array(tensor.data.buffer, tensor.data.byteOffset, tensor.data.byteLength / 4);
}

describe('a tiny model on the main thread, fed by a stranger', () => {
  let repo: TempRepo;
  let source: ModelSource;
  // One core: the case where tiny models run on the main thread by default.
  const backend = createOnnxRuntimeBackend({ cores: 1 });

  beforeAll(async () => {
    repo = await tempRepo();
    source = await repo.source(modelConfig({ name: 'add_sub_any', backend: 'onnxruntime', maxBatchSize: 4 }), 'model.onnx', addSubAnyWidth());
  });
  afterAll(async () => {
    await backend.pool.close();
    await repo.remove();
  });

  it('runs a batch of 4M-element tensors in the pool, not on the main thread, and every answer is exact', async () => {
    const instance = await backend.createInstance(source, cpuSpec('add_sub_any_0'));
    try {
      expect(backend.pool.stats().threads).toBe(0);
      const n = 4 * 1024 * 1024;
      const a = new Int32Array(n).map((_, i) => i);
      const b = new Int32Array(n).fill(7);
      // 16 MB a tensor: Add and Sub over them would hold the event loop for milliseconds.
      const big = await instance.execute([request([typedTensor('INPUT0', 'INT32', [1, n], a), typedTensor('INPUT1', 'INT32', [1, n], b)])]);
      const sum = int32Output(big.results[0], 'OUTPUT0');
      const difference = int32Output(big.results[0], 'OUTPUT1');
      expect(sum.length).toBe(n);
      expect([sum[0], sum[n - 1], difference[0], difference[n - 1]]).toEqual([7, n - 1 + 7, -7, n - 1 - 7]);
      expect(backend.pool.stats()).toMatchObject({ threads: 1, perThread: [{ sessions: 1 }] });
      // The pool got a copy: the caller's buffers are whole (not detached by a transfer) and unchanged.
      expect([a.byteLength, a[n - 1], b.byteLength, b[0]]).toEqual([n * 4, n - 1, n * 4, 7]);

      // Small requests stay on the main thread: still exact, and a malformed one fails alone.
      const small = request([typedTensor('INPUT0', 'INT32', [1, 2], new Int32Array([5, 6])), typedTensor('INPUT1', 'INT32', [1, 2], new Int32Array([1, 1]))]);
      const mismatched = request([typedTensor('INPUT0', 'INT32', [1, 2], new Int32Array([5, 6])), typedTensor('INPUT1', 'INT32', [1, 3], new Int32Array([1, 1, 1]))]);
      const { results } = await instance.execute([small, mismatched]);
      expect([...int32Output(results[0], 'OUTPUT1')]).toEqual([4, 5]);
      expect(results[1]).toMatchObject({ error: { code: 'INVALID_ARG' } });
    } finally {
      await instance.close();
    }
  });

  it('reads lent views at odd and aligned offsets of a larger buffer exactly as sent, and leaves them unchanged', async () => {
    const instance = await backend.createInstance(source, cpuSpec('add_sub_any_2'));
    try {
      // As an HTTP body holds them: a JSON part of odd length, then the tensors, then other bytes.
      const body = new Uint8Array(64).fill(0x7f);
      const at = (offset: number, values: number[]): Uint8Array => {
        const bytes = new Uint8Array(new Int32Array(values).buffer);
        body.set(bytes, offset);
        return body.subarray(offset, offset + bytes.byteLength);
      };
      const odd = at(7, [10, -20, 30]);
      const aligned = at(24, [1, 2, 3]);
      const sent = body.slice();
      const lent = request([
        { name: 'INPUT0', datatype: 'INT32', shape: [1, 3], data: odd },
        { name: 'INPUT1', datatype: 'INT32', shape: [1, 3], data: aligned },
      ]);
      const [result] = (await instance.execute([lent])).results;
      expect([...int32Output(result, 'OUTPUT0')]).toEqual([11, -18, 33]);
      expect([...int32Output(result, 'OUTPUT1')]).toEqual([9, -22, 27]);
      expect(body).toEqual(sent);
    } finally {
      await instance.close();
    }
  });

  it('refuses a malformed request on the main thread without harming the next one', async () => {
    const instance = await backend.createInstance(source, cpuSpec('add_sub_any_1'));
    try {
      const bad = request([typedTensor('INPUT0', 'INT32', [1, 2], new Int32Array([1, 2])), typedTensor('INPUT1', 'INT32', [1, 3], new Int32Array([1, 2, 3]))]);
      const [refused] = (await instance.execute([bad])).results;
      expect(refused).toMatchObject({ error: { code: expect.stringMatching(/INVALID_ARG|INTERNAL/) } });
      const good = request([typedTensor('INPUT0', 'INT32', [1, 2], new Int32Array([1, 2])), typedTensor('INPUT1', 'INT32', [1, 2], new Int32Array([3, 4]))]);
      expect([...int32Output((await instance.execute([good])).results[0], 'OUTPUT0')]).toEqual([4, 6]);
    } finally {
      await instance.close();
    }
  });
});
