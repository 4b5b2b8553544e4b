/**
 * The processes of the cache, fault and soak scenarios, all on loopback:
 *
 *   redis-server (private)              tenants, rate limits, cache, the nodes' load reports
 *   node 1..N (tessera-node --redis-url) each serving `echo`: sleeps `serviceMs` per request, echoes its input
 *   one gateway (p2c, Redis fleet)      one premium tenant with rate limits that never refuse
 *
 * `echo` is a typescript-backend model (max_batch_size 0, `instances` instances), so a node's capacity
 * is instances / service time and costs no CPU: the load generator, the gateway and the nodes share a
 * small machine. Its input is FP32[4]: distinct values make distinct requests, so a scenario decides
 * which requests can be cache hits (the gateway caches `echo` when `cache` is on).
 *
 * (gateway-fleet.ts builds the bigger fleet of the gateway scenario with a similar model; this one is
 * separate so the two scenarios can evolve independently.)
 */
import { createHash, randomBytes } from 'node:crypto';
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ESM_PACKAGE_JSON, configText } from '../../../gpu-node/src/example-models/index.js';
import { startRedisServer, type RedisServer } from '../../../shared/src/testing/index.js';
import type { InferRequest } from '../../../shared/src/tensors/index.js';
import { createHttpInferClient } from '../lib/http-client.js';
import type { InferClient } from '../lib/infer-client.js';
import { sleep } from '../lib/load-window.js';
import { launchNode, waitForModelReady, type RunningNode } from '../lib/node-process.js';
import { scrapeMetrics, selectSamples } from '../lib/prom-text.js';
import { launchServer, type RunningServer } from '../lib/server-process.js';

export const ECHO_MODEL = 'echo';
export const ECHO_ELEMENTS = 4;
const HOST = '127.0.0.1';
const GATEWAY_BIN = fileURLToPath(new URL('../../../bin/tessera-gateway.js', import.meta.url));

const ECHO_MODEL_SOURCE = `// Written by loadtests/src/scenarios/small-fleet.ts: a model with a known service time.
let delayMs = 0;
export function initialize(args) {
  delayMs = Number(args.parameters.delay_ms ?? '0');
}
export async function execute(requests) {
  await new Promise((resolve) => setTimeout(resolve, delayMs));
  return requests.map((request) => {
    const input = request.inputs.INPUT0;
    return { outputs: { OUTPUT0: { datatype: 'FP32', shape: [...input.shape], data: input.data } } };
  });
}
`;

export interface SmallFleetOptions {
  /** Nodes; default 2. */
  readonly nodes?: number;
  /** `echo`'s service time per request, ms; default 10. */
  readonly serviceMs?: number;
  /** `echo` instances per node; default 4. */
  readonly instances?: number;
  /** Whether the gateway caches `echo`; default false. */
  readonly cache?: boolean;
  /**
   * Redis saves its dataset on shutdown and loads it on restart (RDB in the work dir), as a Redis
   * with persistence does after a planned stop; default false (no persistence, as in tests).
   */
  readonly redisPersistence?: boolean;
}

export interface SmallFleet {
  readonly redis: RedisServer;
  readonly nodes: readonly RunningNode[];
  readonly nodeIds: readonly string[];
  readonly gateway: RunningServer;
  /** The premium tenant's API key, plaintext. */
  readonly key: string;
  readonly gatewayMetricsUrl: string;
  /** Node id → its metrics URL. */
  readonly nodeMetricsUrls: Readonly<Record<string, string>>;
  readonly config: unknown;
  readonly capacityPerSec: number;
  /** A keep-alive HTTP client to the gateway with the API key. */
  client(connections: number, headers?: Readonly<Record<string, string>>): InferClient;
  close(): Promise<void>;
}

/** An `echo` request whose input is [v, v+1, v+2, v+3]: equal `v`, equal request (a cache hit). */
export function echoRequest(v: number): InferRequest {
  const data = new Float32Array([v, v + 1, v + 2, v + 3]);
  return { id: '', modelName: ECHO_MODEL, inputs: [{ name: 'INPUT0', datatype: 'FP32', shape: [ECHO_ELEMENTS], data: new Uint8Array(data.buffer) }], parameters: {} };
}

/** One infer that must echo its input: a wrong answer fails instead of being counted. */
export async function inferEcho(client: InferClient, v: number): Promise<void> {
  const result = await client.infer(echoRequest(v));
  const out = result.response.outputs[0];
  if (out === undefined || out.data.length !== ECHO_ELEMENTS * 4) throw new Error(`expected ${ECHO_ELEMENTS * 4} output bytes, got ${out?.data.length}`);
  const first = new DataView(out.data.buffer, out.data.byteOffset, out.data.byteLength).getFloat32(0, true);
  if (first !== Math.fround(v)) throw new Error(`wrong answer: echoed ${first} for ${v}`);
}

async function writeEchoRepository(dir: string, serviceMs: number, instances: number): Promise<string> {
  const repo = join(dir, 'models');
  const model = join(repo, ECHO_MODEL);
  await mkdir(join(model, '1'), { recursive: true });
  const config = configText({
    name: ECHO_MODEL,
    backend: 'typescript',
    defaultModelFilename: 'model.js',
    maxBatchSize: 0,
    inputs: [{ name: 'INPUT0', dataType: 'TYPE_FP32', dims: [ECHO_ELEMENTS] }],
    outputs: [{ name: 'OUTPUT0', dataType: 'TYPE_FP32', dims: [ECHO_ELEMENTS] }],
    instanceGroups: [{ count: instances, kind: 'KIND_CPU' }],
    parameters: { delay_ms: String(serviceMs) },
  });
  await writeFile(join(model, 'config.pbtxt'), config);
  await writeFile(join(model, '1', 'model.js'), ECHO_MODEL_SOURCE);
  await writeFile(join(model, '1', 'package.json'), ESM_PACKAGE_JSON);
  return repo;
}

function smallGatewayConfig(redisUrl: string, keyHash: string, cache: boolean): unknown {
  // Rate limits still run on every request (one Redis script) but never refuse at bench rates.
  const unlimited = { rateLimits: { requestsPerSecond: 1_000_000, burst: 1_000_000, elementsPerSecond: 0, elementsBurst: 0 } };
  return {
    host: HOST,
    redisUrl,
    tiers: { premium: unlimited },
    tenants: [{ id: 'bench', name: 'bench', tier: 'premium', keys: [{ id: 'bench-key', hash: keyHash }] }],
    routing: { policy: 'p2c' },
    cache: cache ? { enabled: true, models: { [ECHO_MODEL]: { enabled: true }, '*': { enabled: false } } } : { enabled: false },
  };
}

/** Waits until the gateway's `tessera_gateway_fleet_nodes` reads `count` (exactly, when `exact`). */
export async function waitForFleetSize(metricsUrl: string, count: number, timeoutMs = 30_000, exact = false): Promise<number> {
  const deadline = performance.now() + timeoutMs;
  let seen = Number.NaN;
  while (performance.now() < deadline) {
    try {
      seen = selectSamples(await scrapeMetrics(metricsUrl), 'tessera_gateway_fleet_nodes')[0]?.value ?? Number.NaN;
    } catch {
      seen = Number.NaN;
    }
    if (exact ? seen === count : seen >= count) return seen;
    await sleep(200);
  }
  throw new Error(`the gateway saw ${seen} nodes, not ${count}, after ${timeoutMs} ms`);
}

/**
 * Until one request is answered through the gateway: the fleet view may list a node (its key) a moment
 * before it knows the node's models, and a scenario's first requests must not measure that.
 */
async function firstAnswer(client: InferClient, timeoutMs = 30_000): Promise<void> {
  const deadline = performance.now() + timeoutMs;
  for (;;) {
    try {
      return await inferEcho(client, -1);
    } catch (error) {
      if (performance.now() > deadline) throw new Error(`no answer through the gateway after ${timeoutMs} ms`, { cause: error });
      await sleep(200);
    }
  }
}

export async function startSmallFleet(work: string, options: SmallFleetOptions, log: (message: string) => void): Promise<SmallFleet> {
  const count = options.nodes ?? 2;
  const serviceMs = options.serviceMs ?? 10;
  const instances = options.instances ?? 4;
  const started: { stop(): Promise<void> }[] = [];
  const closeAll = async (): Promise<void> => {
    // Gateway before nodes before Redis, so nothing logs the others' disappearance.
    for (const server of started.reverse()) await server.stop().catch(() => undefined);
    started.length = 0;
  };
  try {
    const persistence = options.redisPersistence === true ? ['--save', '3600 1', '--dir', work, '--dbfilename', 'bench-redis.rdb'] : [];
    const redis = await startRedisServer({ extraArgs: persistence });
    started.push(redis);
    const repo = await writeEchoRepository(work, serviceMs, instances);
    const nodeIds = Array.from({ length: count }, (_, i) => `bench-node${i + 1}`);
    const launched = await Promise.allSettled(
      nodeIds.map((id) => launchNode({ modelRepository: repo, extraArgs: ['--redis-url', redis.url, '--node-id', id, '--advertise-host', HOST] })),
    );
    const nodes = launched.flatMap((r) => (r.status === 'fulfilled' ? [r.value] : []));
    started.push(...nodes);
    const failed = launched.find((r): r is PromiseRejectedResult => r.status === 'rejected');
    if (failed !== undefined) throw failed.reason;
    for (const node of nodes) await waitForModelReady(node.httpBase, ECHO_MODEL);

    const key = `tsk_bench_${randomBytes(12).toString('hex')}`;
    const config = smallGatewayConfig(redis.url, createHash('sha256').update(key).digest('hex'), options.cache === true);
    const file = join(work, 'gateway.json');
    await writeFile(file, `${JSON.stringify(config, null, 2)}\n`);
    const gateway = await launchServer({
      name: 'tessera-gateway',
      args: [GATEWAY_BIN, '--config', file, '--port', '0', '--host', HOST],
      startedMsg: 'tessera-gateway started',
      // The config names Redis; an inherited REDIS_URL would override it.
      env: { REDIS_URL: '' },
    });
    started.push(gateway);
    const gatewayMetricsUrl = `http://${HOST}:${gateway.port}/metrics`;
    await waitForFleetSize(gatewayMetricsUrl, count);
    const client = createHttpInferClient(HOST, gateway.port, 1, { headers: { authorization: `Bearer ${key}`, 'cache-control': 'no-store' } });
    try {
      await firstAnswer(client);
    } finally {
      await client.close();
    }
    log(`redis :${redis.port}, ${count} nodes (echo ${instances} x ${serviceMs} ms), gateway :${gateway.port}${options.cache === true ? ' caching echo' : ''}`);
    const nodeMetricsUrls = Object.fromEntries(nodes.map((n, i) => [nodeIds[i] as string, `http://${HOST}:${n.metricsPort}/metrics`]));
    return {
      redis,
      nodes,
      nodeIds,
      gateway,
      key,
      gatewayMetricsUrl,
      nodeMetricsUrls,
      config,
      capacityPerSec: (count * instances * 1000) / serviceMs,
      client: (connections, headers = {}) =>
        createHttpInferClient(HOST, gateway.port, connections, { headers: { authorization: `Bearer ${key}`, ...headers } }),
      close: closeAll,
    };
  } catch (error) {
    await closeAll();
    throw error;
  }
}

/** SIGKILLs a node (no goodbye: its key stays in Redis until its TTL). */
export function killNode(node: RunningNode): Promise<void> {
  return new Promise((resolve) => {
    try {
      process.kill(node.pid, 'SIGKILL');
    } catch {
      resolve();
      return;
    }
    // RunningNode has no exit hook; poll until the pid is gone (signal 0 throws ESRCH).
    const timer = setInterval(() => {
      try {
        process.kill(node.pid, 0);
      } catch {
        clearInterval(timer);
        resolve();
      }
    }, 20);
  });
}
