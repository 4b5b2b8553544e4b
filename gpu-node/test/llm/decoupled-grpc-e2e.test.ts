/**
 * Decoupled models end to end over gRPC, against a node serving the example `token_stream`:
 * ModelStreamInfer streams every response with `triton_final_response`, honours
 * `triton_enable_empty_final_response`, carries a decoupled model's errors in-band, and a client
 * that goes away mid-stream stops the model (the model logs that it saw its signal); ModelInfer and
 * HTTP /infer refuse decoupled models with Triton's errors; the first-response histogram counts them.
 */
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { create } from '@bufbuild/protobuf';
import type { MessageInitShape } from '@bufbuild/protobuf';
import { Metadata, status } from '@grpc/grpc-js';
import type { Client, ClientDuplexStream, ServiceError } from '@grpc/grpc-js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { GRPCInferenceService, ModelInferRequestSchema } from '../../../shared/src/gen/grpc_service_pb.js';
import type { ModelInferRequest, ModelInferResponse, ModelStreamInferResponse } from '../../../shared/src/gen/grpc_service_pb.js';
import { callUnary, clientServiceDefinition } from '../../../shared/src/grpc/index.js';
import { decodeBytesElements } from '../../../shared/src/tensors/index.js';
import { grpcClient, parsePrometheus, removeDir, startTestNode, type TestNode } from '../support.js';
import { eventually, llmRepository, longPrompt, type LlmRepository } from './support.js';

const svc = clientServiceDefinition(GRPCInferenceService);
let node: TestNode;
let repo: LlmRepository;
let client: Client;

const ENSEMBLE_CONFIG = `name: "stream_ensemble"
platform: "ensemble"
max_batch_size: 0
input [ { name: "PROMPT" data_type: TYPE_STRING dims: [ 1 ] } ]
output [ { name: "TEXT" data_type: TYPE_STRING dims: [ -1 ] } ]
ensemble_scheduling { step [ { model_name: "token_stream" model_version: -1
  input_map { key: "text_input" value: "PROMPT" } output_map { key: "text_output" value: "TEXT" } } ] }
`;

beforeAll(async () => {
  repo = await llmRepository();
  // An ensemble whose last step is the decoupled model: decoupled itself, so /infer refuses it as it does the model.
  await mkdir(join(repo.dir, 'stream_ensemble', '1'), { recursive: true });
  await writeFile(join(repo.dir, 'stream_ensemble', 'config.pbtxt'), ENSEMBLE_CONFIG);
  node = await startTestNode(repo.dir);
  client = grpcClient(node.grpcTarget);
});

afterAll(async () => {
  client?.close();
  await node?.stop();
  await removeDir(repo?.dir);
});

const encoder = new TextEncoder();

function generateRequest(
  id: string,
  prompt: string,
  options: { stream?: boolean; sampling?: string; parameters?: MessageInitShape<typeof ModelInferRequestSchema>['parameters'] } = {},
): ModelInferRequest {
  return create(ModelInferRequestSchema, {
    modelName: 'token_stream',
    id,
    inputs: [
      { name: 'text_input', datatype: 'BYTES', shape: [1n], contents: { bytesContents: [encoder.encode(prompt)] } },
      { name: 'stream', datatype: 'BOOL', shape: [1n], contents: { boolContents: [options.stream ?? true] } },
      ...(options.sampling === undefined
        ? []
        : [{ name: 'sampling_parameters', datatype: 'BYTES', shape: [1n], contents: { bytesContents: [encoder.encode(options.sampling)] } }]),
    ],
    ...(options.parameters === undefined ? {} : { parameters: options.parameters }),
  });
}

function openStream(): ClientDuplexStream<ModelInferRequest, ModelStreamInferResponse> {
  return client.makeBidiStreamRequest(svc.modelStreamInfer.path, svc.modelStreamInfer.requestSerialize, svc.modelStreamInfer.responseDeserialize, new Metadata());
}

function runStream(requests: ModelInferRequest[]) {
  return new Promise<{ responses: ModelStreamInferResponse[]; code: status }>((resolve) => {
    const stream = openStream();
    const responses: ModelStreamInferResponse[] = [];
    stream.on('data', (r: ModelStreamInferResponse) => responses.push(r));
    stream.on('error', () => undefined);
    stream.on('status', (s: { code: status }) => setImmediate(() => resolve({ responses, code: s.code })));
    for (const r of requests) stream.write(r);
    stream.end();
  });
}

function text(response: ModelStreamInferResponse | undefined): string {
  const raw = response?.inferResponse?.rawOutputContents[0];
  if (raw === undefined) return '';
  return decodeBytesElements(raw, 1).map((b) => new TextDecoder().decode(b)).join('');
}

function finalFlag(response: ModelStreamInferResponse | undefined): unknown {
  const choice = response?.inferResponse?.parameters['triton_final_response']?.parameterChoice;
  return choice?.case === 'boolParam' ? choice.value : undefined;
}

describe('ModelStreamInfer on a decoupled model', () => {
  it('streams one response per token, triton_final_response false on each but the last', async () => {
    const prompt = 'the quick brown fox jumps';
    const { responses, code } = await runStream([generateRequest('a', prompt)]);
    expect(code).toBe(status.OK);
    expect(responses.map((r) => r.errorMessage)).toEqual(['', '', '', '', '']);
    expect(responses.map(text)).toEqual(['the', ' quick', ' brown', ' fox', ' jumps']);
    expect(responses.map(finalFlag)).toEqual([false, false, false, false, true]);
    expect(responses.every((r) => r.inferResponse?.id === 'a' && r.inferResponse.modelName === 'token_stream')).toBe(true);
  });

  it('sends the bare final flag as an empty response only when triton_enable_empty_final_response is true', async () => {
    const sampling = JSON.stringify({ max_tokens: 0 });
    const without = await runStream([generateRequest('z', 'some words', { sampling })]);
    expect(without.responses).toEqual([]);
    const enabled = await runStream([
      generateRequest('e', 'some words', {
        sampling,
        parameters: { triton_enable_empty_final_response: { parameterChoice: { case: 'boolParam', value: true } } },
      }),
    ]);
    expect(enabled.responses).toHaveLength(1);
    expect(finalFlag(enabled.responses[0])).toBe(true);
    expect(enabled.responses[0]?.inferResponse?.outputs).toEqual([]);
    expect(enabled.responses[0]?.inferResponse?.id).toBe('e');
  });

  it('one non-streamed answer flagged final; the model sees max_tokens and stop', async () => {
    const { responses } = await runStream([
      generateRequest('n', 'a b c d e f', { stream: false, sampling: JSON.stringify({ max_tokens: 4, stop: [' d'] }) }),
    ]);
    expect(responses.map(text)).toEqual(['a b c d e fa b c']);
    expect(responses.map(finalFlag)).toEqual([true]);
  });

  it("the model's error travels in-band and the stream goes on", async () => {
    const { responses, code } = await runStream([
      generateRequest('bad', 'x y', { sampling: '{not json' }),
      generateRequest('ok', 'x y'),
    ]);
    expect(code).toBe(status.OK);
    const bad = responses.find((r) => r.inferResponse?.id === 'bad');
    expect(bad?.errorMessage).toMatch(/sampling_parameters must be a JSON object/);
    expect(responses.filter((r) => r.inferResponse?.id === 'ok').map(text)).toEqual(['x', ' y']);
  });

  it('a client that goes away mid-stream stops the model, which saw its signal', async () => {
    const before = (await repo.cancellations()).length;
    const stream = openStream();
    stream.on('error', () => undefined);
    const tokens = 5000;
    let received = 0;
    await new Promise<void>((resolve) => {
      stream.on('data', () => {
        received += 1;
        if (received === 3) resolve();
      });
      stream.write(generateRequest('long', longPrompt(tokens)));
    });
    stream.cancel();
    expect(await eventually(async () => (await repo.cancellations()).length > before)).toBe(true);
    const line = (await repo.cancellations())[before] ?? '';
    const sent = Number(/^cancelled (\d+)$/.exec(line)?.[1]);
    expect(sent).toBeGreaterThanOrEqual(3);
    expect(sent).toBeLessThan(tokens);
  });

  it('counts decoupled requests in nv_inference_first_response_histogram_ms', async () => {
    const metrics = parsePrometheus(await (await fetch(node.metrics)).text());
    expect(metrics.get('nv_inference_first_response_histogram_ms_count{model="token_stream",version="1"}')).toBeGreaterThanOrEqual(3);
  });
});

describe('APIs with one answer refuse decoupled models with Triton errors', () => {
  it('ModelInfer: UNIMPLEMENTED', async () => {
    const error = await callUnary<ModelInferRequest, ModelInferResponse>(client, svc.modelInfer, generateRequest('u', 'hi')).then(
      () => undefined,
      (e: ServiceError) => e,
    );
    expect(error?.code).toBe(status.UNIMPLEMENTED);
    expect(error?.details).toBe("ModelInfer RPC doesn't support models with decoupled transaction policy");
  });

  it('an ensemble whose last step is decoupled is refused as a decoupled model is (HTTP 501)', async () => {
    const response = await fetch(`${node.http}/v2/models/stream_ensemble/infer`, {
      method: 'POST',
      body: JSON.stringify({ inputs: [{ name: 'PROMPT', datatype: 'BYTES', shape: [1], data: ['hi'] }] }),
    });
    expect(response.status).toBe(501);
    expect(await response.json()).toEqual({ error: "HTTP end point doesn't support models with decoupled transaction policy" });
  });

  it('HTTP /infer: 501', async () => {
    const response = await fetch(`${node.http}/v2/models/token_stream/infer`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ inputs: [{ name: 'text_input', datatype: 'BYTES', shape: [1], data: ['hi'] }] }),
    });
    expect(response.status).toBe(501);
    expect(await response.json()).toEqual({ error: "HTTP end point doesn't support models with decoupled transaction policy" });
  });
});
