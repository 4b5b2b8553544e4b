/**
 * The engine thread of one onnxruntime_llm instance: it owns the onnxruntime session, the tokenizer,
 * the KV cache and the continuous-batching engine, so neither a step nor tokenization ever blocks the
 * node's event loop. The main thread sends requests and cancellations; the thread answers with each
 * step's events in one message.
 */
import { parentPort, workerData } from 'node:worker_threads';
import * as ort from 'onnxruntime-node';
import { TesseraError } from '../../../../shared/src/errors/index.js';
import { BatchEngine } from './batch-engine.js';
import type { DecoderRunner, SequenceEvent } from './engine-api.js';
import { decoderLayoutOf, type ValueInfo } from './decoder-layout.js';
import type { HostMessage, LlmWorkerData, WireEvent, WorkerMessage } from './protocol.js';
import { rememberingSingleTokens } from './single-token-text.js';
import { loadTokenizer } from './tokenizer-file.js';
import { startGcSampler } from './gc-sampler.js';
import { kvRelayouts } from './kv-cache.js';
import { loadDecoderSession } from './decoder-session.js';
import { startTraceLog } from './trace-log.js';
import { HandoffSender } from './first-token-handoff.js';

const port = parentPort;
if (port === null) throw new Error('llm-worker.ts runs as a worker thread');
const data = workerData as LlmWorkerData;
startGcSampler(`engine ${data.model}`, () => ({ kvRelayouts: { ...kvRelayouts } }));

function post(message: WorkerMessage): void {
  port?.postMessage(message);
}

function wireError(error: unknown): { code: string; message: string } {
  if (error instanceof TesseraError) return { code: error.code, message: error.message };
  return { code: 'INTERNAL', message: error instanceof Error ? error.message : String(error) };
}

function valueInfos(metadata: readonly ort.InferenceSession.ValueMetadata[]): ValueInfo[] {
  return metadata.map((m) => (m.isTensor ? { name: m.name, type: m.type, shape: m.shape } : { name: m.name, type: 'non-tensor', shape: [] }));
}

/** onnxruntime as the engine's runner: plain arrays in, plain arrays out. */
function sessionRunner(session: ort.InferenceSession, outputNames: readonly string[], lastPositionOutputs: readonly string[] | undefined): DecoderRunner {
  return {
    ...(lastPositionOutputs === undefined ? {} : { lastPositionOutputs }),
    async run(feeds, into) {
      const tensor = ({ data: array, dims }: { data: Float32Array | BigInt64Array; dims: readonly number[] }): ort.Tensor =>
        array instanceof Float32Array ? new ort.Tensor('float32', array, dims) : new ort.Tensor('int64', array, dims);
      const tensors: Record<string, ort.Tensor> = {};
      for (const [name, value] of Object.entries(feeds)) tensors[name] = tensor(value);
      if (into !== undefined) {
        // onnxruntime writes into the given tensors' memory, and fetches (copies out) only these outputs.
        const fetches: Record<string, ort.Tensor> = {};
        for (const [name, value] of Object.entries(into)) fetches[name] = tensor(value as { data: Float32Array; dims: readonly number[] });
        await session.run(tensors, fetches);
        return {};
      }
      const outputs = await session.run(tensors, outputNames);
      const result: Record<string, { data: Float32Array; dims: readonly number[] }> = {};
      for (const name of outputNames) {
        const tensor = outputs[name] as ort.Tensor;
        result[name] = { data: tensor.data as Float32Array, dims: tensor.dims };
      }
      return result;
    },
  };
}

async function start(): Promise<void> {
  const { settings } = data;
  let loaded: Awaited<ReturnType<typeof loadDecoderSession>>;
  try {
    loaded = await loadDecoderSession(data.modelPath, {
      intraOpNumThreads: settings.intraOpThreads,
      interOpNumThreads: 1,
      extra: { session: { intra_op: { allow_spinning: '0' } } },
    });
  } catch (error) {
    throw TesseraError.invalidArg(`model '${data.model}': onnxruntime could not load '${data.modelPath}': ${wireError(error).message}`);
  }
  const { session } = loaded;
  const layout = decoderLayoutOf(data.model, valueInfos(session.inputMetadata), valueInfos(session.outputMetadata), {
    ...(settings.heads === undefined ? {} : { heads: settings.heads }),
    ...(settings.headDim === undefined ? {} : { headDim: settings.headDim }),
  });
  const { tokenizer, eosId } = await loadTokenizer(data.model, data.tokenizerDirs, settings.tokenizerFile, settings.eosToken);
  const logitsInfo = session.outputMetadata.find((m) => m.name === 'logits');
  const declaredVocab = logitsInfo?.isTensor === true ? logitsInfo.shape[2] : undefined;
  const tokenizerVocab = tokenizer.get_vocab(true).size;
  const vocab = typeof declaredVocab === 'number' ? declaredVocab : tokenizerVocab;
  if (tokenizerVocab > vocab) {
    throw TesseraError.invalidArg(`model '${data.model}': the tokenizer has ${tokenizerVocab} tokens, more than the model's ${vocab} logits`);
  }
  const outputNames = ['logits', ...Array.from({ length: layout.layers }, (_, i) => [`present.${i}.key`, `present.${i}.value`]).flat()];
  const lastPositionOutputs = lastPositionNames(outputNames.slice(1), loaded.lastPositionOutputs);
  const promptTokens = new Map<number, number>();
  // Requests whose first event has not gone out yet: a message carrying one is handed off (first-token-handoff.ts).
  const awaitingFirst = new Set<number>();
  const handoff = new HandoffSender(data.handoff, settings.firstTokenHandoffUs);
  const engine = new BatchEngine(
    sessionRunner(session, outputNames, lastPositionOutputs),
    layout,
    vocab,
    rememberingSingleTokens({ decode: (ids) => tokenizer.decode(ids as number[], { skip_special_tokens: true }) }),
    { ...settings, eosId },
    (events: SequenceEvent[]) => {
      let first = false;
      const wire: WireEvent[] = events.map((e) => {
        if (awaitingFirst.delete(e.id)) first = true;
        const prompt = promptTokens.get(e.id);
        if (e.done !== undefined || e.error !== undefined) promptTokens.delete(e.id);
        return {
          id: e.id,
          text: e.text,
          tokens: e.tokens,
          ...(prompt === undefined ? {} : { promptTokens: prompt }),
          ...(e.done === undefined ? {} : { done: e.done }),
          ...(e.error === undefined ? {} : { error: wireError(e.error) }),
        };
      });
      const seq = first ? handoff.next() : 0;
      post(seq === 0 ? { type: 'events', events: wire } : { type: 'events', events: wire, handoff: seq });
      handoff.wait(seq);
    },
  );
  startTraceLog(process.env['TESSERA_LLM_TRACE_LOG'], data.model, () => engine.stats().recentFirstTokens);
  port?.on('message', (message: HostMessage) => {
    switch (message.type) {
      case 'add': {
        let ids: number[];
        try {
          ids = tokenizer.encode(message.prompt, { add_special_tokens: false }).ids;
        } catch (error) {
          post({ type: 'events', events: [{ id: message.id, text: '', tokens: 0, error: { code: 'INVALID_ARG', message: `the prompt could not be tokenized: ${wireError(error).message}` } }] });
          return;
        }
        promptTokens.set(message.id, ids.length);
        awaitingFirst.add(message.id);
        engine.add({ id: message.id, promptIds: ids, params: message.params, priority: message.priority, sentAtMs: message.sentAtMs });
        break;
      }
      case 'cancel':
        engine.cancel(message.id);
        break;
      case 'stats':
        post({ type: 'stats', id: message.id, stats: { ...engine.stats(), handoff: handoff.stats() } });
        break;
      case 'close':
        void session.release().finally(() => port?.close());
        break;
    }
  });
  const kvFetch = lastPositionOutputs === undefined ? { kvFetch: 'full' as const, kvFetchWhy: loaded.why ?? 'no last-position outputs' } : { kvFetch: 'last-position' as const };
  post({ type: 'ready', info: { ...layout, vocab, eosId, ...kvFetch } });
}

/** The last-position outputs in `presents` order, when the session has one for every present. */
function lastPositionNames(presents: readonly string[], outputs: ReadonlyMap<string, string> | undefined): string[] | undefined {
  const names = presents.map((p) => outputs?.get(p));
  return names.every((n) => n !== undefined) ? names : undefined;
}

start().catch((error: unknown) => {
  post({ type: 'load-failed', error: wireError(error) });
});
