/**
 * The example `rag_pipeline` behind the gateway's gRPC front door and HTTP infer route with tenant
 * keys (redis + node + gateway, rag-fleet.ts).
 *
 * What this pins down today: the tenant key is checked (a stranger is UNAUTHENTICATED, a tenant
 * without the model is refused), and the gateway forwards each ModelStreamInfer message as one
 * ModelInfer to the node, so the decoupled ensemble is answered with Triton's refusal in-band rather
 * than a hang or a half answer. Streaming its answer through the gateway goes over the gateway's
 * generate_stream and /v1 routes (being added by another branch), not over this front door.
 */
import { create } from '@bufbuild/protobuf';
import { status } from '@grpc/grpc-js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ModelInferRequestSchema, type ModelInferRequest } from '../../../shared/src/gen/grpc_service_pb.js';
import { sha256Hex } from '../../src/core/auth/index.js';
import { frontClient, type FrontClient } from '../grpc-front/front-client.js';
import { startRagFleet, type RagFleet } from './rag-fleet.js';

const KEY = { rag: 'tsk_rag-tenant', other: 'tsk_rag-other' };

function question(text: string): ModelInferRequest {
  return create(ModelInferRequestSchema, {
    modelName: 'rag_pipeline',
    id: 'q',
    inputs: [
      { name: 'text_input', datatype: 'BYTES', shape: [1n], contents: { bytesContents: [new TextEncoder().encode(text)] } },
      { name: 'stream', datatype: 'BOOL', shape: [1n], contents: { boolContents: [true] } },
    ],
  });
}

describe('rag_pipeline behind the gateway (redis + node + gateway)', () => {
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

  it('a stranger is UNAUTHENTICATED and a tenant without the model is refused', async () => {
    const stranger = await client.stream([question('How does dynamic batching merge requests?')], 'tsk_nobody');
    expect(stranger.error?.code).toBe(status.UNAUTHENTICATED);
    const other = await client.stream([question('How does dynamic batching merge requests?')], KEY.other);
    expect(other.responses).toHaveLength(1);
    expect(other.responses[0]?.errorMessage).toMatch(/rag_pipeline/);
  });

  it("ModelStreamInfer with the tenant's key: the decoupled ensemble gets Triton's refusal in-band, and the stream ends OK", async () => {
    const { responses, error } = await client.stream([question('How does dynamic batching merge requests?')], KEY.rag);
    expect(error).toBeUndefined();
    expect(responses).toHaveLength(1);
    expect(responses[0]?.errorMessage).toBe("ModelInfer RPC doesn't support models with decoupled transaction policy");
  });

  it('HTTP infer through the gateway: the node\'s 501 for a decoupled model, relayed', async () => {
    const response = await fleet.call(KEY.rag, '/v2/models/rag_pipeline/infer', { inputs: [{ name: 'text_input', datatype: 'BYTES', shape: [1], data: ['hi'] }] });
    expect(response.status).toBe(501);
    expect(((await response.json()) as { error: string }).error).toMatch(/decoupled transaction policy/);
  });
});
