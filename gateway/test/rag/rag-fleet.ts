/**
 * Test support for the example `rag_pipeline` behind the gateway: a real redis-server, a real node
 * process serving the pipeline (written by `bin/tessera-models.js`: the gateway may not import
 * gpu-node) and a real gateway on loopback (HTTP and gRPC) with the tenants and tiers a suite gives.
 * The pipeline answers with `token_stream` instead of tiny_decoder (its last step's model_name edited
 * as text): token_stream echoes its prompt, so a test sees the passages retrieved.
 */
import { execFile } from 'node:child_process';
import { appendFile, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { silentLogger } from '../../../shared/src/logging/index.js';
import { startRedisServer, waitFor, type RedisServer } from '../../../shared/test/support/index.js';
import { loadGatewayConfig } from '../../src/config/index.js';
import { startGateway, type RunningGateway } from '../../src/entry-node.js';
import { spawnNode, type SpawnedNode } from '../support/test-node-process.js';

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));
export const RAG_MODELS = ['rag_query', 'query_encoder', 'retriever', 'token_stream', 'rag_pipeline'];

export interface RagFleet {
  readonly node: SpawnedNode;
  readonly gateway: RunningGateway;
  /** Lines token_stream (the decoder) wrote when a request saw its cancellation. */
  cancellations(): Promise<string[]>;
  /** Fetch through the gateway's HTTP port with a tenant key. */
  call(key: string, path: string, body: unknown, init?: RequestInit): Promise<Response>;
  stop(): Promise<void>;
}

/** Starts the fleet; `config` is the gateway's config file as an object (tiers, tenants, ...). */
export async function startRagFleet(config: Record<string, unknown>): Promise<RagFleet> {
  const repository = await mkdtemp(join(tmpdir(), 'tessera-gw-rag-'));
  await promisify(execFile)(process.execPath, [join(ROOT, 'bin/tessera-models.js'), '--out', repository, '--only', RAG_MODELS.join(',')]);
  const pipelineConfig = join(repository, 'rag_pipeline', 'config.pbtxt');
  await writeFile(pipelineConfig, (await readFile(pipelineConfig, 'utf8')).replace('model_name: "tiny_decoder"', 'model_name: "token_stream"'));
  const cancelLog = join(repository, 'cancelled.log');
  await appendFile(join(repository, 'token_stream', 'config.pbtxt'), `parameters { key: "cancel_log" value: { string_value: ${JSON.stringify(cancelLog)} } }\n`);
  let redis: RedisServer | undefined;
  let node: SpawnedNode | undefined;
  let gateway: RunningGateway | undefined;
  const stop = async () => {
    await gateway?.close({ graceMs: 500 });
    if (node !== undefined && node.process.exitCode === null && node.process.signalCode === null) {
      node.process.kill('SIGTERM');
      await node.exited;
    }
    await redis?.stop();
    await rm(repository, { recursive: true, force: true });
  };
  try {
    redis = await startRedisServer();
    node = await spawnNode(repository, ['--redis-url', redis.url, '--node-id', 'rag-node', '--advertise-host', '127.0.0.1']);
    const options = { config: loadGatewayConfig(JSON.stringify(config)), redisUrl: redis.url, port: 0, grpcPort: 0, host: '127.0.0.1' };
    gateway = await startGateway({ ...options, logger: silentLogger, fleet: { refreshMs: 200 } });
    const running = gateway;
    await waitFor(() => running.directory.candidates('rag_pipeline').length === 1, { what: 'the RAG node in the fleet view', timeoutMs: 30_000 });
  } catch (error) {
    await stop();
    throw error;
  }
  const started = { node, gateway };
  return {
    ...started,
    async cancellations() {
      const text = await readFile(cancelLog, 'utf8').catch(() => '');
      return text.split('\n').filter((line) => line !== '');
    },
    call(key, path, body, init = {}) {
      return fetch(`${started.gateway.url}${path}`, {
        method: 'POST',
        body: JSON.stringify(body),
        ...init,
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      });
    },
    stop,
  };
}
