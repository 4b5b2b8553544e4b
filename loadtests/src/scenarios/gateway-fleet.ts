/**
 * The processes of `npm run bench -- gateway`, all on loopback:
 *
 *   redis-server (private, no persistence)     the gateway's stores and the fleet's load reports
 *   node 1..4 (tessera-node, --redis-url)      node 1 also serves `simple`; nodes 1 and 2 serve `steady`;
 *                                              all four serve `work`, node 4 three times slower
 *   gateway p2c, gateway round-robin           the same config but `routing.policy`
 *   bare Hono hello-world                      the yardstick for cache-hit throughput
 *
 * `work` and `steady` are typescript-backend models written here: execute() sleeps a fixed time per
 * batch and echoes its input, so a node's service time is known and costs no CPU (the machine runs
 * the load generator, the gateway and the nodes together; `simple` is too fast to saturate a node).
 * Without batching (max_batch_size 0), a node's capacity is instances / service time.
 */
import { createHash, randomBytes } from 'node:crypto';
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ESM_PACKAGE_JSON, configText, writeExampleRepository } from '../../../gpu-node/src/example-models/index.js';
import { startRedisServer, type RedisServer } from '../../../shared/src/testing/index.js';
import { launchNode, waitForModelReady, type RunningNode } from '../lib/node-process.js';
import { scrapeMetrics, selectSamples } from '../lib/prom-text.js';
import { launchServer, type RunningServer } from '../lib/server-process.js';

export const SIMPLE_MODEL = 'simple';
/** Served by all four nodes, node 4 slower: the routing comparison. */
export const WORK_MODEL = 'work';
/** Served by nodes 1 and 2 at the same speed: the overload test. */
export const STEADY_MODEL = 'steady';
export const SLEEP_INPUT = 'INPUT0';
export const SLEEP_OUTPUT = 'OUTPUT0';
export const SLEEP_ELEMENTS = 4;

export const TIERS = ['premium', 'standard', 'free'] as const;
export type TierName = (typeof TIERS)[number];
export type RoutingPolicy = 'p2c' | 'round-robin';

const GATEWAY_BIN = fileURLToPath(new URL('../../../bin/tessera-gateway.js', import.meta.url));

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

/** The model module: sleeps `delay_ms` per batch, then echoes INPUT0 as OUTPUT0. */
const SLEEP_MODEL_SOURCE = `// Written by loadtests/src/scenarios/gateway-fleet.ts: a model with a known service time.
let delayMs = 0;
export function initialize(args) {
  delayMs = Number(args.parameters.delay_ms ?? '0');
}
export async function execute(requests) {
  await new Promise((resolve) => setTimeout(resolve, delayMs));
  return requests.map((request) => {
    const input = request.inputs.${SLEEP_INPUT};
    return { outputs: { ${SLEEP_OUTPUT}: { datatype: 'FP32', shape: [...input.shape], data: input.data } } };
  });
}
`;

async function writeSleepModel(repo: string, name: string, delayMs: number, instances: number): Promise<void> {
  const config = configText({
    name,
    backend: 'typescript',
    defaultModelFilename: 'model.js',
    maxBatchSize: 0,
    inputs: [{ name: SLEEP_INPUT, dataType: 'TYPE_FP32', dims: [SLEEP_ELEMENTS] }],
    outputs: [{ name: SLEEP_OUTPUT, dataType: 'TYPE_FP32', dims: [SLEEP_ELEMENTS] }],
    instanceGroups: [{ count: instances, kind: 'KIND_CPU' }],
    parameters: { delay_ms: String(delayMs) },
  });
  await mkdir(join(repo, name, '1'), { recursive: true });
  await writeFile(join(repo, name, 'config.pbtxt'), config);
  await writeFile(join(repo, name, '1', 'model.js'), SLEEP_MODEL_SOURCE);
  await writeFile(join(repo, name, '1', 'package.json'), ESM_PACKAGE_JSON);
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
  // The token bucket is still consulted on every request (one Redis script), as in production, but
  // with a limit far above any rate the bench offers: the bench measures admission, not quotas.
  const unlimited = { rateLimits: { requestsPerSecond: 1_000_000, burst: 1_000_000, elementsPerSecond: 0, elementsBurst: 0 } };
  return {
    host: '127.0.0.1',
    redisUrl,
    tiers: { premium: unlimited, standard: unlimited, free: unlimited },
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

export interface Fleet {
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

/** Waits until the gateway's fleet view holds `count` nodes (its `tessera_gateway_fleet_nodes`). */
async function waitForFleet(gatewayPort: number, count: number, timeoutMs = 30_000): Promise<void> {
  const deadline = performance.now() + timeoutMs;
  let seen = -1;
  while (performance.now() < deadline) {
    const samples = await scrapeMetrics(`http://127.0.0.1:${gatewayPort}/metrics`);
    seen = selectSamples(samples, 'tessera_gateway_fleet_nodes')[0]?.value ?? -1;
    if (seen >= count) return;
    await new Promise((r) => setTimeout(r, 200));
  }
  throw new Error(`the gateway saw ${seen} of ${count} nodes after ${timeoutMs} ms`);
}

export async function startFleet(work: string, shape: FleetShape, log: (message: string) => void): Promise<Fleet> {
  const started: { stop(): Promise<void> }[] = [];
  const closeAll = async (): Promise<void> => {
    // In reverse: gateways before nodes before Redis, so nothing logs the others' disappearance.
    for (const server of started.reverse()) await server.stop().catch(() => undefined);
    started.length = 0;
  };
  try {
    const redis = await startRedisServer();
    started.push(redis);
    log(`redis-server on port ${redis.port}`);

    const nodes: RunningNode[] = [];
    const repos = await Promise.all([1, 2, 3, 4].map((i) => writeNodeRepository(work, i, shape)));
    // Started together: each node takes seconds to load its models, the machine is otherwise idle.
    const launched = await Promise.allSettled(
      repos.map((repo, i) =>
        launchNode({
          modelRepository: repo,
          extraArgs: ['--redis-url', redis.url, '--node-id', `bench-node${i + 1}`, '--advertise-host', '127.0.0.1'],
        }),
      ),
    );
    for (const result of launched) if (result.status === 'fulfilled') nodes.push(result.value);
    started.push(...nodes);
    const failed = launched.find((r): r is PromiseRejectedResult => r.status === 'rejected');
    if (failed !== undefined) throw failed.reason;
    for (const [i, node] of nodes.entries()) {
      await waitForModelReady(node.httpBase, WORK_MODEL);
      if (i === 0) await waitForModelReady(node.httpBase, SIMPLE_MODEL);
      if (i < 2) await waitForModelReady(node.httpBase, STEADY_MODEL);
    }
    log(`4 nodes ready (HTTP ports ${nodes.map((n) => n.httpPort).join(', ')})`);

    const keys = Object.fromEntries(TIERS.map((t) => [t, `tsk_bench_${t}_${randomBytes(12).toString('hex')}`])) as Record<TierName, string>;
    const hashes = Object.fromEntries(TIERS.map((t) => [t, createHash('sha256').update(keys[t]).digest('hex')])) as Record<TierName, string>;
    const gatewayConfigs = {} as Record<RoutingPolicy, unknown>;
    const gateways = {} as Record<RoutingPolicy, RunningServer>;
    for (const policy of ['p2c', 'round-robin'] as const) {
      const config = gatewayConfig(redis.url, policy, hashes);
      const file = join(work, `gateway-${policy}.json`);
      await writeFile(file, `${JSON.stringify(config, null, 2)}\n`);
      gatewayConfigs[policy] = config;
      const gateway = await launchServer({
        name: `tessera-gateway (${policy})`,
        args: [GATEWAY_BIN, '--config', file, '--port', '0', '--host', '127.0.0.1'],
        startedMsg: 'tessera-gateway started',
        // The config names Redis; an inherited REDIS_URL would override it.
        env: { REDIS_URL: '' },
      });
      started.push(gateway);
      gateways[policy] = gateway;
      await waitForFleet(gateway.port, nodes.length);
      log(`gateway (${policy}) on port ${gateway.port} sees ${nodes.length} nodes`);
    }

    const scriptPath = join(work, 'hono-hello.mjs');
    await writeFile(scriptPath, honoScript());
    const hono = await launchServer({ name: 'bare hono', args: [scriptPath], startedMsg: 'hono started' });
    started.push(hono);
    log(`bare Hono hello-world on port ${hono.port}`);

    return { redis, nodes, gateways, hono, keys, gatewayConfigs, close: closeAll };
  } catch (error) {
    await closeAll();
    throw error;
  }
}
