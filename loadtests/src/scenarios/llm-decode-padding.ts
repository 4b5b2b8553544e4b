/**
 * What the engine's decode runs pad at 32 closed-loop streams, with no model: the real BatchEngine over a
 * stand-in runner (zero outputs of the right shapes, instant), bench_decoder's KV layout and config (one
 * bucket, decode runs of 16 rows), the llm-batching bench's prompts and output lengths (8..256). The cached
 * positions a run feeds are rows × the run's capacity; the rows' own are their lengths; the rest is padding,
 * which a run pays per row and position (~0.76 µs on bench_decoder). Load-independent (no timing), so two
 * builds compare on a busy box. Prints one JSON line: `node --import tsx llm-decode-padding.ts [steps]`.
 */
import { BatchEngine, type DecoderRunner, type SequenceEvent } from '../../../gpu-node/src/backends/onnxruntime-llm/batch-engine.js';
import { mulberry32 } from '../../../gpu-node/src/example-models/prng.js';
import { outputLength, promptFor } from './llm-stream-client.js';

const LAYOUT = { layers: 4, heads: 1, headDim: 64 };
const VOCAB = 260;
const STREAMS = 32;
const WARMUP_STEPS = 1000;
const steps = Number(process.argv[2] ?? 6000);

const presentNames = Array.from({ length: LAYOUT.layers }, (_, i) => [`present.${i}.key`, `present.${i}.value`]).flat();
const runner: DecoderRunner = {
  async run(feeds, into) {
    const [rows, seq] = feeds['input_ids']!.dims as [number, number];
    if (into !== undefined) return {};
    const total = (feeds['past_key_values.0.key']!.dims[2] as number) + seq;
    const present = { data: new Float32Array(rows * total * LAYOUT.heads * LAYOUT.headDim), dims: [rows, LAYOUT.heads, total, LAYOUT.headDim] };
    return { logits: { data: new Float32Array(rows * seq * VOCAB), dims: [rows, seq, VOCAB] }, ...Object.fromEntries(presentNames.map((n) => [n, present])) };
  },
};

const random = mulberry32(21);
let nextId = 0;
let engine: BatchEngine;
const send = (): void => {
  const prompt = [...promptFor(random)].map((c) => c.charCodeAt(0) % VOCAB);
  engine.add({ id: nextId++, promptIds: prompt, params: { maxTokens: outputLength(random), temperature: 0, topK: 0, topP: 1, seed: 1, stop: [], ignoreEos: true }, priority: 0 });
};
let from: ReturnType<BatchEngine['stats']> | undefined;
const done = new Promise<ReturnType<BatchEngine['stats']>>((resolve) => {
  engine = new BatchEngine(runner, LAYOUT, VOCAB, { decode: () => '' }, {
    maxNumSeqs: STREAMS, kvCacheBytes: 1 << 30, contextLength: 512, eosId: undefined, admission: 'wait', maxQueueSize: 0,
    lengthBuckets: [], maxBatchedTokens: 512, decodeRunRows: 16,
  }, (events: SequenceEvent[]) => {
    const stats = engine.stats();
    if (from === undefined && stats.steps >= WARMUP_STEPS) from = stats;
    if (stats.steps >= WARMUP_STEPS + steps) return resolve(stats);
    // A closed loop: each stream sends its next request as its last one ends (next turn, as a message would).
    for (const e of events) if (e.done !== undefined) setImmediate(send);
  });
  for (let i = 0; i < STREAMS; i++) send();
});
const to = await done;
const start = from as NonNullable<typeof from>;
const delta = (key: 'steps' | 'stepSequences' | 'stepRuns' | 'stepPaddedPositions' | 'stepCachedPositions' | 'bucketMoves'): number => to[key] - start[key];
const copies = (key: keyof typeof to.copies): number => (to.copies[key] - start.copies[key]) * 4 / delta('steps');
process.stdout.write(`${JSON.stringify({
  steps: delta('steps'),
  rowsPerStep: delta('stepSequences') / delta('steps'),
  runsPerStep: delta('stepRuns') / delta('steps'),
  paddedPositionsPerRow: delta('stepPaddedPositions') / delta('stepSequences'),
  cachedPositionsPerRow: delta('stepCachedPositions') / delta('stepSequences'),
  paddingShare: 1 - delta('stepCachedPositions') / delta('stepPaddedPositions'),
  movesPerStep: delta('bucketMoves') / delta('steps'),
  copiedBytesPerStep: { growth: copies('growFloats'), compaction: copies('compactFloats'), moves: copies('bucketFloats'), prefill: copies('prefillFloats'), newTokens: copies('stepFloats') },
})}\n`);
process.exit(0);
