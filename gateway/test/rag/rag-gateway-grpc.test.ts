/**
 * The example `rag_pipeline` behind the gateway's gRPC front door with tenant keys (redis + node +
 * gateway, rag-fleet.ts; the pipeline answers with token_stream, which echoes its prompt): the
 * decoupled ensemble's answer is relayed response by response over ModelStreamInfer, the last one
 * flagged `triton_final_response`, holding the passage the question matches; a client that goes
 * away stops the decoder on the node; a stranger is UNAUTHENTICATED and a tenant without the model
 * refused; unary ModelInfer and HTTP infer keep the node's refusal of a decoupled model.
 */
import { create } from '@bufbuild/protobuf';
import { status, type ServiceError } from '@grpc/grpc-js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ModelInferRequestSchema, type ModelInferRequest, type ModelInferResponse, type ModelStreamInferResponse } from '../../../shared/src/gen/grpc_service_pb.js';
import { decodeBytesElements } from '../../../shared/src/tensors/index.js';
import { sha256Hex } from '../../src/core/auth/index.js';
import { frontClient, keyMetadata, type FrontClient } from '../grpc-front/front-client.js';
import { startRagFleet, type RagFleet } from './rag-fleet.js';

const KEY = { rag: 'tsk_rag-tenant', other: 'tsk_rag-other' };
const QUESTION = 'How does dynamic batching merge requests?';

function question(text: string, topK?: number): ModelInferRequest {
  return create(ModelInferRequestSchema, {
    modelName: 'rag_pipeline',
    id: 'q',
    inputs: [
      { name: 'text_input', datatype: 'BYTES', shape: [1n], contents: { bytesContents: [new TextEncoder().encode(text)] } },
      { name: 'stream', datatype: 'BOOL', shape: [1n], contents: { boolContents: [true] } },
      ...(topK === undefined ? [] : [{ name: 'top_k', datatype: 'INT32', shape: [1n], contents: { intContents: [topK] } }]),
    ],
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

describe('rag_pipeline behind the gateway gRPC front door (redis + node + gateway)', () => {
  let fleet: RagFleet;
  let client: FrontClient;

  beforeAll(async () => {
    fleet = await startRagFleet({
      tiers: { standard: { queueTimeoutMs: 20_000 } },
      tenants: [
        { id: 'rag', tier: 'standard', allowedModels: ['rag_pipeline'], keys: [{ id: 'rag1', hash: await sha256Hex(KEY.rag) }] },
        { id: 'other', tier: 'standard', allowedModels: ['token_stream'], keys: [{ id: 'other1', hash: await sha256Hex(KEY.other) }] },
      ],
    });
    client = frontClient(fleet.gateway.grpcTarget!);
  }, 90_000);

  afterAll(async () => {
    client?.close();
    await fleet?.stop();
  });

  it("ModelStreamInfer with the tenant's key: the answer streams as several responses, the last flagged final, with the matching passage", async () => {
    const { responses, error } = await client.stream([question(QUESTION, 1)], KEY.rag);
    expect(error).toBeUndefined();
    expect(responses.length).toBeGreaterThan(5);
    expect(responses.every((r) => r.errorMessage === '' && r.inferResponse?.id === 'q')).toBe(true);
    expect(responses.map(finalFlag)).toEqual([...Array<boolean>(responses.length - 1).fill(false), true]);
    const answer = responses.map(text).join('');
    expect(answer).toContain('[1] Dynamic batching: The dynamic batcher holds requests');
    expect(answer).not.toContain('[2]');
  });

  it('a client that goes away mid-answer stops the decoder on the node', async () => {
    const before = (await fleet.cancellations()).length;
    const call = (client.inference.modelStreamInfer as (md: unknown) => NodeJS.ReadWriteStream & { cancel(): void })(keyMetadata(KEY.rag));
    call.on('error', () => undefined);
    let received = 0;
    await new Promise<void>((resolve) => {
      call.on('data', () => {
        received += 1;
        if (received === 3) resolve();
      });
      call.write(question('models, requests, tenants and the node', 12) as never);
    });
    call.cancel();
    const deadline = Date.now() + 20_000;
    while ((await fleet.cancellations()).length === before && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
    expect((await fleet.cancellations()).length).toBeGreaterThan(before);
  });

  it('a stranger is UNAUTHENTICATED and a tenant without the model is refused', async () => {
    const stranger = await client.stream([question(QUESTION)], 'tsk_nobody');
    expect(stranger.error?.code).toBe(status.UNAUTHENTICATED);
    const other = await client.stream([question(QUESTION)], KEY.other);
    expect(other.responses).toHaveLength(1);
    expect(other.responses[0]?.errorMessage).toMatch(/rag_pipeline/);
  });

  it("unary ModelInfer and HTTP infer through the gateway: the node's refusal of a decoupled model", async () => {
    const unary = await client.unary<ModelInferResponse>('modelInfer', question(QUESTION), { key: KEY.rag });
    expect((unary.error as ServiceError | undefined)?.code).toBe(status.UNIMPLEMENTED);
    expect(unary.error?.details).toBe("ModelInfer RPC doesn't support models with decoupled transaction policy");
    const response = await fleet.call(KEY.rag, '/v2/models/rag_pipeline/infer', { inputs: [{ name: 'text_input', datatype: 'BYTES', shape: [1], data: ['hi'] }] });
    expect(response.status).toBe(501);
    expect(((await response.json()) as { error: string }).error).toMatch(/decoupled transaction policy/);
  });
});
