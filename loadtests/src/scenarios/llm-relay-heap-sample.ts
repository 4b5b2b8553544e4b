/**
 * Bytes the gateway allocates per streamed token (issue 20), load-independent: one process holds the
 * gateway's streaming path as it runs in production (the node's answer over HTTP/2 through
 * `createLlmH2Upstream`, an `SseRelay` built as llm-forward.ts builds it, metered with the real cl100k
 * counter and a `CompletionMeter` on the Redis limiter with leases, written by `relayToResponse` into a
 * node:http response), and samples its heap allocations (V8's sampling heap profiler, objects later
 * collected included) over a fixed number of streams after a warm-up. The node's route and the clients
 * run in a worker thread (llm-relay-heap-sample-peer.ts): their allocations are another isolate's.
 * Prints bytes per token in all and by function, top 40. Redis runs on HEAP_SAMPLE_REDIS_PORT (default 47990).
 *
 *   node --import tsx loadtests/src/scenarios/llm-relay-heap-sample.ts [STREAMS=384] [CONCURRENCY=64] [OUT.txt]
 */
import { spawn } from 'node:child_process';
import { writeFile } from 'node:fs/promises';
import { createServer } from 'node:http';
import { Session } from 'node:inspector/promises';
import { Redis } from 'ioredis';
import { createRedisRateLimiter } from '../../../gateway/src/adapters/redis/redis-rate-limiter.js';
import { createPromMetrics } from '../../../gateway/src/adapters/metrics/prom-metrics.js';
import { createLlmH2Upstream } from '../../../gateway/src/adapters/node-http/llm-h2-upstream.js';
import { relayToResponse } from '../../../gateway/src/adapters/node-http/relay-to-response.js';
import type { AuthContext } from '../../../gateway/src/core/auth/index.js';
import { countPiece, countPieceBytes } from '../../../gateway/src/core/llm/piece-count.js';
import { SseRelay } from '../../../gateway/src/core/llm/sse-relay.js';
import { CompletionMeter, tokenLimitError } from '../../../gateway/src/core/llm/token-budget.js';
import type { NodeView, Tier } from '../../../gateway/src/core/ports/index.js';
import { loadTokenCounter } from '../../../shared/src/llm/token-counter.js';
import { silentLogger } from '../../../shared/src/logging/index.js';
import { startModuleWorker } from '../../../shared/src/workers/index.js';

interface ProfileNode {
  callFrame: { functionName: string; url: string; lineNumber: number };
  selfSize: number;
  children: ProfileNode[];
}

const streams = Number(process.argv[2] ?? 384);
const concurrency = Number(process.argv[3] ?? 64);
const out = process.argv[4];
const TOKENS = 64;
const ITL_MS = 20;
const redisPort = Number(process.env.HEAP_SAMPLE_REDIS_PORT ?? 47990);

const redisServer = spawn('redis-server', ['--port', String(redisPort), '--save', '', '--appendonly', 'no'], { stdio: 'ignore' });
const redis = new Redis({ port: redisPort, host: '127.0.0.1', retryStrategy: (times) => (times > 50 ? null : 100) });
await redis.ping();

const counter = await loadTokenCounter('cl100k_base');
const metrics = createPromMetrics({ processMetrics: false });
// As the gateway's default config: 100 ms leases kept warm.
const limiter = createRedisRateLimiter({ redis, logger: silentLogger, leaseMs: 100 });
const tier = { name: 'bench', llm: { tokensPerMinute: 1_000_000_000, cacheCompletions: false } } as unknown as Tier;
const auth = { tenant: { id: 'bench', name: 'bench', tier: 'bench' }, tier, keyId: 'k' } as unknown as AuthContext;
const upstream = createLlmH2Upstream({ fallback: { send: () => Promise.reject(new Error('no HTTP/1.1 here')) } });
/** The node's HTTP/2 address, known once the peer listens (before any request comes). */
const target: { node?: NodeView } = {};

const server = createServer((incoming, outgoing) => {
  incoming.resume();
  const client = new AbortController();
  outgoing.once('close', () => {
    if (!outgoing.writableFinished) client.abort();
  });
  void upstream
    .send(target.node!, { method: 'POST', path: '/v1/completions', body: Buffer.from('{}'), headers: { 'content-type': 'application/json' }, signal: client.signal, headersTimeoutMs: 10_000 })
    .then((response) => {
      const meter = new CompletionMeter(limiter, metrics, auth, 'llm_engine');
      const relay = new SseRelay({
        format: 'openai',
        countTokens: (text) => countPiece(counter, text),
        countUtf8: (bytes, from, to) => countPieceBytes(counter, bytes, from, to),
        meter,
        overBudgetError: (retryAfterMs) => tokenLimitError(auth, 'llm_engine', meter.total, retryAfterMs),
        abortUpstream: () => client.abort(),
        onEnd: () => undefined,
      });
      relayToResponse(response.body, relay, outgoing, { 'Content-Type': 'text/event-stream', 'Cache-Control': 'no-cache' });
    });
});
await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
const relayPort = (server.address() as { port: number }).port;

const peer = startModuleWorker(new URL('./llm-relay-heap-sample-peer.ts', import.meta.url), { relayPort, concurrency, tokens: TOKENS, itlMs: ITL_MS });
const h2Port = await new Promise<number>((resolve) => peer.once('message', (m: { h2Port: number }) => resolve(m.h2Port)));
target.node = { id: 'n1', httpAddress: null, grpcAddress: null, llmH2Address: `127.0.0.1:${h2Port}`, draining: false, models: new Map(), localInflight: 0 };
const run = (n: number): Promise<number> => new Promise((resolve) => {
  peer.once('message', (m: { done: number }) => resolve(m.done));
  peer.postMessage(n);
});

await run(concurrency * 2);
const session = new Session();
session.connect();
await session.post('HeapProfiler.startSampling', { samplingInterval: 256, includeObjectsCollectedByMajorGC: true, includeObjectsCollectedByMinorGC: true });
const tokens = await run(streams);
const { profile } = (await session.post('HeapProfiler.stopSampling')) as { profile: { head: ProfileNode } };
session.disconnect();

const bySite = new Map<string, number>();
let total = 0;
const walk = (n: ProfileNode): void => {
  const { functionName, url, lineNumber } = n.callFrame;
  const site = `${functionName || '(anon)'} ${url.replace(/^file:\/\/.*?\/(gateway|shared|loadtests)\//, '$1/')}:${lineNumber + 1}`;
  bySite.set(site, (bySite.get(site) ?? 0) + n.selfSize);
  total += n.selfSize;
  for (const child of n.children) walk(child);
};
walk(profile.head);
const lines = [
  `${streams} streams of ${TOKENS} tokens at concurrency ${concurrency} (${tokens} tokens), relay path in one isolate, peers in a worker, ${process.version}`,
  `total sampled ${total} bytes: ${(total / tokens).toFixed(0)} B/token`,
  ...[...bySite].sort((a, b) => b[1] - a[1]).slice(0, 40).map(([site, bytes]) => `${(bytes / tokens).toFixed(1).padStart(8)} B/token  ${site}`),
];
console.log(lines.join('\n'));
if (out !== undefined) await writeFile(out, `${lines.join('\n')}\n`);
peer.postMessage(0);
upstream.close();
server.close();
redis.disconnect();
redisServer.kill('SIGTERM');
process.exit(0);
