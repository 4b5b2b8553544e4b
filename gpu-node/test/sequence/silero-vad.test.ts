/**
 * The sequence batcher on a real stateful model, end to end: Silero VAD (the `silero_vad` example,
 * written from the npm package's ONNX) served by a real node started in-process, fed over gRPC by eight
 * concurrent audio streams (silence, noise and tone bursts at 16 kHz, 512-sample chunks). Each stream
 * sends its next chunk when the previous answer arrives, so the streams meet in shared batches.
 *
 * The reference is the npm model itself in one onnxruntime session, with the caller carrying the LSTM
 * state by hand ([2, 1, 128], sr = 16000): every probability the node returns must match it to 1e-5,
 * which holds only if the node fed each stream's own state back, in order, in the right batch row.
 */
import { create } from '@bufbuild/protobuf';
import type { MessageInitShape } from '@bufbuild/protobuf';
import { status, type Client, type ServiceError } from '@grpc/grpc-js';
import * as ort from 'onnxruntime-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  GRPCInferenceService,
  ModelInferRequestSchema,
  ModelStatisticsRequestSchema,
} from '../../../shared/src/gen/grpc_service_pb.js';
import { callUnary, clientServiceDefinition } from '../../../shared/src/grpc/index.js';
import { mulberry32 } from '../../src/example-models/prng.js';
import { SILERO_CHUNK_SAMPLES, SILERO_SAMPLE_RATE, sileroVadNpmPath } from '../../src/example-models/silero-vad.js';
import { exampleRepository, fp32Bytes, fp32Values, grpcClient, removeDir, startTestNode, type TestNode } from '../support.js';

const svc = clientServiceDefinition(GRPCInferenceService);
const STREAMS = 8;
const CHUNKS = 40;
const SEGMENT_CHUNKS = 5;

let node: TestNode;
let repo: string | undefined;
let client: Client;
let reference: ort.InferenceSession;

beforeAll(async () => {
  repo = await exampleRepository(['silero_vad']);
  node = await startTestNode(repo);
  client = grpcClient(node.grpcTarget);
  reference = await ort.InferenceSession.create(sileroVadNpmPath());
});

afterAll(async () => {
  client?.close();
  await reference?.release();
  await node?.stop();
  await removeDir(repo);
});

/**
 * Stream `s`: segments of SEGMENT_CHUNKS chunks cycling through silence, white noise and a tone burst
 * (a stream-specific pitch with a rising and falling envelope), offset per stream so that at any moment
 * different streams are in different segments.
 */
function audio(s: number): Float32Array {
  const next = mulberry32(1000 + s);
  const samples = new Float32Array(CHUNKS * SILERO_CHUNK_SAMPLES);
  const segmentSamples = SEGMENT_CHUNKS * SILERO_CHUNK_SAMPLES;
  const pitch = 180 + 40 * s;
  for (let i = 0; i < samples.length; i++) {
    const segment = Math.floor(i / segmentSamples) + s;
    const t = i / SILERO_SAMPLE_RATE;
    const phase = (i % segmentSamples) / segmentSamples;
    switch (segment % 3) {
      case 0:
        samples[i] = (next() - 0.5) * 1e-3; // near silence
        break;
      case 1:
        samples[i] = (next() - 0.5) * 0.4; // noise
        break;
      default: {
        const envelope = Math.sin(Math.PI * phase);
        // A voiced-like burst: a fundamental with two harmonics.
        samples[i] = 0.5 * envelope * (Math.sin(2 * Math.PI * pitch * t) + 0.5 * Math.sin(4 * Math.PI * pitch * t) + 0.25 * Math.sin(6 * Math.PI * pitch * t));
      }
    }
  }
  return samples;
}

function chunk(samples: Float32Array, k: number): Float32Array {
  return samples.subarray(k * SILERO_CHUNK_SAMPLES, (k + 1) * SILERO_CHUNK_SAMPLES);
}

/**
 * The npm model, state carried by the caller: what each chunk's speech probability must be. With
 * `carry` false every chunk starts from a zero state: the control showing that the state matters.
 */
async function expectedProbabilities(samples: Float32Array, carry = true): Promise<number[]> {
  let state: ort.Tensor = new ort.Tensor('float32', new Float32Array(2 * 128), [2, 1, 128]);
  const sr = new ort.Tensor('int64', BigInt64Array.of(BigInt(SILERO_SAMPLE_RATE)), []);
  const out: number[] = [];
  for (let k = 0; k < CHUNKS; k++) {
    const input = new ort.Tensor('float32', Float32Array.from(chunk(samples, k)), [1, SILERO_CHUNK_SAMPLES]);
    const result = await reference.run({ input, state, sr });
    out.push((result.output?.data as Float32Array)[0] as number);
    if (carry) state = result.stateN as ort.Tensor;
  }
  return out;
}

type InferInit = MessageInitShape<typeof ModelInferRequestSchema>;

function chunkRequest(id: bigint, samples: Float32Array, k: number, flags: { start: boolean; end: boolean }): InferInit {
  return {
    modelName: 'silero_vad',
    id: `${id}/${k}`,
    inputs: [{ name: 'input', datatype: 'FP32', shape: [1n, BigInt(SILERO_CHUNK_SAMPLES)] }],
    rawInputContents: [fp32Bytes([...chunk(samples, k)])],
    parameters: {
      sequence_id: { parameterChoice: { case: 'int64Param', value: id } },
      sequence_start: { parameterChoice: { case: 'boolParam', value: flags.start } },
      sequence_end: { parameterChoice: { case: 'boolParam', value: flags.end } },
    },
  };
}

const infer = (init: InferInit) => callUnary(client, svc.modelInfer, create(ModelInferRequestSchema, init));

/** One client stream: chunk k+1 goes out when chunk k's answer is back. */
async function runStream(s: number, samples: Float32Array): Promise<number[]> {
  const id = BigInt(7000 + s);
  const out: number[] = [];
  for (let k = 0; k < CHUNKS; k++) {
    const { response } = await infer(chunkRequest(id, samples, k, { start: k === 0, end: k === CHUNKS - 1 }));
    // The implicit state is the scheduler's business: the client only ever sees `output`.
    expect(response.outputs.map((o) => [o.name, o.shape])).toEqual([['output', [1n, 1n]]]);
    out.push(fp32Values(response.rawOutputContents[0] as Uint8Array)[0] as number);
  }
  return out;
}

async function stats(): Promise<{ inferenceCount: bigint; executionCount: bigint }> {
  const { response } = await callUnary(client, svc.modelStatistics, create(ModelStatisticsRequestSchema, { name: 'silero_vad' }));
  const model = response.modelStats[0];
  return { inferenceCount: model?.inferenceCount ?? 0n, executionCount: model?.executionCount ?? 0n };
}

describe('silero_vad through the sequence batcher', () => {
  it('eight concurrent streams share batches and match a hand-carried-state session to 1e-5', async () => {
    const signals = Array.from({ length: STREAMS }, (_, s) => audio(s));
    const expected: number[][] = [];
    for (const samples of signals) expected.push(await expectedProbabilities(samples));
    // Without the state the model answers differently: matching below really needs the carried state.
    const stateless = await expectedProbabilities(signals[0] as Float32Array, false);
    expect(Math.max(...stateless.map((p, k) => Math.abs(p - (expected[0]?.[k] as number))))).toBeGreaterThan(1e-3);
    const before = await stats();

    const got = await Promise.all(signals.map((samples, s) => runStream(s, samples)));

    for (let s = 0; s < STREAMS; s++) {
      const want = expected[s] as number[];
      const have = got[s] as number[];
      expect(have.length).toBe(CHUNKS);
      const worst = Math.max(...have.map((p, k) => Math.abs(p - (want[k] as number))));
      expect(worst, `stream ${s}`).toBeLessThanOrEqual(1e-5);
    }
    // The signal is not degenerate: the detector's answer moves between segments.
    const all = got.flat();
    expect(Math.max(...all) - Math.min(...all)).toBeGreaterThan(0.05);

    const after = await stats();
    const inferences = after.inferenceCount - before.inferenceCount;
    const executions = after.executionCount - before.executionCount;
    expect(inferences).toBe(BigInt(STREAMS * CHUNKS));
    // Batching happened: fewer executions than requests.
    expect(executions).toBeLessThan(inferences);
  });

  it("refuses, over gRPC, a request for a sequence that never started, with Triton's message", async () => {
    const samples = audio(0);
    const error = (await infer(chunkRequest(424242n, samples, 0, { start: false, end: false })).then(
      () => undefined,
      (e: unknown) => e,
    )) as ServiceError | undefined;
    expect(error?.code).toBe(status.INVALID_ARGUMENT);
    expect(error?.details).toContain(
      "inference request for sequence 424242 to model 'silero_vad' must specify the START flag on the first request of the sequence",
    );
    // A sequence ended by its END request is gone too.
    const ended = await infer(chunkRequest(99n, samples, 0, { start: true, end: true }));
    expect(ended.response.outputs.map((o) => o.name)).toEqual(['output']);
    const late = (await infer(chunkRequest(99n, samples, 1, { start: false, end: false })).then(
      () => undefined,
      (e: unknown) => e,
    )) as ServiceError | undefined;
    expect(late?.code).toBe(status.INVALID_ARGUMENT);
  });
});
