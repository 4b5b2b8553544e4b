/**
 * The example `rag_pipeline` behind the gateway with tenant keys: a real redis-server, a real node
 * process serving the pipeline (written by `bin/tessera-models.js`: the gateway may not import
 * gpu-node), and the gateway's gRPC front door and HTTP infer route.
 *
 * What this pins down today: the tenant key is checked (a stranger is UNAUTHENTICATED, a tenant
 * without the model is refused), and the gateway forwards each ModelStreamInfer message as one
 * ModelInfer to the node, so the decoupled ensemble is answered with Triton's refusal in-band rather
 * than a hang or a half answer. Streaming its answer through the gateway goes over the gateway's
 * generate_stream and /v1 routes (being added by another branch), not over this front door.
 */
import { execFile } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { create } from '@bufbuild/protobuf';
import { status } from '@grpc/grpc-js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ModelInferRequestSchema, type ModelInferRequest } from '../../../shared/src/gen/grpc_service_pb.js';
import { silentLogger } from '../../../shared/src/logging/index.js';
import { startRedisServer, waitFor, type RedisServer } from '../../../shared/test/support/index.js';
import { loadGatewayConfig } from '../../src/config/index.js';
import { sha256Hex } from '../../src/core/auth/index.js';
import { startGateway, type RunningGateway } from '../../src/entry-node.js';
import { frontClient, type FrontClient } from '../grpc-front/front-client.js';
import { spawnNode, type SpawnedNode } from '../support/test-node-process.js';

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));
const RAG_MODELS = 'rag_query,query_encoder,retriever,token_stream,rag_pipeline';
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
  let repository: string;
  let redis: RedisServer;
  let node: SpawnedNode;
  let gateway: RunningGateway;
  let client: FrontClient;

  beforeAll(async () => {
    repository = await mkdtemp(join(tmpdir(), 'tessera-gw-rag-'));
    await promisify(execFile)(process.execPath, [join(ROOT, 'bin/tessera-models.js'), '--out', repository, '--only', RAG_MODELS]);
    redis = await startRedisServer();
    node = await spawnNode(repository, ['--redis-url', redis.url, '--node-id', 'rag-node', '--advertise-host', '127.0.0.1']);
    const config = loadGatewayConfig(
      JSON.stringify({
        tiers: { standard: { queueTimeoutMs: 20_000 } },
        tenants: [
          { id: 'rag', tier: 'standard', allowedModels: ['rag_pipeline'], keys: [{ id: 'rag1', hash: await sha256Hex(KEY.rag) }] },
          { id: 'other', tier: 'standard', allowedModels: ['token_stream'], keys: [{ id: 'other1', hash: await sha256Hex(KEY.other) }] },
        ],
      }),
    );
    gateway = await startGateway({ config, redisUrl: redis.url, port: 0, grpcPort: 0, host: '127.0.0.1', logger: silentLogger, fleet: { refreshMs: 200 } });
    await waitFor(() => gateway.directory.candidates('rag_pipeline').length === 1, { what: 'the RAG node in the fleet view', timeoutMs: 30_000 });
    client = frontClient(gateway.grpcTarget!);
  }, 90_000);

  afterAll(async () => {
    client?.close();
    await gateway?.close({ graceMs: 500 });
    if (node !== undefined && node.process.exitCode === null && node.process.signalCode === null) {
      node.process.kill('SIGTERM');
      await node.exited;
    }
    await redis?.stop();
    if (repository !== undefined) await rm(repository, { recursive: true, force: true });
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
    const response = await fetch(`${gateway.url}/v2/models/rag_pipeline/infer`, {
      method: 'POST',
      headers: { authorization: `Bearer ${KEY.rag}`, 'content-type': 'application/json' },
      body: JSON.stringify({ inputs: [{ name: 'text_input', datatype: 'BYTES', shape: [1], data: ['hi'] }] }),
    });
    expect(response.status).toBe(501);
    expect(((await response.json()) as { error: string }).error).toMatch(/decoupled transaction policy/);
  });
});
