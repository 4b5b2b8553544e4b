/**
 * Starting and stopping a bench fleet on loopback, as small-fleet.ts (cache, fault and soak
 * scenarios) and gateway-fleet.ts (the gateway scenario) both do: a private redis-server, nodes
 * reporting to it (`tessera-node --redis-url`), gateways reading the fleet from it, each a child
 * process; bench API keys; and the gateway's view of the fleet.
 */
import { createHash, randomBytes } from 'node:crypto';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { launchNode, type RunningNode } from '../lib/processes/node-process.js';
import { scrapeMetrics, selectSamples } from '../lib/sampling/prom-text.js';
import { launchServer, type RunningServer } from '../lib/processes/server-process.js';
import { sleep } from '../lib/load/load-window.js';

export const FLEET_HOST = '127.0.0.1';
const GATEWAY_BIN = fileURLToPath(new URL('../../../bin/tessera-gateway.js', import.meta.url));

/**
 * A tier's override that keeps rate limits running on every request (one Redis script, as in
 * production) with a limit far above any rate a bench offers: the benches measure admission, not quotas.
 */
export const UNLIMITED_TIER = {
  rateLimits: { requestsPerSecond: 1_000_000, burst: 1_000_000, elementsPerSecond: 0, elementsBurst: 0, bytesPerSecond: 0, bytesBurst: 0 },
};

/** What a fleet started, stopped in reverse order: gateways before nodes before Redis, so nothing logs the others' disappearance. */
export class ProcessStack {
  private readonly started: { stop(): Promise<void> }[] = [];

  push(...processes: { stop(): Promise<void> }[]): void {
    this.started.push(...processes);
  }

  async close(): Promise<void> {
    for (const process of this.started.reverse()) await process.stop().catch(() => undefined);
    this.started.length = 0;
  }
}

/** A fresh bench API key (plaintext, `tsk_bench_[label_]<hex>`) and its sha256 hex, as the gateway config holds it. */
export function benchKey(label?: string): { key: string; hash: string } {
  const key = `tsk_bench_${label === undefined ? '' : `${label}_`}${randomBytes(12).toString('hex')}`;
  return { key, hash: createHash('sha256').update(key).digest('hex') };
}

/**
 * Starts one node per repository together (each takes seconds to load its models; the machine is
 * otherwise idle), node i reporting to Redis as `bench-node<i+1>`. Every node that started is on
 * `stack` before a failure is thrown.
 */
export async function launchFleetNodes(stack: ProcessStack, repositories: readonly string[], redisUrl: string): Promise<RunningNode[]> {
  const launched = await Promise.allSettled(
    repositories.map((repository, i) =>
      launchNode({
        modelRepository: repository,
        extraArgs: ['--redis-url', redisUrl, '--node-id', fleetNodeId(i), '--advertise-host', FLEET_HOST],
      }),
    ),
  );
  const nodes = launched.flatMap((r) => (r.status === 'fulfilled' ? [r.value] : []));
  stack.push(...nodes);
  const failed = launched.find((r): r is PromiseRejectedResult => r.status === 'rejected');
  if (failed !== undefined) throw failed.reason;
  return nodes;
}

/** The id of the i-th node (from 0) in load reports. */
export function fleetNodeId(index: number): string {
  return `bench-node${index + 1}`;
}

/** Writes `config` to `work/fileName` and starts a gateway on it (port chosen by the OS), on `stack`. */
export async function launchGateway(stack: ProcessStack, work: string, fileName: string, name: string, config: unknown): Promise<RunningServer> {
  const file = join(work, fileName);
  await writeFile(file, `${JSON.stringify(config, null, 2)}\n`);
  const gateway = await launchServer({
    name,
    args: [GATEWAY_BIN, '--config', file, '--port', '0', '--host', FLEET_HOST],
    startedMsg: 'tessera-gateway started',
    // The config names Redis; an inherited REDIS_URL would override it.
    env: { REDIS_URL: '' },
  });
  stack.push(gateway);
  return gateway;
}

/** Waits until the gateway's `tessera_gateway_fleet_nodes` reads `count` (exactly, when `exact`); resolves with it. */
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
