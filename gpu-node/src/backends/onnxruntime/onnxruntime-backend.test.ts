import { existsSync } from 'node:fs';
import { mkdir, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { decodeBytesElements, type Tensor } from '../../../../shared/src/tensors/index.js';
import type { LogFields, Logger } from '../../../../shared/src/logging/index.js';
import { silentLogger } from '../../../../shared/src/logging/index.js';
import { encodeModel, OnnxDataType, type OnnxDataType as OnnxType } from '../../example-models/onnx-writer.js';
import type { BackendInstance, ExecutionResult, ModelSource } from '../backend.js';
import {
  bytesTensor,
  cpuSpec,
  int32Tensor,
  int32Values,
  modelConfig,
  request,
  tempRepo,
  typedTensor,
  type TempRepo,
} from '../../../test/support/backend-test-support.js';
import { createOnnxRuntimeBackend, INLINE_MAX_MODEL_BYTES } from './onnxruntime-backend.js';

const ORT_BIN = join(dirname(createRequire(import.meta.url).resolve('onnxruntime-node')), '..', 'bin', 'napi-v6', process.platform, process.arch);
const CPU_ONLY_INSTALL = process.platform === 'linux' && existsSync(ORT_BIN) && !existsSync(join(ORT_BIN, 'libonnxruntime_providers_shared.so'));

/** INPUT0, INPUT1 INT32 [batch, 4] → OUTPUT0 = sum, OUTPUT1 = difference. */
function addSubOnnx(): Uint8Array {
  const io = (name: string) => ({ name, elemType: OnnxDataType.INT32, shape: ['batch', 4] });
  return encodeModel({
    graph: {
      name: 'add_sub',
      nodes: [
        { opType: 'Add', inputs: ['INPUT0', 'INPUT1'], outputs: ['OUTPUT0'] },
        { opType: 'Sub', inputs: ['INPUT0', 'INPUT1'], outputs: ['OUTPUT1'] },
      ],
      inputs: [io('INPUT0'), io('INPUT1')],
      outputs: [io('OUTPUT0'), io('OUTPUT1')],
    },
  });
}

/** One Identity per element type: IN_<T> → OUT_<T>, each [batch, 2]. */
function identitiesOnnx(types: Record<string, OnnxType>): Uint8Array {
  const names = Object.keys(types);
  const io = (prefix: string) =>
    names.map((n) => ({ name: `${prefix}_${n}`, elemType: types[n] as OnnxType, shape: ['batch', 2] }));
  return encodeModel({
    graph: {
      name: 'identities',
      nodes: names.map((n) => ({ opType: 'Identity', inputs: [`IN_${n}`], outputs: [`OUT_${n}`] })),
      inputs: io('IN'),
      outputs: io('OUT'),
    },
  });
}

function outputsOf(result: ExecutionResult | undefined): readonly Tensor[] {
  if (result === undefined || 'error' in result) throw new Error(`expected outputs, got ${JSON.stringify(result)}`);
  return result.outputs;
}

function find(outputs: readonly Tensor[], name: string): Tensor | undefined {
  return outputs.find((o) => o.name === name);
}

const addSubConfig = (name: string, maxBatchSize = 8) =>
  modelConfig({ name, backend: 'onnxruntime', maxBatchSize });

// Tiny CPU models run on the main thread of a one-core process; every case runs that way and from the pool.
describe.each([
  ['in the pool', 0],
  ['on the main thread', INLINE_MAX_MODEL_BYTES],
])('onnxruntime backend, tiny CPU models %s', (_where, inlineMaxModelBytes) => {
  let repo: TempRepo;
  let addSub: ModelSource;
  const backend = createOnnxRuntimeBackend({ inlineMaxModelBytes });
  const open: BackendInstance[] = [];

  beforeAll(async () => {
    repo = await tempRepo();
    addSub = await repo.source(addSubConfig('add_sub'), 'model.onnx', addSubOnnx());
  });
  afterAll(async () => {
    await Promise.all(open.map((i) => i.close()));
    await repo.remove();
  });

  async function instance(source: ModelSource, name: string): Promise<BackendInstance> {
    const created = await backend.createInstance(source, cpuSpec(name));
    open.push(created);
    return created;
  }

  it('describes the graph: names, config types and -1 for symbolic dims', async () => {
    expect(backend.defaultModelFilename).toBe('model.onnx');
    const metadata = await backend.describe?.(addSub);
    expect(metadata).toEqual({
      inputs: [
        { name: 'INPUT0', dataType: 'TYPE_INT32', dims: [-1, 4] },
        { name: 'INPUT1', dataType: 'TYPE_INT32', dims: [-1, 4] },
      ],
      outputs: [
        { name: 'OUTPUT0', dataType: 'TYPE_INT32', dims: [-1, 4] },
        { name: 'OUTPUT1', dataType: 'TYPE_INT32', dims: [-1, 4] },
      ],
    });
  });

  it('batches requests of sizes 1, 2, 1 and gives each its own rows and requested outputs', async () => {
    const inst = await instance(addSub, 'add_sub_0');
    const rows = (start: number, n: number) => Array.from({ length: n * 4 }, (_, i) => start + i);
    const ones = (n: number) => Array.from({ length: n * 4 }, () => 1);
    const result = await inst.execute([
      request([int32Tensor('INPUT0', [1, 4], rows(0, 1)), int32Tensor('INPUT1', [1, 4], ones(1))]),
      request([int32Tensor('INPUT0', [2, 4], rows(100, 2)), int32Tensor('INPUT1', [2, 4], ones(2))], ['OUTPUT1']),
      request([int32Tensor('INPUT0', [1, 4], rows(200, 1)), int32Tensor('INPUT1', [1, 4], ones(1))], ['OUTPUT0']),
    ]);
    const [a, b, c] = result.results.map(outputsOf);
    expect(a?.map((o) => o.name)).toEqual(['OUTPUT0', 'OUTPUT1']);
    expect(int32Values(find(a ?? [], 'OUTPUT0'))).toEqual([1, 2, 3, 4]);
    expect(int32Values(find(a ?? [], 'OUTPUT1'))).toEqual([-1, 0, 1, 2]);
    expect(b?.map((o) => o.name)).toEqual(['OUTPUT1']);
    expect(b?.[0]?.shape).toEqual([2, 4]);
    expect(int32Values(b?.[0])).toEqual(rows(99, 2));
    expect(c?.map((o) => o.name)).toEqual(['OUTPUT0']);
    expect(int32Values(c?.[0])).toEqual([201, 202, 203, 204]);
    expect(result.timing.computeInferNs).toBeGreaterThan(0);
    expect(result.timing.computeInputNs).toBeGreaterThan(0);
    expect(result.timing.computeOutputNs).toBeGreaterThan(0);
  });

  it('fails only the request whose shape does not fit the batch', async () => {
    const inst = await instance(addSub, 'add_sub_1');
    const good = request([int32Tensor('INPUT0', [1, 4], [1, 2, 3, 4]), int32Tensor('INPUT1', [1, 4], [1, 1, 1, 1])]);
    const wide = request([int32Tensor('INPUT0', [1, 2], [1, 2]), int32Tensor('INPUT1', [1, 2], [1, 1])]);
    const short = request([int32Tensor('INPUT0', [1, 4], [1, 2, 3, 4])]);
    const { results } = await inst.execute([good, wide, short, good]);
    expect(int32Values(find(outputsOf(results[0]), 'OUTPUT0'))).toEqual([2, 3, 4, 5]);
    expect(results[1]).toMatchObject({ error: { code: 'INVALID_ARG' } });
    expect(String((results[1] as { error: Error }).error.message)).toMatch(/shape \[1,2\].*\[4\] after the batch dimension/);
    expect(results[2]).toMatchObject({ error: { code: 'INVALID_ARG', message: expect.stringMatching(/needs input 'INPUT1'/) } });
    expect(int32Values(find(outputsOf(results[3]), 'OUTPUT0'))).toEqual([2, 3, 4, 5]);
  });

  it('runs a non-batching model once per request', async () => {
    const source = await repo.source(addSubConfig('add_sub_nobatch', 0), 'model.onnx', addSubOnnx());
    const inst = await instance(source, 'add_sub_nobatch_0');
    const { results } = await inst.execute([
      request([int32Tensor('INPUT0', [1, 4], [1, 1, 1, 1]), int32Tensor('INPUT1', [1, 4], [1, 1, 1, 1])]),
      request([int32Tensor('INPUT0', [3, 4], new Array(12).fill(5)), int32Tensor('INPUT1', [3, 4], new Array(12).fill(2))]),
    ]);
    expect(int32Values(find(outputsOf(results[0]), 'OUTPUT0'))).toEqual([2, 2, 2, 2]);
    expect(find(outputsOf(results[1]), 'OUTPUT1')?.shape).toEqual([3, 4]);
    expect(int32Values(find(outputsOf(results[1]), 'OUTPUT1'))).toEqual(new Array(12).fill(3));
  });

  it('round-trips BYTES, BOOL, INT64, FP16, UINT8 and FP64 through a batch', async () => {
    const types = {
      S: OnnxDataType.STRING,
      B: OnnxDataType.BOOL,
      I: OnnxDataType.INT64,
      H: OnnxDataType.FLOAT16,
      U: OnnxDataType.UINT8,
      D: OnnxDataType.DOUBLE,
    };
    const source = await repo.source(modelConfig({ name: 'identities', maxBatchSize: 4 }), 'model.onnx', identitiesOnnx(types));
    const inst = await instance(source, 'identities_0');
    const make = (k: number) =>
      request([
        bytesTensor('IN_S', [1, 2], [`héllo ${k}`, '']),
        typedTensor('IN_B', 'BOOL', [1, 2], new Uint8Array([1, k % 2])),
        typedTensor('IN_I', 'INT64', [1, 2], new BigInt64Array([2n ** 40n + BigInt(k), -1n])),
        typedTensor('IN_H', 'FP16', [1, 2], new Uint16Array([0x3c00, 0xc000 + k])),
        typedTensor('IN_U', 'UINT8', [1, 2], new Uint8Array([k, 255])),
        typedTensor('IN_D', 'FP64', [1, 2], new Float64Array([Math.PI, k])),
      ]);
    const batch = [make(0), make(1)];
    const { results } = await inst.execute(batch);
    batch.forEach((req, k) => {
      const outputs = outputsOf(results[k]);
      for (const input of req.inputs) {
        const out = find(outputs, input.name.replace('IN_', 'OUT_'));
        expect(out?.datatype).toBe(input.datatype);
        expect(out?.shape).toEqual([1, 2]);
        expect([...(out?.data ?? [])]).toEqual([...input.data]);
      }
      const strings = decodeBytesElements(find(outputs, 'OUT_S')?.data ?? new Uint8Array());
      expect(strings.map((s) => new TextDecoder().decode(s))).toEqual([`héllo ${k}`, '']);
    });
  });

  it('refuses KIND_GPU naming each GPU provider and why it could not run, on a machine without a GPU', async () => {
    const noCuda = createOnnxRuntimeBackend({ cudaInstalled: () => false });
    const failure = noCuda.createInstance(addSub, cpuSpec('add_sub_gpu_0', { kind: 'gpu', device: 0 }));
    await expect(failure).rejects.toMatchObject({
      code: 'UNAVAILABLE',
      message: expect.stringMatching(
        /^instance add_sub_gpu_0: KIND_GPU found no execution provider that can run on GPU 0: cuda: libonnxruntime_providers_cuda\.so is not installed; webgpu: .*adapter/,
      ),
    });
  });

  it('tries only the accelerator the config names, and refuses names this build cannot run', async () => {
    const withAccelerators = (name: string, gpu: string[], cpu: string[] = []) =>
      repo.source(
        modelConfig({
          name,
          backend: 'onnxruntime',
          maxBatchSize: 8,
          optimization: {
            executionAccelerators: {
              gpuExecutionAccelerator: gpu.map((n) => ({ name: n })),
              cpuExecutionAccelerator: cpu.map((n) => ({ name: n })),
            },
          },
        }),
        'model.onnx',
        addSubOnnx(),
      );
    const cudaOnly = await withAccelerators('add_sub_cuda', ['cuda']);
    await expect(
      createOnnxRuntimeBackend({ cudaInstalled: () => false }).createInstance(cudaOnly, cpuSpec('add_sub_cuda_0', { kind: 'gpu', device: 0 })),
    ).rejects.toMatchObject({ code: 'UNAVAILABLE', message: expect.not.stringContaining('webgpu') });

    const tensorrt = await withAccelerators('add_sub_trt', ['tensorrt']);
    await expect(backend.createInstance(tensorrt, cpuSpec('add_sub_trt_0', { kind: 'gpu', device: 0 }))).rejects.toMatchObject({
      code: 'INVALID_ARG',
      message: "model 'add_sub_trt': gpu_execution_accelerator 'tensorrt' is not available; use 'cuda' or 'webgpu'",
    });

    const openvino = await withAccelerators('add_sub_ov', [], ['openvino']);
    await expect(backend.createInstance(openvino, cpuSpec('add_sub_ov_0'))).rejects.toMatchObject({
      code: 'INVALID_ARG',
      message: expect.stringContaining("cpu_execution_accelerator 'openvino' is not available"),
    });
  });

  it('reports the CPU provider of a CPU instance in its spec', async () => {
    const inst = await instance(addSub, 'add_sub_provider_0');
    expect(inst.spec).toMatchObject({ kind: 'cpu', device: -1, provider: 'cpu' });
  });

  // The CPU-only install (ONNXRUNTIME_NODE_INSTALL=skip) has no CUDA provider library: the worker says so
  // itself, so onnxruntime never prints its "Failed to load library libonnxruntime_providers_shared.so".
  it.skipIf(!CPU_ONLY_INSTALL)('names the missing CUDA provider library of a CPU-only onnxruntime install', async () => {
    const cuda = await repo.source(
      modelConfig({ name: 'add_sub_cuda_only', backend: 'onnxruntime', maxBatchSize: 8, optimization: { executionAccelerators: { gpuExecutionAccelerator: [{ name: 'cuda' }] } } }),
      'model.onnx',
      addSubOnnx(),
    );
    await expect(backend.createInstance(cuda, cpuSpec('add_sub_gpu_1', { kind: 'gpu', device: 0 }))).rejects.toMatchObject({
      message: expect.stringMatching(/cuda: the CUDA execution provider is not installed \(.*libonnxruntime_providers_shared\.so is missing\)$/),
    });
  });

  it('runs KIND_AUTO GPU instances on the CPU when CUDA cannot load, and says so once', async () => {
    const warnings: LogFields[] = [];
    const logger: Logger = { ...silentLogger, warn: (_m, fields) => void warnings.push(fields ?? {}) };
    const autoBackend = createOnnxRuntimeBackend({ logger });
    const specs = [0, 1].map((i) => cpuSpec(`add_sub_auto_${i}`, { kind: 'gpu', device: 0, auto: true }));
    const instances = await Promise.all(specs.map((s) => autoBackend.createInstance(addSub, s)));
    open.push(...instances);
    expect(instances.map((i) => [i.spec.kind, i.spec.device, i.spec.auto, i.spec.provider])).toEqual([
      ['cpu', -1, true, 'cpu'],
      ['cpu', -1, true, 'cpu'],
    ]);
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toMatchObject({ model: 'add_sub', reason: expect.any(String) });
    const { results } = await instances[0]!.execute([
      request([int32Tensor('INPUT0', [1, 4], [1, 2, 3, 4]), int32Tensor('INPUT1', [1, 4], [4, 3, 2, 1])], ['OUTPUT0']),
    ]);
    expect(int32Values(outputsOf(results[0])[0])).toEqual([5, 5, 5, 5]);
    // Instances asked of a GPU live in the GPU pool, apart from CPU models (and one thread each here).
    expect([autoBackend.gpuPool.stats().threads, autoBackend.pool.stats().threads]).toEqual([Math.min(2, autoBackend.gpuPool.size), 0]);
  });

  it('fails a load with a message naming the model file when it is not ONNX', async () => {
    const source = await repo.source(addSubConfig('broken'), 'model.onnx', 'not a model');
    await expect(backend.createInstance(source, cpuSpec('broken_0'))).rejects.toMatchObject({
      code: 'INVALID_ARG',
      message: expect.stringMatching(/instance broken_0: onnxruntime could not load '.*broken\/1\/model\.onnx'/),
    });
  });
});

describe('onnxruntime backend: where instances run', () => {
  it('runs CPU instances of a tiny model on the main thread and larger ones in the pool', async () => {
    const repo = await tempRepo();
    const source = await repo.source(addSubConfig('add_sub_where'), 'model.onnx', addSubOnnx());
    const size = addSubOnnx().byteLength;
    const inline = createOnnxRuntimeBackend({ inlineMaxModelBytes: size });
    const pooled = createOnnxRuntimeBackend({ inlineMaxModelBytes: size - 1 });
    try {
      const instances = [await inline.createInstance(source, cpuSpec('where_0')), await pooled.createInstance(source, cpuSpec('where_1'))];
      expect([inline.pool.stats().threads, pooled.pool.stats().threads]).toEqual([0, 1]);
      for (const inst of instances) {
        const { results } = await inst.execute([request([int32Tensor('INPUT0', [1, 4], [1, 2, 3, 4]), int32Tensor('INPUT1', [1, 4], [1, 1, 1, 1])])]);
        expect(int32Values(find(outputsOf(results[0]), 'OUTPUT1'))).toEqual([0, 1, 2, 3]);
      }
      await Promise.all(instances.map((inst) => inst.close()));
    } finally {
      await Promise.all([inline.pool.close(), pooled.pool.close()]);
      await repo.remove();
    }
  });

  it('runs tiny models on the main thread by default only when the process has one core', async () => {
    const repo = await tempRepo();
    const source = await repo.source(addSubConfig('add_sub_cores'), 'model.onnx', addSubOnnx());
    const oneCore = createOnnxRuntimeBackend({ cores: 1 });
    const twoCores = createOnnxRuntimeBackend({ cores: 2 });
    try {
      const instances = [await oneCore.createInstance(source, cpuSpec('cores_0')), await twoCores.createInstance(source, cpuSpec('cores_1'))];
      expect([oneCore.pool.stats().threads, twoCores.pool.stats().threads]).toEqual([0, 1]);
      await Promise.all(instances.map((inst) => inst.close()));
    } finally {
      await Promise.all([oneCore.pool.close(), twoCores.pool.close()]);
      await repo.remove();
    }
  });

  it('counts the whole version directory: a small graph beside large external weights runs in the pool', async () => {
    const repo = await tempRepo();
    const source = await repo.source(addSubConfig('add_sub_weights'), 'model.onnx', addSubOnnx());
    const size = addSubOnnx().byteLength;
    const backend = createOnnxRuntimeBackend({ inlineMaxModelBytes: size + 1024 });
    try {
      const light = await backend.createInstance(source, cpuSpec('weights_0'));
      expect(backend.pool.stats().threads).toBe(0);
      // Unused by this graph, but a model's external data sits in its version directory like this.
      await mkdir(join(source.versionDir, 'weights'), { recursive: true });
      await writeFile(join(source.versionDir, 'weights', 'data.bin'), new Uint8Array(2048));
      const heavy = await backend.createInstance(source, cpuSpec('weights_1'));
      expect(backend.pool.stats()).toMatchObject({ threads: 1, perThread: [{ sessions: 1 }] });
      await Promise.all([light.close(), heavy.close()]);
    } finally {
      await backend.pool.close();
      await repo.remove();
    }
  });

  it("runs an inline instance's batches of large tensors in the pool, small ones on the main thread", async () => {
    const repo = await tempRepo();
    const source = await repo.source(addSubConfig('add_sub_large'), 'model.onnx', addSubOnnx());
    // Two INT32 [1, 4] inputs are 32 bytes: inline. Two [2, 4] are 64: the pool.
    const backend = createOnnxRuntimeBackend({ inlineMaxModelBytes: INLINE_MAX_MODEL_BYTES, inlineMaxBatchBytes: 32, threadIdleGraceMs: 0 });
    const inst = await backend.createInstance(source, cpuSpec('large_0'));
    const add = async (rows: number, k: number): Promise<number[]> => {
      const values = new Array(rows * 4).fill(k);
      const { results } = await inst.execute([request([int32Tensor('INPUT0', [rows, 4], values), int32Tensor('INPUT1', [rows, 4], values)])]);
      return int32Values(find(outputsOf(results[0]), 'OUTPUT0'));
    };
    try {
      expect(await add(1, 1)).toEqual([2, 2, 2, 2]);
      expect(backend.pool.stats().threads).toBe(0);
      expect(await add(2, 3)).toEqual(new Array(8).fill(6));
      expect(backend.pool.stats()).toMatchObject({ threads: 1, perThread: [{ sessions: 1 }] });
      expect(await add(1, 5)).toEqual([10, 10, 10, 10]);
      expect(await add(2, 7)).toEqual(new Array(8).fill(14));
      expect(backend.pool.stats()).toMatchObject({ threads: 1, perThread: [{ sessions: 1 }] });
      await inst.close();
      expect(backend.pool.stats().threads).toBe(0);
    } finally {
      await backend.pool.close();
      await repo.remove();
    }
  });

  it('serves eight sessions of four models from one thread, each with its own answers', async () => {
    const repo = await tempRepo();
    const backend = createOnnxRuntimeBackend({ threadPoolSize: 1, inlineMaxModelBytes: 0, threadIdleGraceMs: 0 });
    try {
      const sources = await Promise.all([0, 1, 2, 3].map((m) => repo.source(addSubConfig(`add_sub_${m}`), 'model.onnx', addSubOnnx())));
      const instances = await Promise.all(
        sources.flatMap((source) => [0, 1].map((i) => backend.createInstance(source, cpuSpec(`${source.name}_${i}`, { instanceCount: 2 })))),
      );
      expect(backend.pool.stats()).toMatchObject({ threads: 1, perThread: [{ sessions: 8 }] });
      const results = await Promise.all(
        instances.map((inst, k) => inst.execute([request([int32Tensor('INPUT0', [1, 4], [k, k, k, k]), int32Tensor('INPUT1', [1, 4], [1, 2, 3, 4])])])),
      );
      results.forEach((result, k) => {
        expect(int32Values(find(outputsOf(result.results[0]), 'OUTPUT0'))).toEqual([k + 1, k + 2, k + 3, k + 4]);
      });
      await Promise.all(instances.map((inst) => inst.close()));
      // The thread ends with its last session: nothing of the models is left behind.
      expect(backend.pool.stats().threads).toBe(0);
    } finally {
      await backend.pool.close();
      await repo.remove();
    }
  });

  it('describes a burst of tiny models in one lingering pool thread, not a thread each', async () => {
    const repo = await tempRepo();
    const sources = await Promise.all([0, 1, 2, 3, 4, 5].map((m) => repo.source(addSubConfig(`add_sub_burst_${m}`), 'model.onnx', addSubOnnx())));
    // The one-core case: the instances run inline, so the describes are all the pool ever hosts.
    const lingering = createOnnxRuntimeBackend({ threadPoolSize: 1, inlineMaxModelBytes: INLINE_MAX_MODEL_BYTES, threadIdleGraceMs: 60_000 });
    const ending = createOnnxRuntimeBackend({ threadPoolSize: 1, inlineMaxModelBytes: INLINE_MAX_MODEL_BYTES, threadIdleGraceMs: 0 });
    try {
      for (const backend of [lingering, ending]) {
        // As the repository loads them: a few at a time, each describe before its instances.
        for (const pair of [sources.slice(0, 2), sources.slice(2, 4), sources.slice(4)]) {
          await Promise.all(
            pair.map(async (source) => {
              expect((await backend.describe?.(source))?.inputs.map((io) => io.name)).toEqual(['INPUT0', 'INPUT1']);
              await (await backend.createInstance(source, cpuSpec(`${source.name}_0`))).close();
            }),
          );
        }
      }
      expect(lingering.pool.stats()).toMatchObject({ started: 1, threads: 1, perThread: [{ sessions: 0 }] });
      // Without the grace each describe that finds the pool empty starts an isolate of its own.
      expect(ending.pool.stats()).toMatchObject({ started: 3, threads: 0 });
    } finally {
      await Promise.all([lingering.pool.close(), ending.pool.close()]);
      await repo.remove();
    }
  });
});
