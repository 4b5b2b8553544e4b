/**
 * `npm run bench -- llm-idle`: a burst of streamed completions after an idle spell (issue 20).
 *
 * After a pause longer than the rate-limit lease (100 ms), a gateway whose leases expired decides each
 * tenant's first requests in Redis; the llm bench saw bursts of starts wait 20-250 ms for that on a busy
 * core 1. Two gateways on core 0 share one Redis, node and engine double (core 1): one renews its
 * leases ahead of time (`rateLimitKeepWarmMs` default), the other lets them expire (0). Each round:
 * an IDLE_MS pause, then a burst of `--concurrency` (default 16) short streams to one target at once;
 * targets in turn (direct, warm gateway, cold gateway), ROUNDS rounds, each target once as is and once
 * with Redis answering STALL_MS late (SIGSTOP at the burst's start, SIGCONT after STALL_MS: the Redis
 * on a saturated core that the llm bench's bursts waited for). Measured: TTFT of every stream, and
 * (Redis MONITOR) the scripts run while each burst was out: token-bucket decisions, lease renewals
 * (token-bucket with N = 0, in the background) and API-key lookups (find-key).
 */
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { startRedisServer } from '../../../shared/test/support/index.js';
import { runStreamLoad } from '../lib/clients/sse-stream-client.js';
import type { BenchOptions } from '../lib/options/bench-options.js';
import { DEFAULT_RESULTS_ROOT, localDate } from '../lib/output/results-files.js';
import { formatTable } from '../lib/output/text-table.js';
import { perCoreSupport, pinProcess } from '../lib/per-core/index.js';
import { launchEngineDouble, engineModelConfig } from '../lib/processes/llm-bench-servers.js';
import { launchNode, waitForModelReady } from '../lib/processes/node-process.js';
import { summarizeLatencies, type LatencySummary } from '../lib/sampling/percentiles.js';
import { benchKey, ProcessStack, waitForFleetSize } from './fleet-launch.js';
import { launchLlmBenchGateway } from './llm-bench-gateway.js';

const IDLE_MS = 1000;
const ROUNDS = 12;
const DEFAULT_BURST = 16;
const TOKENS_PER_STREAM = 4;
const STALL_MS = 50;

const log = (message: string): void => void process.stderr.write(`[bench llm-idle] ${message}\n`);

type Target = 'direct' | 'gateway-warm' | 'gateway-cold' | 'direct-stall' | 'gateway-warm-stall' | 'gateway-cold-stall';

interface ScriptCounts {
  decisions: number;
  /** Decisions by rate-limit key (diagnostics: which bucket went to Redis). */
  byKey?: Record<string, number>;
  renewals: number;
  keyLookups: number;
}

/** Counts the gateway scripts Redis runs, from MONITOR: the rate-limit key is `...{tenant:<t>}:ratelimit`, the key lookup's `...{tenants}:...`. */
async function countScripts(redis: Redis): Promise<{ counts: ScriptCounts; stop(): void }> {
  const counts: ScriptCounts = { decisions: 0, renewals: 0, keyLookups: 0, byKey: {} };
  const monitor = await redis.monitor();
  monitor.on('monitor', (_time: string, args: string[]) => {
    if (args[0]?.toLowerCase() !== 'evalsha') return;
    const key = args[3] ?? '';
    if (key.endsWith(':ratelimit')) {
      if (args[4] === '0') counts.renewals += 1;
      else {
        counts.decisions += 1;
        counts.byKey![key] = (counts.byKey![key] ?? 0) + 1;
      }
    } else if (key.includes('{tenants}')) counts.keyLookups += 1;
  });
  return { counts, stop: () => void monitor.disconnect() };
}

export async function runLlmIdleBurstScenario(options: BenchOptions): Promise<number> {
  const burst = options.concurrencies?.[0] ?? DEFAULT_BURST;
  const support = perCoreSupport();
  if (!support.ok) log(`not pinned: ${support.why}`);
  if (support.ok) pinProcess(process.pid, 1);
  const work = await mkdtemp(join(tmpdir(), 'tessera-bench-llm-idle-'));
  const stack = new ProcessStack();
  const started = new Date();
  try {
    const redisServer = await startRedisServer();
    stack.push(redisServer);
    const redis = new Redis(redisServer.url);
    stack.push({ stop: async () => void redis.disconnect() });
    const engine = await launchEngineDouble(work, 20);
    stack.push(engine);
    const repo = join(work, 'repo');
    await mkdir(join(repo, 'llm_engine', '1'), { recursive: true });
    await writeFile(join(repo, 'llm_engine', 'config.pbtxt'), engineModelConfig(`http://127.0.0.1:${engine.port}/v1`, 2 * burst + 8));
    const node = await launchNode({ modelRepository: repo, extraArgs: ['--redis-url', redisServer.url, '--node-id', 'llm-idle-node', '--advertise-host', '127.0.0.1'] });
    stack.push(node);
    await waitForModelReady(node.httpBase, 'llm_engine');
    const { key, hash } = benchKey('llm');
    const warm = await launchLlmBenchGateway({ work, name: 'warm', redisUrl: redisServer.url, keyHash: hash });
    stack.push(warm);
    const cold = await launchLlmBenchGateway({ work, name: 'cold', redisUrl: redisServer.url, keyHash: hash, keepWarmMs: 0 });
    stack.push(cold);
    for (const g of [warm, cold]) {
      await waitForFleetSize(`http://127.0.0.1:${g.port}/metrics`, 1);
      if (support.ok) pinProcess(g.pid, 0);
    }
    const auth = { authorization: `Bearer ${key}` };
    const body = JSON.stringify({ model: 'llm_engine', prompt: 'tell me a story about a gateway', stream: true, max_tokens: TOKENS_PER_STREAM });
    const redisPid = Number(/process_id:(\d+)/.exec(await redis.info('server'))![1]);
    const targets: { target: Target; port: number; headers: Record<string, string>; gateway: boolean; stall: boolean }[] = [];
    for (const stall of [false, true]) {
      const suffix = stall ? '-stall' : '';
      targets.push(
        { target: `direct${suffix}` as Target, port: node.httpPort, headers: {}, gateway: false, stall },
        { target: `gateway-warm${suffix}` as Target, port: warm.port, headers: auth, gateway: true, stall },
        { target: `gateway-cold${suffix}` as Target, port: cold.port, headers: auth, gateway: true, stall },
      );
    }
    log('warm-up');
    for (const t of targets) await runStreamLoad({ port: t.port, path: '/v1/completions', body, headers: t.headers, concurrency: 4, durationMs: 500 });

    const ttft = new Map<Target, number[]>(targets.map((t) => [t.target, []]));
    const scripts = await countScripts(redis);
    stack.push({ stop: async () => scripts.stop() });
    const perTarget = new Map<Target, ScriptCounts>(targets.map((t) => [t.target, { decisions: 0, renewals: 0, keyLookups: 0, byKey: {} }]));
    let failed = 0;
    for (let round = 0; round < ROUNDS; round++) {
      for (const t of targets) {
        await new Promise((resolve) => setTimeout(resolve, IDLE_MS));
        let resumed: Promise<void> = Promise.resolve();
        if (t.stall) {
          process.kill(redisPid, 'SIGSTOP');
          resumed = new Promise((resolve) => setTimeout(() => resolve(process.kill(redisPid, 'SIGCONT') && undefined), STALL_MS));
        }
        const before = { ...scripts.counts, byKey: { ...scripts.counts.byKey } };
        // Every client sends exactly one stream, all at once.
        const result = await runStreamLoad({ port: t.port, path: '/v1/completions', body, headers: t.headers, concurrency: burst, durationMs: 60_000, streamsPerClient: 1 });
        await resumed;
        const sums = perTarget.get(t.target)!;
        sums.decisions += scripts.counts.decisions - before.decisions;
        sums.renewals += scripts.counts.renewals - before.renewals;
        sums.keyLookups += scripts.counts.keyLookups - before.keyLookups;
        for (const [k, n] of Object.entries(scripts.counts.byKey!)) sums.byKey![k] = (sums.byKey![k] ?? 0) + n - (before.byKey[k] ?? 0);
        ttft.get(t.target)!.push(...result.firstTtftUs);
        failed += result.failedStreams;
      }
      log(`round ${round + 1}/${ROUNDS}: ${targets.map((t) => `${t.target} p50 ${(summarizeLatencies(ttft.get(t.target)!).p50Us / 1000).toFixed(1)} ms`).join(', ')}`);
    }
    const summaries = new Map<Target, LatencySummary>(targets.map((t) => [t.target, summarizeLatencies(ttft.get(t.target)!)]));
    const ms = (us: number): string => (us / 1000).toFixed(2);
    const rows = targets.map((t) => {
      const s = summaries.get(t.target)!;
      const direct = summaries.get(t.stall ? 'direct-stall' : 'direct')!;
      const c = perTarget.get(t.target)!;
      const perBurst = (n: number): string => (n / ROUNDS).toFixed(1);
      return [t.target, String(s.count), ms(s.p50Us), ms(s.p90Us), ms(s.maxUs), t.gateway ? ms(s.p50Us - direct.p50Us) : '-', t.gateway ? ms(s.p90Us - direct.p90Us) : '-', perBurst(c.decisions), perBurst(c.keyLookups), perBurst(c.renewals)];
    });
    const text = [
      `LLM bursts after ${IDLE_MS} ms idle: ${burst} streams of ${TOKENS_PER_STREAM} tokens at once, ${ROUNDS} rounds per target (targets in turn)`,
      support.ok ? 'gateways alone on core 0 (one active at a time); node, engine double, Redis and load generator on core 1' : `NOT pinned: ${support.why}`,
      '',
      `-stall: Redis stopped for ${STALL_MS} ms from each burst's start; added = over direct in the same mode`,
      'per burst, what Redis ran meanwhile: rate-limit decisions and API-key lookups (on the request path), lease renewals (in the background; the warm gateway renews whether or not it is the target)',
      formatTable(['target', 'streams', 'TTFT p50 ms', 'p90 ms', 'max ms', 'added p50 ms', 'added p90 ms', 'decisions', 'key lookups', 'renewals'], rows),
      '',
    ].join('\n');
    process.stdout.write(text);
    const dir = join(options.outRoot ?? DEFAULT_RESULTS_ROOT, localDate(started));
    await mkdir(dir, { recursive: true });
    const json = { started: started.toISOString(), command: `npm run bench -- llm-idle ${process.argv.slice(3).join(' ')}`.trim(), pinned: support.ok, idleMs: IDLE_MS, rounds: ROUNDS, burst, stallMs: STALL_MS, failed, decisionsByKey: scripts.counts.byKey, targets: Object.fromEntries(summaries), redisScriptsPerBurst: Object.fromEntries([...perTarget].map(([t, c]) => [t, { decisions: c.decisions / ROUNDS, keyLookups: c.keyLookups / ROUNDS, renewals: c.renewals / ROUNDS, decisionsByKey: c.byKey }])) };
    await writeFile(join(dir, 'llm-idle.json'), `${JSON.stringify(json, null, 2)}\n`);
    await writeFile(join(dir, 'llm-idle.txt'), text);
    log(`results in ${dir}/llm-idle.{json,txt}`);
    return failed > 0 ? 1 : 0;
  } finally {
    await stack.close();
    await rm(work, { recursive: true, force: true });
  }
}
