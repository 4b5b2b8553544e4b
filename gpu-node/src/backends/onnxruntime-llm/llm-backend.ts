/**
 * `backend: "onnxruntime_llm"`: runs a decoder-only ONNX model (decoder-layout.ts) as a decoupled model
 * with the vLLM-style I/O (input `text_input`, optional `stream`, `sampling_parameters`,
 * `exclude_input_in_output`; output `text_output`), so the generate extension and the OpenAI API serve
 * it. Each instance runs one continuous-batching engine (batch-engine.ts) on a thread of its own
 * (llm-worker.ts); this side only turns requests into messages and the thread's events into responses.
 * The instance takes many requests at once (`concurrency`): waiting for admission, priorities and the
 * KV budget are the engine's business (llm-config.ts lists the parameters).
 */
import { dirname } from 'node:path';
import type { Worker } from 'node:worker_threads';
import { TesseraError, type ErrorCode } from '../../../../shared/src/errors/index.js';
import { silentLogger, type Logger } from '../../../../shared/src/logging/index.js';
import { decodeBytesElements, encodeBytesElements, type Tensor } from '../../../../shared/src/tensors/index.js';
import { startModuleWorker } from '../../../../shared/src/workers/index.js';
import type { Backend, BackendInstance, ExecutionBatchResult, ExecutionRequest, ExecutionResult, InstanceSpec, ModelSource } from '../backend.js';
import { siblingModule } from '../worker/sibling-module.js';
import type { EngineStats } from './engine-stats.js';
import { llmSettingsOf, type LlmSettings } from './llm-config.js';
import type { HostMessage, LlmWorkerData, LoadedInfo, WireEvent, WorkerMessage } from './protocol.js';
import { parseSamplingParameters } from './sampling.js';
import { startGcSampler } from './gc-sampler.js';
import { handoffCounter, markHandled } from './first-token-handoff.js';

export const ONNXRUNTIME_LLM_BACKEND = 'onnxruntime_llm';
/** No tokenizer makes a token of more characters than this; longer prompts cannot fit the context. */
const MAX_CHARS_PER_TOKEN = 64;

const textDecoder = new TextDecoder();

interface Pending {
  readonly request: ExecutionRequest;
  readonly stream: boolean;
  readonly prefix: string;
  text: string;
  readonly resolve: (result: ExecutionResult) => void;
}

function firstElement(request: ExecutionRequest, name: string): Uint8Array | undefined {
  const tensor = request.inputs.find((t) => t.name === name);
  if (tensor === undefined) return undefined;
  if (tensor.datatype === 'BOOL') return tensor.data.subarray(0, 1);
  return decodeBytesElements(tensor.data, undefined, `input '${name}'`)[0];
}

function flag(request: ExecutionRequest, name: string): boolean {
  const value = firstElement(request, name);
  return value !== undefined && value[0] !== 0;
}

function priorityOf(request: ExecutionRequest): number {
  const value = request.parameters['priority'];
  return typeof value === 'number' && Number.isSafeInteger(value) && value > 0 ? value : 0;
}

/**
 * TESSERA_LLM_ENGINE_YOUNG_MB (benches): the engine thread's young generation in MiB (V8's default when unset),
 * to try the engine isolate's GC behaviour under another young generation without a rebuild.
 */
function engineWorkerOptions(): { resourceLimits?: { maxYoungGenerationSizeMb: number } } {
  const young = Number(process.env['TESSERA_LLM_ENGINE_YOUNG_MB'] ?? '');
  return Number.isFinite(young) && young > 0 ? { resourceLimits: { maxYoungGenerationSizeMb: young } } : {};
}

export class LlmInstance implements BackendInstance {
  private readonly pending = new Map<number, Pending>();
  private readonly statsWaiters = new Map<number, (stats: EngineStats) => void>();
  private nextId = 1;
  private closed = false;
  private failure: TesseraError | undefined;
  readonly concurrency: number;

  private constructor(
    readonly spec: InstanceSpec,
    private readonly worker: Worker,
    private readonly settings: LlmSettings,
    readonly info: LoadedInfo,
    private readonly batching: boolean,
    private readonly handoff: Int32Array,
  ) {
    // Enough requests inside that priorities and admission order act on a real queue; beyond it the
    // node's scheduler holds them.
    this.concurrency = settings.maxNumSeqs + (settings.maxQueueSize > 0 ? settings.maxQueueSize : settings.maxNumSeqs * 4);
    worker.on('message', (message: WorkerMessage) => this.onMessage(message));
    worker.on('exit', (code) => {
      if (!this.closed) this.failAll(TesseraError.internal(`the engine thread of '${spec.name}' stopped (exit code ${code})`));
    });
  }

  static async start(source: ModelSource, spec: InstanceSpec): Promise<LlmInstance> {
    startGcSampler('main');
    const settings = llmSettingsOf(source);
    const handoff = handoffCounter();
    const data: LlmWorkerData = { model: source.name, modelPath: source.modelPath, tokenizerDirs: [source.versionDir, dirname(source.versionDir)], settings, handoff };
    const worker = startModuleWorker(siblingModule(import.meta.url, 'llm-worker'), data, engineWorkerOptions());
    const info = await new Promise<LoadedInfo>((resolve, reject) => {
      const onMessage = (message: WorkerMessage) => {
        if (message.type === 'ready') resolve(message.info);
        else if (message.type === 'load-failed') reject(new TesseraError(message.error.code as ErrorCode, message.error.message));
        else return;
        worker.off('message', onMessage);
      };
      worker.on('message', onMessage);
      worker.once('error', (error) => reject(TesseraError.internal(`model '${source.name}': the engine thread failed: ${error.message}`)));
      worker.once('exit', (code) => reject(TesseraError.internal(`model '${source.name}': the engine thread exited (code ${code}) while loading`)));
    }).catch(async (error: unknown) => {
      await worker.terminate();
      throw error;
    });
    return new LlmInstance(spec, worker, settings, info, source.config.maxBatchSize >= 1, handoff);
  }

  async execute(requests: readonly ExecutionRequest[]): Promise<ExecutionBatchResult> {
    const start = process.hrtime.bigint();
    const results = await Promise.all(requests.map((r) => this.one(r)));
    return { results, timing: { computeInputNs: 0, computeInferNs: Number(process.hrtime.bigint() - start), computeOutputNs: 0 } };
  }

  /** Requests handed to the engine and not yet answered. */
  get inflight(): number {
    return this.pending.size;
  }

  /** The engine's counters (tests and the benchmark read them). */
  engineStats(): Promise<EngineStats> {
    const id = this.nextId++;
    return new Promise((resolve) => {
      this.statsWaiters.set(id, resolve);
      this.post({ type: 'stats', id });
    });
  }

  private one(request: ExecutionRequest): Promise<ExecutionResult> {
    if (this.failure !== undefined) return Promise.resolve({ error: this.failure });
    if (this.closed) return Promise.resolve({ error: TesseraError.unavailable(`instance ${this.spec.name} was closed`) });
    let prompt: string;
    let params;
    try {
      const bytes = firstElement(request, 'text_input');
      if (bytes === undefined) throw TesseraError.invalidArg("input 'text_input' must hold one string");
      if (bytes.length > this.settings.contextLength * MAX_CHARS_PER_TOKEN) {
        throw TesseraError.invalidArg(`the prompt is ${bytes.length} bytes, far more than the model's context of ${this.settings.contextLength} tokens`);
      }
      prompt = textDecoder.decode(bytes);
      params = parseSamplingParameters(firstElement(request, 'sampling_parameters') === undefined ? undefined : textDecoder.decode(firstElement(request, 'sampling_parameters')));
    } catch (error) {
      return Promise.resolve({ error: error instanceof TesseraError ? error : TesseraError.invalidArg(String(error)) });
    }
    const id = this.nextId++;
    return new Promise<ExecutionResult>((resolve) => {
      const stream = request.onResponse !== undefined && flag(request, 'stream');
      const prefix = stream || flag(request, 'exclude_input_in_output') ? '' : prompt;
      const onAbort = () => this.post({ type: 'cancel', id });
      this.pending.set(id, {
        request,
        stream,
        prefix,
        text: '',
        resolve: (result) => {
          request.signal?.removeEventListener('abort', onAbort);
          resolve(result);
        },
      });
      request.signal?.addEventListener('abort', onAbort, { once: true });
      this.post({ type: 'add', id, prompt, params, priority: priorityOf(request), sentAtMs: performance.timeOrigin + performance.now() });
      if (request.signal?.aborted === true) onAbort();
    });
  }

  private textTensor(text: string): Tensor {
    return { name: 'text_output', datatype: 'BYTES', shape: this.batching ? [1, 1] : [1], data: encodeBytesElements([text]) };
  }

  private onMessage(message: WorkerMessage): void {
    if (message.type === 'events') {
      const seq = message.handoff;
      try {
        for (const event of message.events) this.onEvent(event);
      } finally {
        // After node:http's uncork (a next tick queued by the writes above): the events are on their sockets, and
        // the engine thread, asleep until now, may run its next step.
        if (seq !== undefined) process.nextTick(markHandled, this.handoff, seq);
      }
    } else if (message.type === 'stats') {
      this.statsWaiters.get(message.id)?.(message.stats);
      this.statsWaiters.delete(message.id);
    }
  }

  private onEvent(event: WireEvent): void {
    const pending = this.pending.get(event.id);
    if (pending === undefined) return;
    const final = event.done !== undefined || event.error !== undefined;
    if (final) this.pending.delete(event.id);
    if (event.error !== undefined) {
      pending.resolve({ error: new TesseraError(event.error.code as ErrorCode, event.error.message) });
      return;
    }
    if (event.done === 'cancelled') {
      pending.resolve({ error: TesseraError.cancelled('Request was cancelled') });
      return;
    }
    try {
      if (pending.stream) {
        if (event.text !== '') pending.request.onResponse?.([this.textTensor(event.text)], final);
        else if (final) pending.request.onResponse?.([], true);
      } else {
        pending.text += event.text;
        if (final) pending.request.onResponse?.([this.textTensor(pending.prefix + pending.text)], true);
      }
    } catch {
      // A listener's failure (a closed stream) is the caller's; the engine goes on.
    }
    if (final) pending.resolve({ outputs: [] });
  }

  private post(message: HostMessage): void {
    if (this.closed && message.type !== 'close') return;
    this.worker.postMessage(message);
  }

  private failAll(error: TesseraError): void {
    this.failure = error;
    for (const [id, pending] of this.pending) {
      this.pending.delete(id);
      pending.resolve({ error });
    }
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.failAll(TesseraError.unavailable(`instance ${this.spec.name} was closed`));
    this.post({ type: 'close' });
    this.closed = true;
    const exited = new Promise<void>((resolve) => this.worker.once('exit', () => resolve()));
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([exited, new Promise<void>((resolve) => (timer = setTimeout(resolve, 5000)))]);
    clearTimeout(timer);
    await this.worker.terminate();
  }
}

/** `logger`: the node's, so a model whose decode runs must fetch the full presents is reported (once per model). */
export function createOnnxRuntimeLlmBackend(options: { readonly logger?: Logger } = {}): Backend {
  const logger = options.logger ?? silentLogger;
  const reported = new Set<string>();
  return {
    name: ONNXRUNTIME_LLM_BACKEND,
    defaultModelFilename: 'model.onnx',
    async createInstance(source: ModelSource, spec: InstanceSpec): Promise<BackendInstance> {
      const instance = await LlmInstance.start(source, spec);
      const { kvFetch, kvFetchWhy } = instance.info;
      if (kvFetch === 'full' && !reported.has(source.name)) {
        reported.add(source.name);
        // Every decode run then copies the whole cache out of onnxruntime (kv-cache.ts says what that costs).
        logger.warn('decoder model loaded without last-position outputs: decode runs fetch the full presents', { model: source.name, reason: kvFetchWhy });
      }
      return instance;
    },
  };
}
