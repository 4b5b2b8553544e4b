/**
 * The example `rag_pipeline` as `npx tessera-models` writes it, answering with `tiny_decoder` (the
 * onnxruntime_llm backend), against a real `tessera-node` process: the answer streams over
 * generate_stream and ModelStreamInfer (the last response flagged final) and the OpenAI routes, and it
 * is exactly what tiny_decoder answers, greedily, to the prompt the retriever builds from the
 * question's embedding (each step called on its own here), so the retrieved passages reach the decoder.
 */
import { create } from '@bufbuild/protobuf';
import { Metadata, status, type Client } from '@grpc/grpc-js';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { GRPCInferenceService, ModelInferRequestSchema, type ModelInferRequest, type ModelStreamInferResponse } from '../../../shared/src/gen/grpc_service_pb.js';
import { clientServiceDefinition } from '../../../shared/src/grpc/index.js';
import { startNodeProcess, type NodeProcess } from '../../../tests/security/support/node-process.js';
import { encoderBytes, RAG_PIPELINE_NAME, RAG_PIPELINE_STEPS, RAG_PROMPT_BYTES } from '../../src/example-models/index.js';
import { exampleRepository, grpcClient, removeDir } from '../support.js';
import { BATCHING_QUESTION, sseEvents } from './rag-support.js';

const svc = clientServiceDefinition(GRPCInferenceService);
const GREEDY = JSON.stringify({ temperature: 0, max_tokens: 24 });
let node: NodeProcess;
let dir: string;
let client: Client;

beforeAll(async () => {
  expect(RAG_PIPELINE_STEPS).toContain('tiny_decoder');
  dir = await exampleRepository([...RAG_PIPELINE_STEPS, RAG_PIPELINE_NAME]);
  node = await startNodeProcess(dir);
  client = grpcClient(node.grpcTarget);
});

afterAll(async () => {
  client?.close();
  await node?.stop();
  await removeDir(dir);
});

async function post(path: string, body: unknown): Promise<Record<string, unknown>> {
  const response = await fetch(`${node.http}${path}`, { method: 'POST', body: JSON.stringify(body) });
  const json = (await response.json()) as Record<string, unknown>;
  if (response.status !== 200) throw new Error(`${path}: ${response.status} ${JSON.stringify(json)}`);
  return json;
}

async function streamedAnswer(body: Record<string, unknown>): Promise<string[]> {
  const response = await fetch(`${node.http}/v2/models/rag_pipeline/generate_stream`, { method: 'POST', body: JSON.stringify(body) });
  expect(response.status).toBe(200);
  return sseEvents(await response.text()).map((e) => e['text_output'] as string);
}

describe('rag_pipeline with tiny_decoder', () => {
  it("streams exactly tiny_decoder's greedy answer to the retriever's prompt", async () => {
    const bytes = encoderBytes(BATCHING_QUESTION);
    const encoded = await post('/v2/models/query_encoder/infer', { inputs: [{ name: 'query_bytes', datatype: 'UINT8', shape: [bytes.length], data: Array.from(bytes) }] });
    const embedding = (encoded['outputs'] as { data: number[] }[])[0]?.data ?? [];
    const retrieved = await post('/v2/models/retriever/infer', {
      inputs: [
        { name: 'embedding', datatype: 'FP32', shape: [embedding.length], data: embedding },
        { name: 'text_input', datatype: 'BYTES', shape: [1], data: [BATCHING_QUESTION] },
      ],
    });
    const prompt = (retrieved['outputs'] as { data: string[] }[])[0]?.data[0] ?? '';
    expect(prompt).toContain('[1] Dynamic batching:');
    expect(new TextEncoder().encode(prompt).length).toBeLessThanOrEqual(RAG_PROMPT_BYTES);
    const direct = await post('/v2/models/tiny_decoder/generate', { text_input: prompt, stream: false, exclude_input_in_output: true, sampling_parameters: GREEDY });
    const pieces = await streamedAnswer({ text_input: BATCHING_QUESTION, stream: true, sampling_parameters: GREEDY });
    expect(pieces.length).toBeGreaterThan(5);
    expect(pieces.join('')).toBe(direct['text_output']);
  });

  it('ModelStreamInfer: several responses, the last one flagged final', async () => {
    const request: ModelInferRequest = create(ModelInferRequestSchema, {
      modelName: 'rag_pipeline',
      id: 'd',
      inputs: [
        { name: 'text_input', datatype: 'BYTES', shape: [1n], contents: { bytesContents: [new TextEncoder().encode('Which metrics does the node export?')] } },
        { name: 'stream', datatype: 'BOOL', shape: [1n], contents: { boolContents: [true] } },
        { name: 'sampling_parameters', datatype: 'BYTES', shape: [1n], contents: { bytesContents: [new TextEncoder().encode(GREEDY)] } },
      ],
    });
    const { responses, code } = await new Promise<{ responses: ModelStreamInferResponse[]; code: status }>((resolve) => {
      const stream = client.makeBidiStreamRequest(svc.modelStreamInfer.path, svc.modelStreamInfer.requestSerialize, svc.modelStreamInfer.responseDeserialize, new Metadata());
      const got: ModelStreamInferResponse[] = [];
      stream.on('data', (r: ModelStreamInferResponse) => got.push(r));
      stream.on('error', () => undefined);
      stream.on('status', (s: { code: status }) => setImmediate(() => resolve({ responses: got, code: s.code })));
      stream.write(request);
      stream.end();
    });
    expect(code).toBe(status.OK);
    expect(responses.length).toBeGreaterThan(5);
    expect(responses.every((r) => r.errorMessage === '')).toBe(true);
    const finals = responses.map((r) => {
      const choice = r.inferResponse?.parameters['triton_final_response']?.parameterChoice;
      return choice?.case === 'boolParam' ? choice.value : undefined;
    });
    expect(finals.at(-1)).toBe(true);
    expect(finals.slice(0, -1).every((f) => f === false)).toBe(true);
  });

  it('the OpenAI routes stream a chat completion from it; a question + max_tokens past its context_length is a 400', async () => {
    const openai = new OpenAI({ baseURL: `${node.http}/v1`, apiKey: 'unused', maxRetries: 0 });
    const stream = await openai.chat.completions.create({ model: 'rag_pipeline', messages: [{ role: 'user', content: BATCHING_QUESTION }], max_tokens: 16, stream: true });
    let chunks = 0;
    let finish: string | null | undefined;
    for await (const chunk of stream) {
      chunks += 1;
      finish = chunk.choices[0]?.finish_reason ?? finish;
    }
    expect(chunks).toBeGreaterThan(5);
    expect(['stop', 'length']).toContain(finish);
    await expect(openai.chat.completions.create({ model: 'rag_pipeline', messages: [{ role: 'user', content: BATCHING_QUESTION }], max_tokens: 500 })).rejects.toMatchObject({
      status: 400,
    });
  });
});
