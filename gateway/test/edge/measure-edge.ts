/**
 * Measures the edge options on loopback (NOT a test; run by hand, numbers go to docs/edge.md):
 *   node --import tsx gateway/test/edge/measure-edge.ts [requests=300] [concurrency=16]
 * One real node (`simple`), a Node gateway (gRPC to the node), the edge Worker in direct mode
 * (AdmissionDO + KServe HTTP to the node) and in two-tier mode (Worker → Node gateway), all in local
 * workerd. Prints sequential latency (p50/p95) and throughput at a concurrency, uncached (no-store),
 * and the latency of an edge cache HIT. Loopback and local workerd: it compares the hops and the
 * work per request, not Cloudflare's network.
 */
import { silentLogger } from '../../../shared/src/logging/index.js';
import { startNodeProcess } from '../support/test-node-process.js';
import { loadGatewayConfig } from '../../src/config/index.js';
import { sha256Hex } from '../../src/core/auth/index.js';
import { startGateway } from '../../src/entry-node.js';
import { loadReport, startEdgeWorker } from './edge-harness.js';

const KEY = 'tsk_measure';
const total = Number(process.argv[2] ?? 300);
const concurrency = Number(process.argv[3] ?? 16);
let offset = 0;
const body = (): string =>
  JSON.stringify({
    inputs: [
      { name: 'INPUT0', datatype: 'INT32', shape: [1, 16], data: Array.from({ length: 16 }, (_, i) => i + offset++) },
      { name: 'INPUT1', datatype: 'INT32', shape: [1, 16], data: Array.from({ length: 16 }, () => 1) },
    ],
  });

async function one(url: string, cache = 'no-store', fixed?: string): Promise<number> {
  const started = performance.now();
  const res = await fetch(`${url}/v2/models/simple/versions/1/infer`, {
    method: 'POST',
    body: fixed ?? body(),
    headers: { authorization: `Bearer ${KEY}`, 'cache-control': cache },
  });
  const text = new TextDecoder().decode(await res.arrayBuffer());
  if (res.status !== 200) console.error(text.slice(0, 300));
  if (res.status !== 200) throw new Error(`HTTP ${res.status} from ${url}`);
  return performance.now() - started;
}

const pct = (xs: number[], p: number): number => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor((p / 100) * xs.length))]!;

async function measure(name: string, url: string): Promise<void> {
  for (let i = 0; i < 30; i++) await one(url); // warm-up
  const seq: number[] = [];
  for (let i = 0; i < total; i++) seq.push(await one(url));
  const started = performance.now();
  let left = total;
  await Promise.all(Array.from({ length: concurrency }, async () => {
    while (left-- > 0) await one(url);
  }));
  const rps = total / ((performance.now() - started) / 1000);
  console.log(`${name.padEnd(22)} p50 ${pct(seq, 50).toFixed(2)} ms  p95 ${pct(seq, 95).toFixed(2)} ms  ${rps.toFixed(0)} req/s @${concurrency}`);
}

const node = await startNodeProcess();
const configText = JSON.stringify({
  tiers: { standard: { rateLimits: { requestsPerSecond: 0, burst: 1, elementsPerSecond: 0, elementsBurst: 0 } } },
  tenants: [{ id: 'm', tier: 'standard', keys: [{ id: 'm-1', hash: await sha256Hex(KEY) }] }],
  cache: { models: { simple: { enabled: true } } },
});
const gateway = await startGateway({
  config: loadGatewayConfig(configText),
  redisUrl: null,
  nodes: [{ id: 'n1', grpc: node.grpcAddress, http: null }],
  port: 0,
  host: '127.0.0.1',
  logger: silentLogger,
});
const direct = await startEdgeWorker({ GATEWAY_CONFIG: configText, TESSERA_FLEET_TOKEN: 'f' });
const pushed = await fetch(`${direct.url}/admin/fleet/report`, {
  method: 'POST',
  headers: { authorization: 'Bearer f' },
  body: JSON.stringify(loadReport('n1', node.httpPort, [{ name: 'simple', capacity: 64 }])),
});
if (pushed.status !== 204) throw new Error(`report push: HTTP ${pushed.status} ${await pushed.text()}`);
try {
  await measure('node gateway (gRPC)', gateway.url);
  await measure('edge direct (DO+HTTP)', direct.url);
  const fixed = body();
  await one(direct.url, '', fixed);
  const hits: number[] = [];
  for (let i = 0; i < total; i++) hits.push(await one(direct.url, '', fixed));
  console.log(`${'edge cache HIT (KV)'.padEnd(22)} p50 ${pct(hits, 50).toFixed(2)} ms  p95 ${pct(hits, 95).toFixed(2)} ms`);
  // One local Worker of this name at a time: wrangler's dev registry shares Durable Objects by name.
  await direct.stop();
  const twoTier = await startEdgeWorker({ GATEWAY_CONFIG: configText, UPSTREAM_GATEWAYS: gateway.url, UPSTREAM_API_KEY: KEY });
  await measure('edge two-tier', twoTier.url);
  await twoTier.stop();
} finally {
  await gateway.close({ graceMs: 500 });
  await node.stop();
}
