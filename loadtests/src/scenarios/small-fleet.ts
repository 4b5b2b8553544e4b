/**
 * The processes of the cache, fault and soak scenarios, all on loopback:
 *
 *   redis-server (private)              tenants, rate limits, cache, the nodes' load reports
 *   node 1..N (tessera-node --redis-url) each serving `echo`: sleeps `serviceMs` per request, echoes its input
 *   one gateway (p2c, Redis fleet)      one premium tenant with rate limits that never refuse
 *
 * `echo` is the bench's sleep model (lib/processes/sleep-model.ts, `instances` instances), so a node's capacity
 * is instances / service time and costs no CPU. Its input is FP32[4]: distinct values make distinct
 * requests, so a scenario decides which requests can be cache hits (the gateway caches `echo` when
 * `cache` is on).
 *
 * gateway-fleet.ts builds the bigger fleet of the gateway scenario from the same parts (fleet-launch.ts).
 */
import { join } from 'node:path';
import { startRedisServer, type RedisServer } from '../../../shared/test/support/index.js';
import type { InferRequest } from '../../../shared/src/tensors/index.js';
import { createHttpInferClient } from '../lib/clients/http-client.js';
import type { InferClient } from '../lib/clients/infer-client.js';
import { sleep } from '../lib/load/load-window.js';
import { waitForModelReady, type RunningNode } from '../lib/processes/node-process.js';
import type { RunningServer } from '../lib/processes/server-process.js';
import { SLEEP_ELEMENTS, SLEEP_INPUT, writeSleepModel } from '../lib/processes/sleep-model.js';
import { FLEET_HOST, ProcessStack, UNLIMITED_TIER, benchKey, fleetNodeId, launchFleetNodes, launchGateway, waitForFleetSize } from './fleet-launch.js';

export const ECHO_MODEL = 'echo';
export const ECHO_ELEMENTS = SLEEP_ELEMENTS;
const HOST = FLEET_HOST;

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
  return { id: '', modelName: ECHO_MODEL, inputs: [{ name: SLEEP_INPUT, datatype: 'FP32', shape: [ECHO_ELEMENTS], data: new Uint8Array(data.buffer) }], parameters: {} };
}

/** One infer that must echo its input: a wrong answer fails instead of being counted. */
export async function inferEcho(client: InferClient, v: number): Promise<void> {
  const result = await client.infer(echoRequest(v));
  const out = result.response.outputs[0];
  if (out === undefined || out.data.length !== ECHO_ELEMENTS * 4) throw new Error(`expected ${ECHO_ELEMENTS * 4} output bytes, got ${out?.data.length}`);
  const first = new DataView(out.data.buffer, out.data.byteOffset, out.data.byteLength).getFloat32(0, true);
  if (first !== Math.fround(v)) throw new Error(`wrong answer: echoed ${first} for ${v}`);
}

function smallGatewayConfig(redisUrl: string, keyHash: string, cache: boolean): unknown {
  return {
    host: HOST,
    redisUrl,
    // The bench scrapes /metrics on loopback (a private network): the admin-key default is lifted here.
    metrics: { requireAdminKey: false },
    tiers: { premium: UNLIMITED_TIER },
    tenants: [{ id: 'bench', name: 'bench', tier: 'premium', keys: [{ id: 'bench-key', hash: keyHash }] }],
    routing: { policy: 'p2c' },
    cache: cache ? { enabled: true, models: { [ECHO_MODEL]: { enabled: true }, '*': { enabled: false } } } : { enabled: false },
  };
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
  const stack = new ProcessStack();
  try {
    const persistence = options.redisPersistence === true ? ['--save', '3600 1', '--dir', work, '--dbfilename', 'bench-redis.rdb'] : [];
    const redis = await startRedisServer({ extraArgs: persistence });
    stack.push(redis);
    // One repository for every node: they serve the same model.
    const repo = join(work, 'models');
    await writeSleepModel(repo, ECHO_MODEL, serviceMs, instances);
    const nodeIds = Array.from({ length: count }, (_, i) => fleetNodeId(i));
    const nodes = await launchFleetNodes(stack, nodeIds.map(() => repo), redis.url);
    for (const node of nodes) await waitForModelReady(node.httpBase, ECHO_MODEL);

    const { key, hash } = benchKey();
    const config = smallGatewayConfig(redis.url, hash, options.cache === true);
    const gateway = await launchGateway(stack, work, 'gateway.json', 'tessera-gateway', config);
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
      close: () => stack.close(),
    };
  } catch (error) {
    await stack.close();
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
