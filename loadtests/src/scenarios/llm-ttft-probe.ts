/**
 * `npm run bench -- llm-ttft-probe`: the first-token latency the gateway adds at one stream, with
 * enough samples to tell a cost from noise (issue 20). The llm bench's 1-stream point has 6-7 streams
 * of 64 tokens in its window, so its TTFT p50 is the middle of a handful; here short streams (2 tokens)
 * go one at a time, alternating direct to the node and through the gateway (keep-alive connections on
 * both, as in the bench), so both see the same box. Same stack and pinning as `llm`.
 * LLM_TTFT_PROBE_PAIRS (default 150) sets the pairs; LLM_TTFT_PROBE_GAP_MS (default 0) idles between streams.
 * LLM_TTFT_PROBE_PROMPT_CHARS sends a prompt of about that many characters (default: a 31-character one).
 * LLM_TTFT_PROBE_GATEWAY_CORE=1 pins the gateway on core 1 with everything else (default 0: alone).
 * LLM_TTFT_PROBE_PROFILE_DIR=<dir> runs the gateway with --cpu-prof there; LLM_TTFT_PROBE_NODE_FLAGS adds
 * Node flags (space-separated, e.g. `--cpu-prof-interval 50`).
 * LLM_TTFT_PROBE_NODE_HTTP2=0 sends the gateway's node requests over HTTP/1.1 (config llm.nodeHttp2).
 * LLM_TTFT_PROBE_MARKS=1 loads llm-ttft-marks.mjs into the gateway and breaks each gateway stream's
 * first token down on one clock (request in -> node stream opened -> node headers -> node's first
 * data -> first write to the client), written to llm-ttft-marks.{json,txt}.
 */
import { Agent, request } from 'node:http';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { BenchOptions } from '../lib/options/bench-options.js';
import { DEFAULT_RESULTS_ROOT, localDate } from '../lib/output/results-files.js';
import { perCoreSupport, pinProcess } from '../lib/per-core/index.js';
import { readUserSys } from '../lib/processes/llm-floor-anchors.js';
import { summarizeLatencies } from '../lib/sampling/percentiles.js';
import { benchKey, ProcessStack, waitForFleetSize } from './fleet-launch.js';
import { launchLlmBenchGateway } from './llm-bench-gateway.js';
import { startLlmBenchUpstream } from './llm-bench-upstream.js';

const ITL_MS = 20;
const log = (message: string): void => void process.stderr.write(`[bench llm-ttft-probe] ${message}\n`);

const MARKS_SCRIPT = fileURLToPath(new URL('./llm-ttft-marks.mjs', import.meta.url));

/** Client-side hrtime (ns) of each gateway stream's start and first event, for the marks. */
const clientMarks: [number, number][] = [];

/** One stream: µs from the request's start to its first event. */
function firstEventUs(agent: Agent, port: number, headers: Record<string, string>, body: string, marks?: [number, number][]): Promise<number> {
  return new Promise((resolve, reject) => {
    const start = process.hrtime.bigint();
    let first: number | undefined;
    const req = request({ host: '127.0.0.1', port, method: 'POST', path: '/v1/completions', agent, headers: { 'content-type': 'application/json', ...headers } }, (res) => {
      if (res.statusCode !== 200) {
        res.resume();
        reject(new Error(`HTTP ${res.statusCode}`));
        return;
      }
      res.on('data', () => {
        if (first === undefined) {
          const at = process.hrtime.bigint();
          first = Number(at - start) / 1000;
          marks?.push([Number(start), Number(at)]);
        }
      });
      res.on('end', () => (first === undefined ? reject(new Error('no event')) : resolve(first)));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end(body);
  });
}

/** The probe's prompt: the short default, or about `chars` characters of English-like words (LLM_TTFT_PROBE_PROMPT_CHARS). */
function probePrompt(chars: number): string {
  if (!(chars > 0)) return 'tell me a story about a gateway';
  const words = ['the', 'gateway', 'relays', 'a', 'stream', 'of', 'tokens', 'from', 'its', 'node', 'to', 'the', 'client', 'and', 'meters', 'them'];
  const out: string[] = [];
  let length = 0;
  for (let i = 0; length < chars; i++) {
    out.push(words[i % words.length]!);
    length += words[i % words.length]!.length + 1;
  }
  return out.join(' ');
}

/**
 * Nanoseconds the process's main thread (its event loop) spent runnable but waiting for a CPU
 * (/proc/PID/task/PID/schedstat's second field): on a shared core, what the gateway's wake-ups wait
 * before it runs, which no code of its own can shorten.
 */
async function runQueueWaitNs(pid: number): Promise<number> {
  const fields = (await readFile(`/proc/${pid}/task/${pid}/schedstat`, 'utf8').catch(() => '0 0 0')).split(' ');
  return Number(fields[1] ?? 0);
}

export async function runLlmTtftProbeScenario(options: BenchOptions): Promise<number> {
  const pairs = Number(process.env.LLM_TTFT_PROBE_PAIRS ?? (options.quick ? 30 : 150));
  const gapMs = Number(process.env.LLM_TTFT_PROBE_GAP_MS ?? 0);
  // 1: the gateway shares core 1 with the node and the client (no cross-core wake-up on its path).
  const gatewayCore = Number(process.env.LLM_TTFT_PROBE_GATEWAY_CORE ?? 0);
  const support = perCoreSupport();
  if (support.ok) pinProcess(process.pid, 1);
  else log(`not pinned: ${support.why}`);
  const work = await mkdtemp(join(tmpdir(), 'tessera-bench-llm-ttft-'));
  const stack = new ProcessStack();
  const started = new Date();
  try {
    const { redisUrl, node } = await startLlmBenchUpstream(work, stack, 'llm-ttft-node', 8, ITL_MS);
    const { key, hash } = benchKey('llm');
    const withMarks = process.env.LLM_TTFT_PROBE_MARKS === '1';
    const marksFile = join(work, 'ttft-marks.json');
    if (withMarks) process.env.TTFT_MARKS_OUT = marksFile;
    const gateway = await launchLlmBenchGateway({
      work,
      name: 'ttft',
      redisUrl: redisUrl,
      keyHash: hash,
      ...(process.env.LLM_TTFT_PROBE_NODE_HTTP2 === '0' ? { nodeHttp2: false } : {}),
      nodeFlags: [...(withMarks ? ['--import', MARKS_SCRIPT] : []), ...(process.env.LLM_TTFT_PROBE_NODE_FLAGS ?? '').split(' ').filter((flag) => flag !== '')],
      ...(process.env.LLM_TTFT_PROBE_PROFILE_DIR === undefined ? {} : { profileDir: process.env.LLM_TTFT_PROBE_PROFILE_DIR }),
    });
    stack.push(gateway);
    await waitForFleetSize(`http://127.0.0.1:${gateway.port}/metrics`, 1);
    if (support.ok) pinProcess(gateway.pid, gatewayCore);
    const body = JSON.stringify({ model: 'llm_engine', prompt: probePrompt(Number(process.env.LLM_TTFT_PROBE_PROMPT_CHARS ?? 0)), stream: true, max_tokens: 2 });
    const targets = {
      direct: { port: node.httpPort, headers: {}, agent: new Agent({ keepAlive: true, maxSockets: 1 }), samples: [] as number[] },
      gateway: { port: gateway.port, headers: { authorization: `Bearer ${key}` }, agent: new Agent({ keepAlive: true, maxSockets: 1 }), samples: [] as number[] },
    };
    // Warm-up; a starved box can leave the node's load report stale for a moment (503 from the gateway).
    let warmFailures = 0;
    for (let i = 0; i < 10; i++) {
      for (const t of Object.values(targets)) {
        await firstEventUs(t.agent, t.port, t.headers, body).catch((error: unknown) => {
          if (++warmFailures > 20) throw error;
        });
      }
    }
    const diffs: number[] = [];
    let failedPairs = 0;
    const waitBefore = await runQueueWaitNs(gateway.pid);
    const cpuBefore = await readUserSys([gateway.pid]);
    for (let i = 0; i < pairs; i++) {
      const order = i % 2 === 0 ? (['direct', 'gateway'] as const) : (['gateway', 'direct'] as const);
      const got: Record<string, number> = {};
      try {
        for (const name of order) {
          const t = targets[name];
          got[name] = await firstEventUs(t.agent, t.port, t.headers, body, name === 'gateway' ? clientMarks : undefined);
          if (gapMs > 0) await new Promise((resolve) => setTimeout(resolve, gapMs));
        }
      } catch {
        failedPairs += 1; // left out whole, so both sides keep the same pairs
        continue;
      }
      targets.direct.samples.push(got.direct!);
      targets.gateway.samples.push(got.gateway!);
      diffs.push(got.gateway! - got.direct!);
    }
    const waitNs = (await runQueueWaitNs(gateway.pid)) - waitBefore;
    const cpuAfter = await readUserSys([gateway.pid]);
    const cpuUsPerStream = (cpuAfter.userUs + cpuAfter.sysUs - cpuBefore.userUs - cpuBefore.sysUs) / pairs;
    const runQueueUsPerStream = waitNs / 1000 / pairs;
    for (const t of Object.values(targets)) t.agent.destroy();
    const d = summarizeLatencies(targets.direct.samples);
    const g = summarizeLatencies(targets.gateway.samples);
    const pairDiff = summarizeLatencies(diffs.map((v) => Math.max(0, v)));
    const sortedDiffs = [...diffs].sort((a, b) => a - b);
    const medianDiff = sortedDiffs[sortedDiffs.length >> 1]!;
    const text = [
      `first-token latency at one stream, ${pairs} pairs (direct / gateway alternating, 2-token streams, ${gapMs} ms between streams, a ${JSON.parse(body).prompt.length}-character prompt)`,
      support.ok ? `gateway ${gatewayCore === 0 ? 'alone on core 0' : `on core ${gatewayCore}`}; node, engine double, Redis and this load generator on core 1` : `NOT pinned: ${support.why}`,
      `direct TTFT p50 / p90 / p99: ${(d.p50Us / 1000).toFixed(2)} / ${(d.p90Us / 1000).toFixed(2)} / ${(d.p99Us / 1000).toFixed(2)} ms`,
      `gateway TTFT p50 / p90 / p99: ${(g.p50Us / 1000).toFixed(2)} / ${(g.p90Us / 1000).toFixed(2)} / ${(g.p99Us / 1000).toFixed(2)} ms`,
      `added p50 (difference of p50s): ${((g.p50Us - d.p50Us) / 1000).toFixed(2)} ms; median of the pairs' differences: ${(medianDiff / 1000).toFixed(2)} ms`,
      `pairs where the gateway was slower: ${diffs.filter((v) => v > 0).length} of ${diffs.length} (${failedPairs} pairs failed, left out); positive differences p90 ${(pairDiff.p90Us / 1000).toFixed(2)} ms`,
      `gateway per gateway stream (its whole CPU over the window, idle included): CPU ${(cpuUsPerStream / 1000).toFixed(2)} ms; event loop waiting for core 0 (runnable, not running; schedstat) ${(runQueueUsPerStream / 1000).toFixed(2)} ms`,
      '',
    ].join('\n');
    process.stdout.write(text);
    const dir = join(options.outRoot ?? DEFAULT_RESULTS_ROOT, localDate(started));
    await mkdir(dir, { recursive: true });
    await writeFile(join(dir, 'llm-ttft-probe.json'), `${JSON.stringify({ started: started.toISOString(), pairs, gapMs, direct: d, gateway: g, failedPairs, medianDiffUs: medianDiff, gatewayCpuUsPerStream: cpuUsPerStream, gatewayRunQueueUsPerStream: runQueueUsPerStream, diffsUs: diffs }, null, 2)}\n`);
    await writeFile(join(dir, 'llm-ttft-probe.txt'), text);
    log(`results in ${dir}/llm-ttft-probe.{json,txt}`);
    if (withMarks) {
      await stack.close();
      const breakdown = await marksBreakdown(marksFile, clientMarks.slice(-diffs.length));
      process.stdout.write(breakdown.text);
      await writeFile(join(dir, 'llm-ttft-marks.json'), `${JSON.stringify({ steps: breakdown.rows, marks: breakdown.marks, client: clientMarks.slice(-diffs.length) })}\n`);
      await writeFile(join(dir, 'llm-ttft-marks.txt'), breakdown.text);
    }
    return 0;
  } finally {
    await stack.close();
    await rm(work, { recursive: true, force: true });
  }
}

/**
 * Pairs the gateway's marks (one per POST, in order) with the client's last streams and gives each
 * step's p50 in µs. The warm-up streams come first in both lists, so the tails line up.
 */
async function marksBreakdown(file: string, client: [number, number][]): Promise<{ text: string; rows: number[][]; marks: number[][] }> {
  const saved = JSON.parse(await readFile(file, 'utf8')) as { marks: number[][]; gcs: number[][]; costs?: number[][][] };
  const all = saved.marks;
  const marks = all.slice(-client.length);
  const steps = ['client send -> gateway request event', 'request event -> node stream opened', 'node stream opened -> node headers', 'node headers -> node first data', 'node first data -> first write to client', 'first write -> client first event'];
  const rows = marks.map((m, i) => {
    const [start, first] = client[i]!;
    const points = [start, m[0]!, m[1]!, m[2]!, m[3]!, m[4]!, first];
    return steps.map((_, k) => (points[k + 1]! - points[k]!) / 1000);
  });
  const lines: string[] = steps.map((name, k) => {
    const s = summarizeLatencies(rows.map((r) => Math.max(0, r[k]!)));
    return `${name}: p50 ${s.p50Us.toFixed(0)} µs, p90 ${s.p90Us.toFixed(0)} µs`;
  });
  // The gateway's own steps (request event .. first write): its CPU and its event loop's idle time in each.
  const costs = (saved.costs ?? []).slice(-client.length);
  if (costs.length === marks.length) {
    for (let k = 0; k < 4; k++) {
      const cpu = summarizeLatencies(costs.map((c) => Math.max(0, (c[k + 1]?.[0] ?? 0) - (c[k]?.[0] ?? 0))));
      const idle = summarizeLatencies(costs.map((c) => Math.max(0, (c[k + 1]?.[1] ?? 0) - (c[k]?.[1] ?? 0))));
      lines.push(`  ${steps[k + 1]}: gateway CPU p50 ${cpu.p50Us.toFixed(0)} µs, event loop idle p50 ${idle.p50Us.toFixed(0)} µs`);
    }
  }
  // Inside the node's step: node:http2 writes the stream's frames from an immediate, so the gateway's work
  // from `request()` until that immediate (marks [15] and [16]) still delays the node's request.
  const flushed = marks.filter((m) => (m[15] ?? 0) > 0);
  if (flushed.length > 0) {
    const wall = summarizeLatencies(flushed.map((m) => (m[15]! - m[1]!) / 1000));
    const cpu = summarizeLatencies(flushed.map((m) => m[16] ?? 0));
    lines.push(`  of which node stream opened -> its frames written (first immediate after it): p50 ${wall.p50Us.toFixed(0)} µs, gateway CPU p50 ${cpu.p50Us.toFixed(0)} µs`);
  }
  // GC pauses that began between a stream's request event and its first write to the client.
  const inside = marks.map((m) => saved.gcs.filter(([at]) => at! >= m[0]! && at! <= m[4]!));
  const gcMs = inside.reduce((sum, list) => sum + list.reduce((s, g) => s + g[1]!, 0), 0);
  const withGc = inside.filter((list) => list.length > 0).length;
  lines.push(`GC inside a stream's first token: ${withGc} of ${marks.length} streams, ${((gcMs * 1000) / Math.max(1, marks.length)).toFixed(0)} µs per stream on average (${saved.gcs.length} GCs in the gateway's life)`);
  return { text: `gateway stream broken down (${rows.length} streams, one clock):\n${lines.join('\n')}\n`, rows, marks };
}
