/**
 * The processes of `npm run bench -- gateway`, all on loopback:
 *
 *   redis-server (private, no persistence)     the gateway's stores and the fleet's load reports
 *   node 1..4 (tessera-node, --redis-url)      node 1 also serves `simple`; nodes 1 and 2 serve `steady`;
 *                                              all four serve `work`, node 4 three times slower
 *   gateway p2c, gateway round-robin           the same config but `routing.policy`
 *   bare Hono hello-world                      the yardstick for cache-hit throughput
 *   replay server (startReplayServer)          node:http answering the gateway's cached answer, nothing
 *                                              else: what any cache hit on node:http costs at least
 *
 * `work` and `steady` are the bench's sleep model (lib/processes/sleep-model.ts): a node's service time is known
 * and costs no CPU, and its capacity is instances / service time. Redis, nodes and gateways are
 * started as small-fleet.ts starts them (fleet-launch.ts).
 */
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { writeExampleRepository } from '../../../gpu-node/src/example-models/index.js';
import { startRedisServer, type RedisServer } from '../../../shared/test/support/index.js';
import { waitForModelReady, type RunningNode } from '../lib/processes/node-process.js';
import { launchServer, type RunningServer } from '../lib/processes/server-process.js';
import { writeSleepModel } from '../lib/processes/sleep-model.js';
import { FLEET_HOST, ProcessStack, UNLIMITED_TIER, benchKey, launchFleetNodes, launchGateway, waitForFleetSize } from './fleet-launch.js';

export const SIMPLE_MODEL = 'simple';
/** Served by all four nodes, node 4 slower: the routing comparison. */
export const WORK_MODEL = 'work';
/** Served by nodes 1 and 2 at the same speed: the overload test. */
export const STEADY_MODEL = 'steady';

export const TIERS = ['premium', 'standard', 'free'] as const;
export type TierName = (typeof TIERS)[number];
export type RoutingPolicy = 'p2c' | 'round-robin';

export interface FleetShape {
  /** Service time of `work` and `steady` per batch on a normal node, ms. */
  readonly serviceMs: number;
  /** How much slower node 4 runs `work`. */
  readonly slowFactor: number;
  /** Instances of `work` per node. */
  readonly workInstances: number;
  /** Instances of `steady` per node (nodes 1 and 2). */
  readonly steadyInstances: number;
}

/** Node i's repository (i = 1..4). */
async function writeNodeRepository(dir: string, index: number, shape: FleetShape): Promise<string> {
  const repo = join(dir, `node${index}`);
  await mkdir(repo, { recursive: true });
  if (index === 1) await writeExampleRepository(repo, { only: [SIMPLE_MODEL] });
  const workMs = index === 4 ? shape.serviceMs * shape.slowFactor : shape.serviceMs;
  await writeSleepModel(repo, WORK_MODEL, workMs, shape.workInstances);
  if (index <= 2) await writeSleepModel(repo, STEADY_MODEL, shape.serviceMs, shape.steadyInstances);
  return repo;
}

/** The bench's gateway config: one tenant per tier, rate limits that run but never refuse, `simple` cached. */
export function gatewayConfig(redisUrl: string, policy: RoutingPolicy, keyHashes: Readonly<Record<TierName, string>>): unknown {
  return {
    host: FLEET_HOST,
    redisUrl,
    // The bench scrapes /metrics on loopback (a private network): the admin-key default is lifted here.
    metrics: { requireAdminKey: false },
    tiers: { premium: UNLIMITED_TIER, standard: UNLIMITED_TIER, free: UNLIMITED_TIER },
    tenants: TIERS.map((tier) => ({ id: `bench-${tier}`, name: `bench ${tier}`, tier, keys: [{ id: `bench-${tier}-key`, hash: keyHashes[tier] }] })),
    routing: { policy },
    cache: { enabled: true, models: { [SIMPLE_MODEL]: { enabled: true } } },
  };
}

/** A bare Hono hello-world on @hono/node-server, the same stack the gateway serves with. */
function honoScript(): string {
  return `import { Hono } from ${JSON.stringify(import.meta.resolve('hono'))};
import { serve } from ${JSON.stringify(import.meta.resolve('@hono/node-server'))};
const app = new Hono();
app.get('/', (c) => c.text('Hello Hono!'));
const server = serve({ fetch: app.fetch, port: 0, hostname: '127.0.0.1' }, (info) => {
  process.stderr.write(JSON.stringify({ msg: 'hono started', port: info.port }) + '\\n');
});
process.once('SIGTERM', () => server.close(() => process.exit(0)));
`;
}

/**
 * node:http doing only what every cache hit must: read the POST body and write the answer, the
 * gateway's own cached answer (status, headers and body) read from `answerPath`.
 */
function replayScript(answerPath: string): string {
  return `import http from 'node:http';
import { readFileSync } from 'node:fs';
const answer = JSON.parse(readFileSync(${JSON.stringify(answerPath)}, 'utf8'));
const body = Buffer.from(answer.bodyBase64, 'base64');
const headers = { ...answer.headers, 'Content-Length': String(body.length) };
const server = http.createServer((req, res) => {
  req.on('data', () => {});
  req.on('end', () => { res.writeHead(answer.status, headers); res.end(body); });
});
server.listen(0, '127.0.0.1', () => process.stderr.write(JSON.stringify({ msg: 'replay started', port: server.address().port }) + '\\n'));
process.once('SIGTERM', () => server.close(() => process.exit(0)));
`;
}

/** An HTTP answer to replay: what the gateway sent, less the headers node:http sets itself. */
export interface ReplayAnswer {
  readonly status: number;
  readonly headers: Readonly<Record<string, string>>;
  readonly body: Uint8Array;
}

export async function startReplayServer(work: string, answer: ReplayAnswer): Promise<RunningServer> {
  const answerPath = join(work, 'replay-answer.json');
  await writeFile(answerPath, JSON.stringify({ status: answer.status, headers: answer.headers, bodyBase64: Buffer.from(answer.body).toString('base64') }));
  const scriptPath = join(work, 'replay-server.mjs');
  await writeFile(scriptPath, replayScript(answerPath));
  return launchServer({ name: 'replay server', args: [scriptPath], startedMsg: 'replay started' });
}

export interface Fleet {
  /** The work directory the fleet's files are in. */
  readonly work: string;
  readonly redis: RedisServer;
  readonly nodes: readonly RunningNode[];
  readonly gateways: Readonly<Record<RoutingPolicy, RunningServer>>;
  readonly hono: RunningServer;
  /** API keys in plaintext, per tier. */
  readonly keys: Readonly<Record<TierName, string>>;
  /** The config files, for the JSON report. */
  readonly gatewayConfigs: Readonly<Record<RoutingPolicy, unknown>>;
  close(): Promise<void>;
}

export async function startFleet(work: string, shape: FleetShape, log: (message: string) => void): Promise<Fleet> {
  const stack = new ProcessStack();
  try {
    const redis = await startRedisServer();
    stack.push(redis);
    log(`redis-server on port ${redis.port}`);

    const repos = await Promise.all([1, 2, 3, 4].map((i) => writeNodeRepository(work, i, shape)));
    const nodes = await launchFleetNodes(stack, repos, redis.url);
    for (const [i, node] of nodes.entries()) {
      await waitForModelReady(node.httpBase, WORK_MODEL);
      if (i === 0) await waitForModelReady(node.httpBase, SIMPLE_MODEL);
      if (i < 2) await waitForModelReady(node.httpBase, STEADY_MODEL);
    }
    log(`4 nodes ready (HTTP ports ${nodes.map((n) => n.httpPort).join(', ')})`);

    const credentials = Object.fromEntries(TIERS.map((t) => [t, benchKey(t)])) as Record<TierName, { key: string; hash: string }>;
    const keys = Object.fromEntries(TIERS.map((t) => [t, credentials[t].key])) as Record<TierName, string>;
    const hashes = Object.fromEntries(TIERS.map((t) => [t, credentials[t].hash])) as Record<TierName, string>;
    const gatewayConfigs = {} as Record<RoutingPolicy, unknown>;
    const gateways = {} as Record<RoutingPolicy, RunningServer>;
    for (const policy of ['p2c', 'round-robin'] as const) {
      const config = gatewayConfig(redis.url, policy, hashes);
      gatewayConfigs[policy] = config;
      const gateway = await launchGateway(stack, work, `gateway-${policy}.json`, `tessera-gateway (${policy})`, config);
      gateways[policy] = gateway;
      await waitForFleetSize(`http://${FLEET_HOST}:${gateway.port}/metrics`, nodes.length);
      log(`gateway (${policy}) on port ${gateway.port} sees ${nodes.length} nodes`);
    }

    const scriptPath = join(work, 'hono-hello.mjs');
    await writeFile(scriptPath, honoScript());
    const hono = await launchServer({ name: 'bare hono', args: [scriptPath], startedMsg: 'hono started' });
    stack.push(hono);
    log(`bare Hono hello-world on port ${hono.port}`);

    return { work, redis, nodes, gateways, hono, keys, gatewayConfigs, close: () => stack.close() };
  } catch (error) {
    await stack.close();
    throw error;
  }
}
