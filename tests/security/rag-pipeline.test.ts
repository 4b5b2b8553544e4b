/**
 * Hostile input to the example `rag_pipeline` (rag_query → query_encoder → retriever → token_stream)
 * against a real `tessera-node` process: a 10 MB question, bytes that are not UTF-8, a blank question,
 * a question the corpus knows nothing about, and top_k out of range or of the wrong type. Each is
 * refused with a 4xx / INVALID_ARGUMENT naming the problem (or, for no hits, answered with a prompt
 * saying so), nothing reaches the decoder that should not, and the node keeps serving.
 */
import { create } from '@bufbuild/protobuf';
import { Metadata, status, type Client } from '@grpc/grpc-js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { GRPCInferenceService, ModelInferRequestSchema, type ModelInferRequest, type ModelStreamInferResponse } from '../../shared/src/gen/grpc_service_pb.js';
import { clientServiceDefinition } from '../../shared/src/grpc/index.js';
import { decodeBytesElements } from '../../shared/src/tensors/index.js';
import { BATCHING_PASSAGE, BATCHING_QUESTION, ragRepository, sseEvents, type RagRepository } from '../../gpu-node/test/llm/rag-support.js';
import { grpcClient, removeDir } from '../../gpu-node/test/support.js';
import { startNodeProcess, type NodeProcess } from './support/node-process.js';

const svc = clientServiceDefinition(GRPCInferenceService);
let node: NodeProcess;
let repo: RagRepository;
let client: Client;

beforeAll(async () => {
  repo = await ragRepository(1);
  node = await startNodeProcess(repo.dir);
  client = grpcClient(node.grpcTarget);
});

afterAll(async () => {
  client?.close();
  await node?.stop();
  await removeDir(repo?.dir);
});

function generateStream(body: Record<string, unknown>): Promise<Response> {
  return fetch(`${node.http}/v2/models/rag_pipeline/generate_stream`, { method: 'POST', body: JSON.stringify(body) });
}

async function decoderRequests(): Promise<number> {
  const stats = (await (await fetch(`${node.http}/v2/models/token_stream/stats`)).json()) as {
    model_stats: { inference_stats: { success: { count: number }; fail: { count: number } } }[];
  };
  const s = stats.model_stats[0]?.inference_stats;
  return (s?.success.count ?? 0) + (s?.fail.count ?? 0);
}

function streamOnce(question: Uint8Array, topK?: number): Promise<{ responses: ModelStreamInferResponse[]; code: status }> {
  const request: ModelInferRequest = create(ModelInferRequestSchema, {
    modelName: 'rag_pipeline',
    id: 'hostile',
    inputs: [
      { name: 'text_input', datatype: 'BYTES', shape: [1n], contents: { bytesContents: [question] } },
      { name: 'stream', datatype: 'BOOL', shape: [1n], contents: { boolContents: [true] } },
      ...(topK === undefined ? [] : [{ name: 'top_k', datatype: 'INT32', shape: [1n], contents: { intContents: [topK] } }]),
    ],
  });
  return new Promise((resolve) => {
    const stream = client.makeBidiStreamRequest(svc.modelStreamInfer.path, svc.modelStreamInfer.requestSerialize, svc.modelStreamInfer.responseDeserialize, new Metadata());
    const responses: ModelStreamInferResponse[] = [];
    stream.on('data', (r: ModelStreamInferResponse) => responses.push(r));
    stream.on('error', () => undefined);
    stream.on('status', (s: { code: status }) => setImmediate(() => resolve({ responses, code: s.code })));
    stream.write(request);
    stream.end();
  });
}

describe('questions the pipeline refuses', () => {
  it('a 10 MB question: 400 over HTTP and an in-band error over gRPC, both naming the limit; the decoder never runs', async () => {
    const before = await decoderRequests();
    const huge = 'a'.repeat(10 * 1024 * 1024);
    const response = await generateStream({ text_input: huge, stream: true });
    expect(response.status).toBe(400);
    expect(((await response.json()) as { error: string }).error).toMatch(
      /step 0 \('rag_query'\) failed: rag_query: text_input is 10485760 bytes, more than the 4096 this pipeline accepts \(max_query_bytes\)/,
    );
    const { responses, code } = await streamOnce(new TextEncoder().encode(huge));
    expect(code).toBe(status.OK);
    expect(responses).toHaveLength(1);
    expect(responses[0]?.errorMessage).toMatch(/text_input is 10485760 bytes, more than the 4096/);
    expect(await decoderRequests()).toBe(before);
  });

  it('bytes that are not UTF-8: refused, not decoded into replacement characters', async () => {
    const { responses } = await streamOnce(Uint8Array.of(0x77, 0x68, 0x61, 0x74, 0xff, 0xfe, 0xc3));
    expect(responses).toHaveLength(1);
    expect(responses[0]?.errorMessage).toMatch(/step 0 \('rag_query'\) failed: rag_query: text_input is not valid UTF-8/);
  });

  it('a blank question: 400', async () => {
    const response = await generateStream({ text_input: '   ' });
    expect(response.status).toBe(400);
    expect(((await response.json()) as { error: string }).error).toMatch(/text_input is empty/);
  });

  it.each([0, -1, 13, 2 ** 31 - 1])('top_k %i: 400 naming the range', async (topK) => {
    const response = await generateStream({ text_input: BATCHING_QUESTION, top_k: topK });
    expect(response.status).toBe(400);
    expect(((await response.json()) as { error: string }).error).toMatch(/step 2 \('retriever'\) failed: retriever: top_k must be from 1 to 12 \(the corpus size\)/);
  });

  it('top_k that is not an integer: 400 before anything runs', async () => {
    for (const topK of ['3', 2.5, [1, 2]]) {
      const response = await generateStream({ text_input: BATCHING_QUESTION, top_k: topK });
      expect(response.status).toBe(400);
      expect(((await response.json()) as { error: string }).error).toMatch(/top_k/);
    }
  });
});

describe('questions the pipeline answers', () => {
  it('no passage near the question: the answer streams and says no passage matches', async () => {
    const { responses, code } = await streamOnce(new TextEncoder().encode('zebra giraffe banana'));
    expect(code).toBe(status.OK);
    const text = responses
      .map((r) => decodeBytesElements(r.inferResponse?.rawOutputContents[0] ?? new Uint8Array(), 1).map((b) => new TextDecoder().decode(b)).join(''))
      .join('');
    expect(text).toBe('No passage of the corpus matches the question; say that you do not know.\nQuestion: zebra giraffe banana\nAnswer:');
  });

  it('after all of that the node still serves the pipeline', async () => {
    expect((await fetch(`${node.http}/v2/health/ready`)).status).toBe(200);
    const response = await generateStream({ text_input: BATCHING_QUESTION, stream: true });
    expect(response.status).toBe(200);
    expect(sseEvents(await response.text()).map((e) => e['text_output']).join('')).toContain(BATCHING_PASSAGE);
  });
});
