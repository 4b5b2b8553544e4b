/**
 * The onnxruntime backend's sessions: loading one InferenceSession per instance and running batches on it.
 * The pooled worker threads serve them (onnxruntime-worker.ts), and so does the main thread for the tiny
 * CPU models that run inline (worker/inline-session.ts), where a thread hop costs more than the model.
 */
import * as ort from 'onnxruntime-node';
import { TesseraError } from '../../../../shared/src/errors/index.js';
import {
  decodeBytesElements,
  elementCount,
  encodeBytesElements,
  tensorToTypedArray,
} from '../../../../shared/src/tensors/index.js';
import type { WireTensor } from '../worker/protocol.js';
import { ownedArrayBuffer, runInputTensor, type RunInput } from '../worker/wire-tensor.js';
import type { SessionFactory } from '../worker/session-host.js';
import { wireError } from '../worker/worker-runtime.js';
import { datatypeOfOrt, ortTypeOf } from './element-types.js';
import { missingCudaLibrary, type ExecutionProviderName } from './execution-providers.js';
import { outputDisagreement } from './output-agreement.js';
import { withWebGpuLock } from './webgpu-lock.js';
import type { WorkerReply } from '../worker/worker-runtime.js';
import type { OrtExecuteBody, OrtExecuteReply, OrtInfo, OrtInit, OrtIoInfo, OrtRunResult } from './protocol.js';

/** One instance's session and how it was made. */
interface InstanceSession {
  session: ort.InferenceSession | undefined;
  readonly provider: ExecutionProviderName;
  readonly initMessage: OrtInit;
  /** The session's backend handler's run, when it has one (see handlerRunOf). */
  readonly handlerRun: HandlerRun | undefined;
}

/** onnxruntime-node's session handler's run: feeds and a fetch object (name -> null), answered with the fetched tensors. */
type HandlerRun = (
  feeds: Record<string, ort.Tensor>,
  fetches: Readonly<Record<string, null>>,
  options: ort.InferenceSession.RunOptions,
) => Promise<ort.InferenceSession.OnnxValueMapType>;

/**
 * onnxruntime-common's `InferenceSession.run` checks the feeds and fetch names and copies the result map
 * on every call, then calls the backend's handler, which runs the native session. batch-plan.ts has
 * checked the names against the session's own already, so the CPU path calls the handler directly (a
 * promise, two objects and the checks' loops less per run; it ran 0.8% of the main thread for `simple`).
 * onnxruntime-node 1.30 keeps it in `handler` (not in the typings): where a version does not, the public
 * run is used.
 */
function handlerRunOf(session: ort.InferenceSession): HandlerRun | undefined {
  const handler = (session as unknown as { handler?: { run?: unknown } }).handler;
  return typeof handler?.run === 'function' ? (handler.run as HandlerRun).bind(handler) : undefined;
}

const NO_RUN_OPTIONS: ort.InferenceSession.RunOptions = {};
/** The handler's fetch object per fetch list (the model's cached list in the usual case), made once. */
const fetchObjects = new WeakMap<readonly string[], Readonly<Record<string, null>>>();

function fetchObjectOf(names: readonly string[]): Readonly<Record<string, null>> {
  let fetches = fetchObjects.get(names);
  if (fetches === undefined) {
    const made: Record<string, null> = {};
    for (const name of names) made[name] = null;
    fetches = made;
    fetchObjects.set(names, fetches);
  }
  return fetches;
}
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

function providerOption(provider: ExecutionProviderName, init: OrtInit): ort.InferenceSession.ExecutionProviderConfig {
  switch (provider) {
    case 'cuda':
      return { name: 'cuda', deviceId: init.gpu?.device ?? 0 };
    case 'webgpu':
      // 'basic' validation (the default) turns a WebGPU error into an exception instead of a crash.
      return { name: 'webgpu', validationMode: 'basic' };
    case 'cpu':
      return 'cpu';
  }
}

/** Holds the process's WebGPU lock around `work` when this instance runs (or tries) WebGPU. */
function underGpuLock<T>(init: OrtInit, provider: ExecutionProviderName, work: () => Promise<T>): Promise<T> {
  return provider === 'webgpu' && init.gpu !== undefined ? withWebGpuLock(init.gpu.webGpuLock, work) : work();
}

async function createSession(init: OrtInit, provider: ExecutionProviderName): Promise<ort.InferenceSession> {
  const { configEntries, ...settings } = init.settings;
  const options: ort.InferenceSession.SessionOptions = {
    ...settings,
    // Flat dotted keys: onnxruntime-node passes each one to AddSessionConfigEntry.
    extra: { ...configEntries },
    executionProviders: [providerOption(provider, init)],
  };
  return underGpuLock(init, provider, () => ort.InferenceSession.create(init.modelPath, options));
}

async function loadCpu(init: OrtInit): Promise<ort.InferenceSession> {
  try {
    return await createSession(init, 'cpu');
  } catch (error) {
    throw TesseraError.invalidArg(
      `instance ${init.instanceName}: onnxruntime could not load '${init.modelPath}': ${errorText(error)}`,
    );
  }
}

interface Loaded {
  readonly session: ort.InferenceSession;
  readonly provider: ExecutionProviderName;
  readonly gpuError?: string;
}

/**
 * A GPU instance tries its providers in order. When none can create the session, the CPU is tried:
 * if it works, the GPU providers were the problem (no device, missing libraries), which is reported
 * as such instead of guessing from onnxruntime's message; if the CPU fails too, the model file is.
 */
async function load(init: OrtInit): Promise<Loaded> {
  if (init.gpu === undefined) return { session: await loadCpu(init), provider: 'cpu' };
  const reasons = [...init.gpu.skipped];
  for (const provider of init.gpu.providers) {
    try {
      const missing = provider === 'cuda' ? missingCudaLibrary() : undefined;
      if (missing !== undefined) throw new Error(`the CUDA execution provider is not installed (${missing} is missing)`);
      return { session: await createSession(init, provider), provider };
    } catch (error) {
      reasons.push(`${provider}: ${errorText(error)}`);
    }
  }
  const gpuError = reasons.join('; ') || 'no GPU execution provider applies';
  const cpu = await loadCpu(init);
  if (init.cpuFallback) return { session: cpu, provider: 'cpu', gpuError };
  await cpu.release();
  throw TesseraError.unavailable(
    `instance ${init.instanceName}: KIND_GPU found no execution provider that can run on GPU ${init.gpu.device}: ${gpuError}`,
  );
}

/** Runs `feeds` on a CPU session of the same model and words the first output that disagrees. */
async function cpuDisagreement(
  init: OrtInit,
  feeds: Record<string, ort.Tensor>,
  outputNames: readonly string[],
  gpuResults: ort.InferenceSession.OnnxValueMapType,
  tolerance: number,
): Promise<string | undefined> {
  const reference = await loadCpu(init);
  try {
    const cpuResults = await reference.run(feeds, [...outputNames]);
    for (const name of outputNames) {
      const gpu = gpuResults[name] as ort.Tensor;
      const cpu = cpuResults[name] as ort.Tensor;
      const problem = outputDisagreement(name, gpu, cpu, tolerance);
      if (problem !== undefined) return problem;
    }
    return undefined;
  } finally {
    await reference.release();
  }
}

function toOrtTensor(input: RunInput): ort.Tensor {
  // The label words refusals only (BF16 here, BYTES below): not a string per input per request.
  const type = ortTypeOf(input.datatype, input.datatype === 'BF16' ? `input '${input.name}'` : '');
  const tensor = runInputTensor(input);
  if (type === 'string') {
    const what = `input '${input.name}'`;
    const elements = decodeBytesElements(tensor.data, elementCount(tensor.shape, what), what);
    return new ort.Tensor('string', elements.map((e) => utf8.decode(e)), tensor.shape);
  }
  // A view, not a copy, where the bytes sit at a multiple of the element size (a buffer from the main
  // thread, a lent view that happens to be aligned); else tensorToTypedArray copies them once.
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

export const ortSessions: SessionFactory<OrtInit, OrtInfo, OrtExecuteBody, OrtExecuteReply> = {
  async open(init) {
    const loaded = await load(init);
    const state: InstanceSession = {
      session: loaded.session,
      provider: loaded.provider,
      initMessage: init,
      handlerRun: handlerRunOf(loaded.session),
    };
    const info: OrtInfo = {
      inputs: ioInfo(loaded.session.inputMetadata, 'input'),
      outputs: ioInfo(loaded.session.outputMetadata, 'output'),
      provider: loaded.provider,
      ...(loaded.gpuError !== undefined ? { gpuError: loaded.gpuError } : {}),
    };
    return { info, session: { execute: (body) => execute(state, body), close: () => release(state) } };
  },
};

async function execute(state: InstanceSession, body: OrtExecuteBody): Promise<WorkerReply<OrtExecuteReply>> {
  const { session, provider, initMessage, handlerRun } = state;
  if (session === undefined) throw TesseraError.internal('onnxruntime session is not loaded');
  let inputNs = 0n;
  let inferNs = 0n;
  let outputNs = 0n;
  const runs: OrtRunResult[] = [];
  // Each output buffer is onnxruntime's own, fresh per run, so none appears twice.
  const transfer: ArrayBuffer[] = [];
  // Each run fails on its own: a bad shape in one request of a non-batching model spares the others.
  for (const run of body.runs) {
    try {
      const t0 = now();
      const feeds: Record<string, ort.Tensor> = {};
      for (const input of run.inputs) feeds[input.name] = toOrtTensor(input);
      const t1 = now();
      const running = session;
      // onnxruntime reads the fetch names without keeping or changing the list.
      const fetches = run.outputNames as string[];
      const results =
        provider !== 'cpu'
          ? await underGpuLock(initMessage, provider, () => running.run(feeds, fetches))
          : handlerRun !== undefined
            ? await handlerRun(feeds, fetchObjectOf(run.outputNames), NO_RUN_OPTIONS)
            : await running.run(feeds, fetches);
      const t2 = now();
      if (body.checkAgainstCpu !== undefined && provider !== 'cpu' && initMessage !== undefined) {
        const problem = await cpuDisagreement(initMessage, feeds, run.outputNames, results, body.checkAgainstCpu);
        if (problem !== undefined) throw TesseraError.internal(`${provider} disagrees with the CPU: ${problem}`);
      }
      const outputs: WireTensor[] = [];
      for (const name of run.outputNames) {
        const value = results[name];
        if (value === undefined) throw TesseraError.internal(`onnxruntime returned no output '${name}'`);
        const output = toWire(name, value);
        outputs.push(output);
        if (output.data.byteLength > 0 && !transfer.includes(output.data)) transfer.push(output.data);
      }
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
    transfer,
  };
}

async function release(state: InstanceSession): Promise<void> {
  const closing = state.session;
  state.session = undefined;
  if (closing !== undefined) await underGpuLock(state.initMessage, state.provider, () => closing.release());
}
