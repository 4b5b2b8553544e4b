/**
 * Worker-thread entry of one onnxruntime instance: it owns one InferenceSession, because session.run
 * blocks the thread it runs on for the whole inference.
 */
import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import * as ort from 'onnxruntime-node';
import { TesseraError } from '../../../../shared/src/errors/index.js';
import {
  decodeBytesElements,
  elementCount,
  encodeBytesElements,
  tensorToTypedArray,
} from '../../../../shared/src/tensors/index.js';
import type { WireTensor } from '../worker/protocol.js';
import { ownedArrayBuffer, wireToTensor } from '../worker/wire-tensor.js';
import { serveWorker, wireError } from '../worker/worker-runtime.js';
import { datatypeOfOrt, ortTypeOf } from './element-types.js';
import type { OrtExecuteBody, OrtExecuteReply, OrtInfo, OrtInit, OrtIoInfo, OrtRunResult } from './protocol.js';

let session: ort.InferenceSession | undefined;
// Fatal: batch-plan.ts refuses elements that are not valid UTF-8 before they get here; never alter one.
const utf8 = new TextDecoder('utf-8', { fatal: true });

function now(): bigint {
  return process.hrtime.bigint();
}

function errorText(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

function ioInfo(metadata: readonly ort.InferenceSession.ValueMetadata[], kind: string): OrtIoInfo[] {
  return metadata.map((m) => {
    if (!m.isTensor) {
      throw TesseraError.unsupported(`model ${kind} '${m.name}' is not a tensor (sequences and maps are not supported)`);
    }
    // Symbolic dimensions ('batch') and unknown ones become -1, the config's "variable" marker.
    const dims = m.shape.map((d) => (typeof d === 'number' && d >= 0 ? d : -1));
    return { name: m.name, type: m.type, dims };
  });
}

async function createSession(init: OrtInit, cuda: boolean): Promise<ort.InferenceSession> {
  const { configEntries, ...settings } = init.settings;
  const options: ort.InferenceSession.SessionOptions = {
    ...settings,
    // Flat dotted keys: onnxruntime-node passes each one to AddSessionConfigEntry.
    extra: { ...configEntries },
    executionProviders: cuda ? [{ name: 'cuda', deviceId: init.cudaDevice ?? 0 }] : ['cpu'],
  };
  return ort.InferenceSession.create(init.modelPath, options);
}

async function loadCpu(init: OrtInit): Promise<ort.InferenceSession> {
  try {
    return await createSession(init, false);
  } catch (error) {
    throw TesseraError.invalidArg(
      `instance ${init.instanceName}: onnxruntime could not load '${init.modelPath}': ${errorText(error)}`,
    );
  }
}

/**
 * The provider library onnxruntime-node loads for CUDA, when the package's own folder for this
 * platform lacks it: the CPU-only install (`ONNXRUNTIME_NODE_INSTALL=skip`) ships only the CPU runtime.
 * Undefined when it is there, or when the layout is not the one we know (then onnxruntime decides).
 */
function missingCudaProvider(): string | undefined {
  let dir: string;
  try {
    dir = join(dirname(createRequire(import.meta.url).resolve('onnxruntime-node')), '..', 'bin', 'napi-v6', process.platform, process.arch);
  } catch {
    return undefined;
  }
  if (process.platform !== 'linux' || !existsSync(dir)) return undefined;
  const library = join(dir, 'libonnxruntime_providers_shared.so');
  return existsSync(library) ? undefined : library;
}

/**
 * A CUDA session that fails to be created is retried on the CPU: if the CPU works, CUDA was the
 * problem (no GPU build, missing libraries), which is reported as such instead of guessing from
 * onnxruntime's message; if the CPU fails too, the model file is the problem.
 */
async function load(init: OrtInit): Promise<{ session: ort.InferenceSession; cudaError?: string }> {
  if (init.cudaDevice === undefined) return { session: await loadCpu(init) };
  try {
    const missing = missingCudaProvider();
    // Said here instead of asking onnxruntime, which would print "Failed to load library
    // libonnxruntime_providers_shared.so" to stderr before failing the same way.
    if (missing !== undefined) throw new Error(`the CUDA execution provider is not installed (${missing} is missing)`);
    return { session: await createSession(init, true) };
  } catch (error) {
    const cudaError = errorText(error);
    const cpu = await loadCpu(init);
    if (init.cpuFallback) return { session: cpu, cudaError };
    await cpu.release();
    throw TesseraError.unavailable(
      `instance ${init.instanceName}: KIND_GPU needs the CUDA execution provider, which could not be loaded: ${cudaError}`,
    );
  }
}

function toOrtTensor(wire: WireTensor): ort.Tensor {
  const what = `input '${wire.name}'`;
  const type = ortTypeOf(wire.datatype, what);
  const tensor = wireToTensor(wire);
  if (type === 'string') {
    const elements = decodeBytesElements(tensor.data, elementCount(tensor.shape, what), what);
    return new ort.Tensor('string', elements.map((e) => utf8.decode(e)), tensor.shape);
  }
  // The buffer is fresh from the main thread (offset 0), so this is a view, not a copy.
  return new ort.Tensor(type, tensorToTypedArray(tensor) as ort.Tensor.DataType, tensor.shape);
}

function toWire(name: string, value: ort.OnnxValue): WireTensor {
  const tensor = value as ort.Tensor;
  const datatype = datatypeOfOrt(tensor.type, `output '${name}'`);
  const data =
    tensor.type === 'string'
      ? ownedArrayBuffer(encodeBytesElements(tensor.data as string[]))
      : ownedArrayBuffer(tensor.data as ArrayBufferView);
  return { name, datatype, shape: [...tensor.dims], data };
}

serveWorker<OrtInit, OrtInfo, OrtExecuteBody, OrtExecuteReply>({
  async init(init) {
    const loaded = await load(init);
    session = loaded.session;
    return {
      inputs: ioInfo(session.inputMetadata, 'input'),
      outputs: ioInfo(session.outputMetadata, 'output'),
      provider: loaded.cudaError === undefined && init.cudaDevice !== undefined ? 'cuda' : 'cpu',
      ...(loaded.cudaError !== undefined ? { cudaError: loaded.cudaError } : {}),
    };
  },

  async execute(body) {
    if (session === undefined) throw TesseraError.internal('onnxruntime session is not loaded');
    let inputNs = 0n;
    let inferNs = 0n;
    let outputNs = 0n;
    const runs: OrtRunResult[] = [];
    const transfer = new Set<ArrayBuffer>();
    // Each run fails on its own: a bad shape in one request of a non-batching model spares the others.
    for (const run of body.runs) {
      try {
        const t0 = now();
        const feeds: Record<string, ort.Tensor> = {};
        for (const input of run.inputs) feeds[input.name] = toOrtTensor(input);
        const t1 = now();
        const results = await session.run(feeds, [...run.outputNames]);
        const t2 = now();
        const outputs = run.outputNames.map((name) => {
          const value = results[name];
          if (value === undefined) throw TesseraError.internal(`onnxruntime returned no output '${name}'`);
          return toWire(name, value);
        });
        for (const o of outputs) if (o.data.byteLength > 0) transfer.add(o.data);
        outputNs += now() - t2;
        inputNs += t1 - t0;
        inferNs += t2 - t1;
        runs.push({ outputs });
      } catch (error) {
        runs.push({ error: wireError(error) });
      }
    }
    return {
      body: { runs, inputNs: Number(inputNs), inferNs: Number(inferNs), outputNs: Number(outputNs) },
      transfer: [...transfer],
    };
  },

  async close() {
    await session?.release();
    session = undefined;
  },
});
