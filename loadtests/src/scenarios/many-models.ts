/**
 * `npm run bench -- models` (issue 19): many models on one node. N copies of `simple` (two CPU instances
 * each, the default config) in a fresh repository; the node alone on core 0, the bench on core 1.
 * Measures, all in one run:
 * - the anchor: onnxruntime-node alone opening 100 sessions in one thread (many-models-anchor.mjs);
 * - a node with 1, 100 and 1,000 models: time from spawn to "started" (every model loaded), RSS and
 *   threads once started; the slope per model between 100 and 1,000;
 * - one request to each of the 100 models right after readiness;
 * - p99 of `simple` (closed loop, one caller) with 100 models loaded vs 1 model;
 * - idle CPU in poll mode (default 15 s interval) with 100 models;
 * - RSS after each of 10 cycles that unload and load the 100 models (explicit mode).
 * The node runs from the production bundle (dist/, `npm run build`) when it is fresh, as bin/ does.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdir, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { simpleModel } from '../../../gpu-node/src/example-models/index.js';
import type { InferRequest } from '../../../shared/src/tensors/index.js';
import { createHttpInferClient } from '../lib/clients/http-client.js';
import type { BenchOptions } from '../lib/options/bench-options.js';
import { DEFAULT_RESULTS_ROOT, localDate } from '../lib/output/results-files.js';
import { formatTable } from '../lib/output/text-table.js';
import { perCoreSupport, pinnedCommand, readThreadCpu, threadCpuDelta } from '../lib/per-core/index.js';
import { parseStartedLine } from '../lib/processes/node-process.js';
import { median, summarizeLatencies } from '../lib/sampling/percentiles.js';

/** Linux's USER_HZ, the unit of /proc/PID/stat's CPU times, is 100 on every architecture Node runs on. */
const CLOCK_TICKS_PER_S = 100;
const NODE_BIN = fileURLToPath(new URL('../../../bin/tessera-node.js', import.meta.url));
const ANCHOR = fileURLToPath(new URL('./many-models-anchor.mjs', import.meta.url));
const COLLECT = fileURLToPath(new URL('./many-models-collect.mjs', import.meta.url));

interface StartedNode {
  readonly pid: number;
  readonly httpPort: number;
  readonly readyMs: number;
  stop(): Promise<void>;
}

interface Footprint {
  readonly rssBytes: number;
  readonly threads: number;
  /** The process's CPU so far, every thread's, ended ones included: on a shared box a steadier load cost than wall time. */
  readonly cpuMs: number;
}

/** `count` copies of `simple` named simple_0..simple_<count-1>. */
async function writeRepository(dir: string, count: number): Promise<string[]> {
  await rm(dir, { recursive: true, force: true });
  const files = await simpleModel.build();
  const names = Array.from({ length: count }, (_, i) => `simple_${i}`);
  for (const name of names) {
    for (const file of files) {
      const path = join(dir, name, file.path);
      await mkdir(join(path, '..'), { recursive: true });
      const contents = file.path === 'config.pbtxt' ? String(file.contents).replace('name: "simple"', `name: "${name}"`) : file.contents;
      await writeFile(path, contents);
    }
  }
  return names;
}

/** Spawns the node on core 0 and resolves once it logs "started" (every startup model loaded). */
function startNode(repository: string, extra: readonly string[], nodeFlags: readonly string[] = []): Promise<StartedNode> {
  const args = [...nodeFlags, NODE_BIN, '--model-repository', repository, '--http-port', '0', '--grpc-port', '0', '--allow-metrics', 'false'];
  const [command, argv] = pinnedCommand(0, process.execPath, [...args, '--http-address', '127.0.0.1', '--grpc-address', '127.0.0.1', ...extra]);
  const began = performance.now();
  const child: ChildProcess = spawn(command, argv, { stdio: ['ignore', 'ignore', 'pipe'] });
  const log: string[] = [];
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  return new Promise((resolve, reject) => {
    createInterface({ input: child.stderr as NodeJS.ReadableStream }).on('line', (line) => {
      log.push(line);
      if (log.length > 20) log.shift();
      const ports = parseStartedLine(line);
      if (ports === undefined) return;
      resolve({
        // taskset execs node, so the child's pid is the node's.
        pid: child.pid as number,
        httpPort: ports.httpPort,
        readyMs: performance.now() - began,
        async stop() {
          child.kill('SIGTERM');
          await exited;
        },
      });
    });
    void exited.then(() => reject(new Error(`tessera-node ended before it started:\n${log.join('\n')}`)));
  });
}

async function footprint(pid: number): Promise<Footprint> {
  const status = await readFile(`/proc/${pid}/status`, 'utf8');
  const rssKb = Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? Number.NaN);
  // utime and stime (fields 14 and 15) count the threads that have ended too, unlike /proc/PID/task.
  const stat = (await readFile(`/proc/${pid}/stat`, 'utf8')).split(') ')[1]?.split(' ') ?? [];
  const cpuMs = ((Number(stat[11]) + Number(stat[12])) * 1000) / CLOCK_TICKS_PER_S;
  return { rssBytes: rssKb * 1024, threads: (await readdir(`/proc/${pid}/task`)).length, cpuMs };
}

function simpleRequest(model: string): InferRequest {
  const values = new Int32Array(16).map((_, i) => i);
  const data = new Uint8Array(values.buffer);
  return {
    id: '',
    modelName: model,
    inputs: [
      { name: 'INPUT0', datatype: 'INT32', shape: [1, 16], data },
      { name: 'INPUT1', datatype: 'INT32', shape: [1, 16], data },
    ],
    parameters: {},
  };
}

/** One request to each model; how many answered with the right sum. */
async function requestEach(port: number, names: readonly string[]): Promise<number> {
  const client = createHttpInferClient('127.0.0.1', port, 1);
  let good = 0;
  try {
    for (const name of names) {
      try {
        const { response } = await client.infer(simpleRequest(name));
        const sum = response.outputs.find((o) => o.name === 'OUTPUT0');
        const first = sum === undefined ? undefined : new Int32Array(sum.data.buffer.slice(sum.data.byteOffset, sum.data.byteOffset + 64));
        if (first?.[3] === 6) good++;
      } catch {
        // counted as not answered
      }
    }
  } finally {
    await client.close();
  }
  return good;
}

/** A fresh connection's first requests are not part of a window. */
const WINDOW_WARMUP_S = 0.1;

/** Closed loop, one caller, on `model`: warm-up, then the latencies (us) over the window. */
async function latency(port: number, model: string, warmupS: number, durationS: number): Promise<number[]> {
  const client = createHttpInferClient('127.0.0.1', port, 1);
  const request = simpleRequest(model);
  try {
    const until = (s: number) => performance.now() + s * 1000;
    for (const end = until(warmupS); performance.now() < end; ) await client.infer(request);
    const samples: number[] = [];
    for (const end = until(durationS); performance.now() < end; ) {
      const t0 = performance.now();
      await client.infer(request);
      samples.push((performance.now() - t0) * 1000);
    }
    return samples;
  } finally {
    await client.close();
  }
}

async function post(port: number, path: string): Promise<void> {
  const response = await fetch(`http://127.0.0.1:${port}${path}`, { method: 'POST', body: '{}', headers: { 'content-type': 'application/json' } });
  await response.arrayBuffer();
  if (response.status !== 200) throw new Error(`POST ${path}: HTTP ${response.status}`);
}

async function indexStates(port: number): Promise<string[]> {
  const response = await fetch(`http://127.0.0.1:${port}/v2/repository/index`, { method: 'POST', body: '{}' });
  return ((await response.json()) as { state?: string }[]).map((e) => e.state ?? '');
}

/** Unloads and loads every model `cycles` times; RSS once each cycle's models are READY again. */
async function unloadReloadCycles(port: number, pid: number, names: readonly string[], cycles: number): Promise<number[]> {
  const rss: number[] = [];
  for (let cycle = 0; cycle < cycles; cycle++) {
    for (const name of names) await post(port, `/v2/repository/models/${name}/unload`);
    while ((await indexStates(port)).some((state) => state !== 'UNAVAILABLE')) await new Promise((r) => setTimeout(r, 50));
    // Loads at the node's --model-load-thread-count, as a client loading many models would.
    const queue = [...names];
    await Promise.all(Array.from({ length: 4 }, async () => {
      for (let name = queue.shift(); name !== undefined; name = queue.shift()) await post(port, `/v2/repository/models/${name}/load`);
    }));
    rss.push((await footprint(pid)).rssBytes);
  }
  return rss;
}

async function idleCpuShare(pid: number, seconds: number): Promise<number> {
  const before = await readThreadCpu(pid);
  await new Promise((r) => setTimeout(r, seconds * 1000));
  const after = await readThreadCpu(pid);
  return threadCpuDelta(before, after, pid).totalUs / (seconds * 1e6);
}

function runAnchor(modelPath: string, count: number): Promise<{ readyMs: number; rssBytes: number; threads: number }> {
  const [command, argv] = pinnedCommand(0, process.execPath, [ANCHOR, modelPath, String(count)]);
  const child = spawn(command, argv, { stdio: ['ignore', 'pipe', 'inherit'] });
  let out = '';
  child.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()));
  return new Promise((resolve, reject) => {
    child.once('exit', (code) => (code === 0 ? resolve(JSON.parse(out) as { readyMs: number; rssBytes: number; threads: number }) : reject(new Error(`anchor exited ${code}`))));
  });
}

const mb = (bytes: number) => (bytes / 2 ** 20).toFixed(1);

export async function runManyModelsScenario(options: BenchOptions): Promise<number> {
  const pinning = perCoreSupport();
  const quick = options.quick;
  const big = quick ? 300 : 1000;
  const cycles = quick ? 3 : 10;
  const idleS = quick ? 16 : 46;
  const root = join(tmpdir(), `tessera-many-models-${process.pid}`);
  const say = (line: string) => process.stdout.write(`${line}\n`);
  say(`models: ${pinning.ok ? 'node on core 0, bench on core 1' : `not pinned (${pinning.why})`}`);

  const repo1 = join(root, 'one');
  const repo100 = join(root, 'hundred');
  const repoBig = join(root, 'big');
  await writeRepository(repo1, 1);
  const names100 = await writeRepository(repo100, 100);
  await writeRepository(repoBig, big);

  const anchorBefore = await runAnchor(join(repo100, 'simple_0', '1', 'model.onnx'), 100);
  say(`anchor (onnxruntime alone, 100 sessions): ${anchorBefore.readyMs.toFixed(0)} ms, ${mb(anchorBefore.rssBytes)} MB, ${anchorBefore.threads} threads`);

  // Both nodes stay up and their latency windows alternate, so a busy spell of the shared box falls on
  // both figures alike rather than on whichever ran second.
  // Both in poll mode, so that the comparison is of the number of models alone.
  const one = await startNode(repo1, ['--model-control-mode', 'poll']);
  const oneFoot = await footprint(one.pid);
  say(`1 model: ready ${one.readyMs.toFixed(0)} ms (${oneFoot.cpuMs.toFixed(0)} ms of CPU), ${mb(oneFoot.rssBytes)} MB, ${oneFoot.threads} threads`);
  const hundred = await startNode(repo100, ['--model-control-mode', 'poll']);
  const hundredFoot = await footprint(hundred.pid);
  const answered = await requestEach(hundred.httpPort, names100);
  say(`100 models: ready ${hundred.readyMs.toFixed(0)} ms (${hundredFoot.cpuMs.toFixed(0)} ms of CPU), ${mb(hundredFoot.rssBytes)} MB, ${hundredFoot.threads} threads, ${answered}/100 answered`);
  // One warm-up each, then short windows in turns. A busy spell of the box then falls on both alike, and
  // the median of the windows' p99 is not decided by one spell, as the pooled p99 of a few windows is.
  const rounds = quick ? 4 : 16;
  const windowS = options.durationS / rounds;
  await latency(one.httpPort, 'simple_0', options.warmupS, 0);
  await latency(hundred.httpPort, 'simple_0', options.warmupS, 0);
  const samplesOne: number[] = [];
  const samplesHundred: number[] = [];
  const windowP99One: number[] = [];
  const windowP99Hundred: number[] = [];
  // Node CPU per request over the windows (warm-ups included in both): what the tails cannot show on a shared box.
  const cpuPerRequest = { one: { cpuMs: 0, requests: 0 }, hundred: { cpuMs: 0, requests: 0 } };
  const timedWindow = async (node: StartedNode, into: { cpuMs: number; requests: number }): Promise<number[]> => {
    const before = (await footprint(node.pid)).cpuMs;
    const samples = await latency(node.httpPort, 'simple_0', WINDOW_WARMUP_S, windowS);
    into.cpuMs += (await footprint(node.pid)).cpuMs - before;
    into.requests += samples.length;
    return samples;
  };
  for (let round = 0; round < rounds; round++) {
    const windowOne = await timedWindow(one, cpuPerRequest.one);
    const windowHundred = await timedWindow(hundred, cpuPerRequest.hundred);
    samplesOne.push(...windowOne);
    samplesHundred.push(...windowHundred);
    windowP99One.push(summarizeLatencies(windowOne).p99Us);
    windowP99Hundred.push(summarizeLatencies(windowHundred).p99Us);
  }
  const p99One = summarizeLatencies(samplesOne);
  const p99Hundred = summarizeLatencies(samplesHundred);
  const medianP99One = median(windowP99One);
  const medianP99Hundred = median(windowP99Hundred);
  await one.stop();
  const idleShare = await idleCpuShare(hundred.pid, idleS);
  await hundred.stop();
  const cpuUsOne = (cpuPerRequest.one.cpuMs * 1000) / cpuPerRequest.one.requests;
  const cpuUsHundred = (cpuPerRequest.hundred.cpuMs * 1000) / cpuPerRequest.hundred.requests;
  say(`p99 of simple_0: ${p99One.p99Us.toFixed(0)} us with 1 model, ${p99Hundred.p99Us.toFixed(0)} us with 100 (median of ${rounds} windows' p99: ${medianP99One.toFixed(0)} and ${medianP99Hundred.toFixed(0)} us); idle poll CPU with 100 models ${(idleShare * 100).toFixed(2)}% of a core`);
  say(`node CPU per request over the windows: ${cpuUsOne.toFixed(0)} us with 1 model, ${cpuUsHundred.toFixed(0)} us with 100`);

  const many = await startNode(repoBig, []);
  const manyFoot = await footprint(many.pid);
  await many.stop();
  const slopeMs = (many.readyMs - hundred.readyMs) / (big - 100);
  const slopeBytes = (manyFoot.rssBytes - hundredFoot.rssBytes) / (big - 100);
  const slopeCpuMs = (manyFoot.cpuMs - hundredFoot.cpuMs) / (big - 100);
  say(
    `${big} models: ready ${many.readyMs.toFixed(0)} ms (${manyFoot.cpuMs.toFixed(0)} ms of CPU), ${mb(manyFoot.rssBytes)} MB, ${manyFoot.threads} threads; ` +
      `per model ${slopeMs.toFixed(1)} ms (${slopeCpuMs.toFixed(1)} ms of CPU), ${mb(slopeBytes)} MB`,
  );

  const explicit = await startNode(repo100, ['--model-control-mode', 'explicit', '--load-model', '*']);
  const firstRss = (await footprint(explicit.pid)).rssBytes;
  const cycleRss = await unloadReloadCycles(explicit.httpPort, explicit.pid, names100, cycles);
  await explicit.stop();
  const growth = (cycleRss[cycleRss.length - 1] as number) / (cycleRss[0] as number) - 1;
  say(`unload/reload x${cycles}: RSS ${cycleRss.map(mb).join(', ')} MB (last vs first cycle ${(growth * 100).toFixed(1)}%)`);
  // Diagnosis: the same cycles with the main thread collecting every 0.5 s (retained vs not yet collected).
  const collected = await startNode(repo100, ['--model-control-mode', 'explicit', '--load-model', '*'], ['--expose-gc', '--import', COLLECT]);
  const collectedRss = await unloadReloadCycles(collected.httpPort, collected.pid, names100, cycles);
  await collected.stop();
  const collectedGrowth = (collectedRss[collectedRss.length - 1] as number) / (collectedRss[0] as number) - 1;
  say(`  with collections forced: RSS ${collectedRss.map(mb).join(', ')} MB (last vs first cycle ${(collectedGrowth * 100).toFixed(1)}%)`);

  const anchorAfter = await runAnchor(join(repo100, 'simple_0', '1', 'model.onnx'), 100);
  await rm(root, { recursive: true, force: true });

  const results = {
    date: new Date().toISOString(),
    pinned: pinning.ok ? 'node and anchor on core 0, bench on core 1' : pinning.why,
    note: 'a 2-core box shared with other helpers running tests and builds',
    anchor: { before: anchorBefore, after: anchorAfter },
    oneModel: { readyMs: one.readyMs, ...oneFoot, latency: p99One, windowP99Us: windowP99One, medianWindowP99Us: medianP99One, windowCpuUsPerRequest: cpuUsOne },
    // Threads the 100 models add to a node with one (the pool's and onnxruntime's per-session threads).
    threadsAddedBy99Models: hundredFoot.threads - oneFoot.threads,
    hundredModels: {
      readyMs: hundred.readyMs,
      ...hundredFoot,
      answered,
      latency: p99Hundred,
      windowP99Us: windowP99Hundred,
      medianWindowP99Us: medianP99Hundred,
      windowCpuUsPerRequest: cpuUsHundred,
      idlePollCpuShareOfCore: idleShare,
      idleWindowS: idleS,
    },
    manyModels: { models: big, readyMs: many.readyMs, ...manyFoot, slopeMsPerModel: slopeMs, slopeCpuMsPerModel: slopeCpuMs, slopeBytesPerModel: slopeBytes },
    unloadReload: {
      cycles,
      rssAfterStartBytes: firstRss,
      rssAfterEachCycleBytes: cycleRss,
      lastVsFirst: growth,
      withCollectionsForced: { rssAfterEachCycleBytes: collectedRss, lastVsFirst: collectedGrowth },
    },
    p99Ratio: p99Hundred.p99Us / p99One.p99Us,
    medianWindowP99Ratio: medianP99Hundred / medianP99One,
  };
  const table = formatTable(
    ['', 'ready ms (CPU ms)', 'RSS MB', 'threads', 'p99 us (median of windows)'],
    [
      ['onnxruntime alone, 100 sessions (before)', anchorBefore.readyMs.toFixed(0), mb(anchorBefore.rssBytes), String(anchorBefore.threads), '-'],
      ['tessera-node, 1 model', `${one.readyMs.toFixed(0)} (${oneFoot.cpuMs.toFixed(0)})`, mb(oneFoot.rssBytes), String(oneFoot.threads), `${p99One.p99Us.toFixed(0)} (${medianP99One.toFixed(0)})`],
      ['tessera-node, 100 models', `${hundred.readyMs.toFixed(0)} (${hundredFoot.cpuMs.toFixed(0)})`, mb(hundredFoot.rssBytes), String(hundredFoot.threads), `${p99Hundred.p99Us.toFixed(0)} (${medianP99Hundred.toFixed(0)})`],
      [`tessera-node, ${big} models`, `${many.readyMs.toFixed(0)} (${manyFoot.cpuMs.toFixed(0)})`, mb(manyFoot.rssBytes), String(manyFoot.threads), '-'],
      ['onnxruntime alone, 100 sessions (after)', anchorAfter.readyMs.toFixed(0), mb(anchorAfter.rssBytes), String(anchorAfter.threads), '-'],
    ],
  );
  const dir = join(options.outRoot ?? DEFAULT_RESULTS_ROOT, `${localDate(new Date())}-pool`);
  await mkdir(dir, { recursive: true });
  await writeFile(join(dir, 'many-models.json'), `${JSON.stringify(results, null, 2)}\n`);
  await writeFile(join(dir, 'many-models.txt'), `${table}\n`);
  say(table);
  say(`results in ${dir}`);
  return 0;
}
