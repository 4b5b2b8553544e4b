/**
 * The example `rag_pipeline` end to end against a real `tessera-node` process with real onnxruntime:
 * rag_query → query_encoder (ONNX) → retriever → token_stream (decoupled). The encoder's onnxruntime
 * answer equals the writer's corpus embeddings; a question that matches a passage gets it in the
 * prompt; the answer streams as several responses over generate_stream (SSE), ModelStreamInfer (the
 * last flagged `triton_final_response`) and the OpenAI routes; unary infer refuses the decoupled
 * ensemble with Triton's errors; a client that goes away stops the decoder mid-answer.
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { create } from '@bufbuild/protobuf';
import { Metadata, status, type Client, type ClientDuplexStream, type ServiceError } from '@grpc/grpc-js';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { GRPCInferenceService, ModelInferRequestSchema } from '../../../shared/src/gen/grpc_service_pb.js';
import type { ModelInferRequest, ModelInferResponse, ModelStreamInferResponse } from '../../../shared/src/gen/grpc_service_pb.js';
import { callUnary, clientServiceDefinition } from '../../../shared/src/grpc/index.js';
import { decodeBytesElements } from '../../../shared/src/tensors/index.js';
import { startNodeProcess, type NodeProcess } from '../../../tests/security/support/node-process.js';
import { encoderBytes, passageText, RAG_CORPUS } from '../../src/example-models/index.js';
import { grpcClient, removeDir } from '../support.js';
import { eventually } from './support.js';
import { BATCHING_PASSAGE, BATCHING_QUESTION, ragRepository, sseEvents, type RagRepository } from './rag-support.js';

const svc = clientServiceDefinition(GRPCInferenceService);
const encoder = new TextEncoder();
let node: NodeProcess;
let repo: RagRepository;
let client: Client;

beforeAll(async () => {
  repo = await ragRepository();
  node = await startNodeProcess(repo.dir);
  client = grpcClient(node.grpcTarget);
});

afterAll(async () => {
  client?.close();
  await node?.stop();
  await removeDir(repo?.dir);
});

function pipelineRequest(id: string, question: string, topK?: number, sampling?: string): ModelInferRequest {
  return create(ModelInferRequestSchema, {
    modelName: 'rag_pipeline',
    id,
    inputs: [
      { name: 'text_input', datatype: 'BYTES', shape: [1n], contents: { bytesContents: [encoder.encode(question)] } },
      { name: 'stream', datatype: 'BOOL', shape: [1n], contents: { boolContents: [true] } },
      ...(topK === undefined ? [] : [{ name: 'top_k', datatype: 'INT32', shape: [1n], contents: { intContents: [topK] } }]),
      ...(sampling === undefined ? [] : [{ name: 'sampling_parameters', datatype: 'BYTES', shape: [1n], contents: { bytesContents: [encoder.encode(sampling)] } }]),
    ],
  });
}

function openStream(): ClientDuplexStream<ModelInferRequest, ModelStreamInferResponse> {
  return client.makeBidiStreamRequest(svc.modelStreamInfer.path, svc.modelStreamInfer.requestSerialize, svc.modelStreamInfer.responseDeserialize, new Metadata());
}

function runStream(request: ModelInferRequest): Promise<ModelStreamInferResponse[]> {
  return new Promise((resolve, reject) => {
    const stream = openStream();
    const responses: ModelStreamInferResponse[] = [];
    stream.on('data', (r: ModelStreamInferResponse) => responses.push(r));
    stream.on('error', reject);
    stream.on('status', (s: { code: status }) => (s.code === status.OK ? setImmediate(() => resolve(responses)) : reject(new Error(`status ${s.code}`))));
    stream.write(request);
    stream.end();
  });
}

const text = (r: ModelStreamInferResponse) => {
  const raw = r.inferResponse?.rawOutputContents[0];
  return raw === undefined ? '' : decodeBytesElements(raw, 1).map((b) => new TextDecoder().decode(b)).join('');
};
const finalFlag = (r: ModelStreamInferResponse) => {
  const choice = r.inferResponse?.parameters['triton_final_response']?.parameterChoice;
  return choice?.case === 'boolParam' ? choice.value : undefined;
};

describe('query_encoder (onnxruntime) and the bundled corpus', () => {
  it("embeds a passage to the vector the writer stored for it, and the retriever's corpus has every passage", async () => {
    const corpus = JSON.parse(await readFile(join(repo.dir, 'retriever', '1', 'corpus.json'), 'utf8')) as { passages: { id: string; embedding: number[] }[] };
    expect(corpus.passages.map((p) => p.id)).toEqual(RAG_CORPUS.map((p) => p.id));
    const passage = RAG_CORPUS[3];
    const bytes = encoderBytes(passageText(passage as (typeof RAG_CORPUS)[number]));
    const response = await fetch(`${node.http}/v2/models/query_encoder/infer`, {
      method: 'POST',
      body: JSON.stringify({ inputs: [{ name: 'query_bytes', datatype: 'UINT8', shape: [bytes.length], data: Array.from(bytes) }] }),
    });
    expect(response.status).toBe(200);
    const got = ((await response.json()) as { outputs: { data: number[] }[] }).outputs[0]?.data ?? [];
    const stored = corpus.passages[3]?.embedding ?? [];
    expect(got).toHaveLength(stored.length);
    got.forEach((v, i) => expect(Math.abs(v - (stored[i] as number))).toBeLessThan(1e-5));
    expect(Math.hypot(...got)).toBeCloseTo(1, 5);
  });
});

describe('rag_pipeline streams its answer', () => {
  it('generate_stream: several SSE events whose text holds the matching passage, then the question', async () => {
    const response = await fetch(`${node.http}/v2/models/rag_pipeline/generate_stream`, {
      method: 'POST',
      body: JSON.stringify({ text_input: BATCHING_QUESTION, stream: true }),
    });
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toMatch(/text\/event-stream/);
    const events = sseEvents(await response.text());
    expect(events.length).toBeGreaterThan(5);
    expect(events.every((e) => e['model_name'] === 'rag_pipeline' && typeof e['text_output'] === 'string')).toBe(true);
    const answer = events.map((e) => e['text_output']).join('');
    expect(answer.startsWith('Answer the question with the passages below.\n')).toBe(true);
    expect(answer).toContain(BATCHING_PASSAGE);
    expect(answer.endsWith(`Question: ${BATCHING_QUESTION}\nAnswer:`)).toBe(true);
  });

  it('ModelStreamInfer: several responses, triton_final_response false on each but the last', async () => {
    const responses = await runStream(pipelineRequest('q1', 'Which Prometheus metrics does the node export?', 1));
    expect(responses.length).toBeGreaterThan(5);
    expect(responses.map((r) => r.errorMessage).every((m) => m === '')).toBe(true);
    expect(responses.map(finalFlag)).toEqual([...Array<boolean>(responses.length - 1).fill(false), true]);
    expect(responses.every((r) => r.inferResponse?.id === 'q1' && r.inferResponse.modelName === 'rag_pipeline')).toBe(true);
    const answer = responses.map(text).join('');
    expect(answer).toContain('[1] Prometheus metrics: The node exports Prometheus metrics');
    expect(answer).not.toContain('[2]');
  });

  it('a bare final flag from the decoder becomes an empty final response only with triton_enable_empty_final_response', async () => {
    const request = pipelineRequest('e', BATCHING_QUESTION, 1, JSON.stringify({ max_tokens: 0 }));
    expect(await runStream(request)).toEqual([]);
    const flagged = create(ModelInferRequestSchema, {
      modelName: request.modelName,
      id: request.id,
      inputs: request.inputs,
      parameters: { triton_enable_empty_final_response: { parameterChoice: { case: 'boolParam', value: true } } },
    });
    const responses = await runStream(flagged);
    expect(responses).toHaveLength(1);
    expect(finalFlag(responses[0] as ModelStreamInferResponse)).toBe(true);
    expect(responses[0]?.inferResponse?.outputs).toEqual([]);
    expect(responses[0]?.inferResponse?.modelName).toBe('rag_pipeline');
  });

  it('the OpenAI routes serve it (official client, streamed chat completion)', async () => {
    const openai = new OpenAI({ baseURL: `${node.http}/v1`, apiKey: 'unused', maxRetries: 0 });
    expect((await openai.models.list()).data.map((m) => m.id)).toContain('rag_pipeline');
    const stream = await openai.chat.completions.create({
      model: 'rag_pipeline',
      messages: [{ role: 'user', content: 'Where does the gateway keep tenant API keys?' }],
      stream: true,
    });
    const pieces: string[] = [];
    for await (const chunk of stream) pieces.push(chunk.choices[0]?.delta.content ?? '');
    expect(pieces.filter((p) => p !== '').length).toBeGreaterThan(5);
    expect(pieces.join('')).toContain('Tenant API keys: Every tenant calls the gateway with its own API key');
  });
});

describe('the decoupled ensemble through unary APIs', () => {
  it('HTTP /infer: 501 with Triton\'s error', async () => {
    const response = await fetch(`${node.http}/v2/models/rag_pipeline/infer`, {
      method: 'POST',
      body: JSON.stringify({ inputs: [{ name: 'text_input', datatype: 'BYTES', shape: [1], data: ['hi'] }] }),
    });
    expect(response.status).toBe(501);
    expect(await response.json()).toEqual({ error: "HTTP end point doesn't support models with decoupled transaction policy" });
  });

  it('gRPC ModelInfer: UNIMPLEMENTED', async () => {
    const error = await callUnary<ModelInferRequest, ModelInferResponse>(client, svc.modelInfer, pipelineRequest('u', 'hi')).then(
      () => undefined,
      (e: ServiceError) => e,
    );
    expect(error?.code).toBe(status.UNIMPLEMENTED);
    expect(error?.details).toBe("ModelInfer RPC doesn't support models with decoupled transaction policy");
  });

  it('the config says decoupled', async () => {
    const config = (await (await fetch(`${node.http}/v2/models/rag_pipeline/config`)).json()) as { model_transaction_policy?: { decoupled?: boolean } };
    expect(config.model_transaction_policy?.decoupled).toBe(true);
  });
});

describe('cancellation', () => {
  it('a client that goes away mid-answer stops the decoder, which saw its signal', async () => {
    const before = (await repo.cancellations()).length;
    const stream = openStream();
    stream.on('error', () => undefined);
    let received = 0;
    await new Promise<void>((resolve) => {
      stream.on('data', () => {
        received += 1;
        if (received === 3) resolve();
      });
      // The whole corpus in the prompt: hundreds of tokens, seconds of streaming.
      stream.write(pipelineRequest('long', 'passages about models, requests, tenants and the node', RAG_CORPUS.length));
    });
    stream.cancel();
    expect(await eventually(async () => (await repo.cancellations()).length > before)).toBe(true);
    const sent = Number(/^cancelled (\d+)$/.exec((await repo.cancellations())[before] ?? '')?.[1]);
    expect(sent).toBeGreaterThanOrEqual(3);
  });

  it('closing a generate_stream connection mid-answer stops the decoder too', async () => {
    const before = (await repo.cancellations()).length;
    const controller = new AbortController();
    const response = await fetch(`${node.http}/v2/models/rag_pipeline/generate_stream`, {
      method: 'POST',
      body: JSON.stringify({ text_input: 'passages about models, requests, tenants and the node', stream: true, top_k: RAG_CORPUS.length }),
      signal: controller.signal,
    });
    const reader = (response.body as ReadableStream<Uint8Array>).getReader();
    let events = 0;
    while (events < 3) {
      const { value, done } = await reader.read();
      if (done) throw new Error('the answer ended before the test could close it');
      events += new TextDecoder().decode(value).split('\n\n').filter((e) => e.startsWith('data: ')).length;
    }
    controller.abort();
    expect(await eventually(async () => (await repo.cancellations()).length > before)).toBe(true);
  });
});
