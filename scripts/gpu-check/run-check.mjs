// The GPU check itself (scripts/gpu-check.sh prepares the machine and runs this with the packed Node).
// Node built-ins only: it drives the production bundle as processes and talks to the node over HTTP.
//
// It writes `mlp_large` twice, as mlp_gpu (KIND_GPU, warmup checked against the CPU) and mlp_cpu
// (KIND_CPU on the node's cores), starts one tessera-node on half of the cores, compares both models'
// outputs for the same inputs, runs tessera-perf (on the other half) at each concurrency for both,
// reads the node's CPU per inference from /proc and the GPU figures from its own /metrics, and writes
// gpu-check.json and gpu-check.md to --out.
//
//   node run-check.mjs --app DIR --out DIR [--quick] [--gpu-instances N] [--concurrency 1,16,64] [--generators N]
//                      [--preferred-batch-sizes 64]   (both models' dynamic_batching, e.g. 32 for two waves in flight at 64)
import { execFile, spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { link, mkdir, mkdtemp, readFile, readdir, rm, writeFile } from 'node:fs/promises';
import { availableParallelism, cpus, release, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { parseArgs, promisify } from 'node:util';

const run = promisify(execFile);
const { values: options } = parseArgs({
  options: {
    app: { type: 'string' },
    out: { type: 'string' },
    quick: { type: 'boolean', default: false },
    'gpu-instances': { type: 'string', default: '1' },
    concurrency: { type: 'string' },
    generators: { type: 'string', default: '1' },
    'preferred-batch-sizes': { type: 'string', default: '64' },
  },
});
if (!options.app || !options.out) {
  process.stderr.write('usage: run-check.mjs --app DIR --out DIR [--quick] [--gpu-instances N] [--concurrency 1,16,64] [--generators N] [--preferred-batch-sizes 64]\n');
  process.exit(2);
}
const app = resolve(options.app);
const out = resolve(options.out);
const dist = join(app, 'dist');
const started = Date.now();
const CONCURRENCIES = options.concurrency ? options.concurrency.split(',').map(Number) : options.quick ? [1, 4] : [1, 16, 64];
const PREFERRED_BATCH_SIZES = options['preferred-batch-sizes'].split(',').map(Number);
if (PREFERRED_BATCH_SIZES.some((n) => !Number.isInteger(n) || n < 1 || n > 64)) {
  process.stderr.write(`--preferred-batch-sizes: whole numbers from 1 to 64 (max_batch_size), got '${options['preferred-batch-sizes']}'\n`);
  process.exit(2);
}
const TOLERANCE = 1e-3;
const CLK_TCK = 100;

function say(text) {
  process.stdout.write(`[gpu-check +${((Date.now() - started) / 1000).toFixed(1)}s] ${text}\n`);
}

async function tryRun(command, args) {
  try {
    return (await run(command, args, { timeout: 20_000, maxBuffer: 1 << 20 })).stdout.trim();
  } catch (error) {
    return undefined;
  }
}

/** The cores for the node and for the load generator: two halves when there are 4 or more. */
function coreSplit() {
  const n = availableParallelism();
  const taskset = ['/usr/bin/taskset', '/bin/taskset'].some((path) => existsSync(path));
  if (n < 4 || !taskset) return { node: undefined, load: undefined, n, taskset };
  const half = Math.floor(n / 2);
  return { node: `0-${half - 1}`, load: `${half}-${n - 1}`, n, nodeCores: half, taskset };
}

async function machine() {
  const smi = await tryRun('nvidia-smi', ['--query-gpu=name,memory.total,driver_version', '--format=csv,noheader']);
  const icds = ['/usr/local/nvidia/share/vulkan/icd.d', '/usr/share/vulkan/icd.d', '/etc/vulkan/icd.d'].filter((d) => existsSync(d));
  return {
    gpus: smi ? smi.split('\n') : [],
    cpu: cpus()[0]?.model,
    cores: availableParallelism(),
    kernel: release(),
    node: process.version,
    vulkanIcdFolders: icds,
    vkDriverFiles: process.env.VK_DRIVER_FILES ?? null,
    vulkanLoader: process.env.LD_LIBRARY_PATH ?? null,
  };
}

function modelConfig(name, kind, count, extra) {
  return `name: "${name}"
platform: "onnxruntime_onnx"
max_batch_size: 64
input [ { name: "INPUT0" data_type: TYPE_FP32 dims: [ 1024 ] } ]
output [ { name: "OUTPUT0" data_type: TYPE_FP32 dims: [ 1024 ] } ]
instance_group [ { count: ${count} kind: ${kind} } ]
dynamic_batching { preferred_batch_size: [ ${PREFERRED_BATCH_SIZES.join(', ')} ] max_queue_delay_microseconds: 2000 }
${extra}`;
}

/** mlp_large written once by the bundled writer, then served as mlp_gpu and mlp_cpu (hard links, no copy). */
async function writeModels(work, cores) {
  const source = join(work, 'written');
  await run(process.execPath, [join(dist, 'tessera-models.js'), '--out', source, '--only', 'mlp_large']);
  const onnx = join(source, 'mlp_large', '1', 'model.onnx');
  const repo = join(work, 'models');
  const warmup = `model_warmup [ { name: "random" batch_size: 8 inputs { key: "INPUT0" value { data_type: TYPE_FP32 dims: [ 1024 ] random_data: true } } } ]
parameters { key: "gpu_output_tolerance" value { string_value: "${TOLERANCE}" } }
`;
  const cpuThreads = Math.max(1, Math.floor((cores ?? availableParallelism()) / 2));
  const models = {
    mlp_gpu: modelConfig('mlp_gpu', 'KIND_GPU', Number(options['gpu-instances']), warmup),
    mlp_cpu: modelConfig('mlp_cpu', 'KIND_CPU', 2, `parameters { key: "intra_op_thread_count" value { string_value: "${cpuThreads}" } }\n`),
  };
  for (const [name, config] of Object.entries(models)) {
    await mkdir(join(repo, name, '1'), { recursive: true });
    await writeFile(join(repo, name, 'config.pbtxt'), config);
    await link(onnx, join(repo, name, '1', 'model.onnx'));
  }
  return { repo, cpuThreads, configs: models };
}

function pinned(cores, command, args) {
  return cores === undefined ? [command, args] : ['taskset', ['-c', cores, command, ...args]];
}

/** Starts the bundled node; resolves with its ports and pid once it logged its start (models loaded). */
function startNode(repo, cores, logFile) {
  const [command, args] = pinned(cores, process.execPath, [
    join(dist, 'tessera-node.js'),
    '--model-repository', repo,
    '--http-port', '0', '--grpc-port', '0', '--metrics-port', '0',
    '--http-address', '127.0.0.1', '--grpc-address', '127.0.0.1', '--metrics-address', '127.0.0.1',
    '--exit-timeout-secs', '2',
  ]);
  const child = spawn(command, args, { stdio: ['ignore', 'ignore', 'pipe'] });
  let log = '';
  return new Promise((resolvePromise, reject) => {
    const timer = setTimeout(() => reject(new Error(`node did not start in 240 s:\n${log.slice(-3000)}`)), 240_000);
    child.stderr.on('data', (chunk) => {
      log += chunk.toString('utf8');
      const line = log.split('\n').find((l) => l.includes('"tessera-node started"'));
      if (line !== undefined && !child.startedOnce) {
        child.startedOnce = true;
        clearTimeout(timer);
        const info = JSON.parse(line);
        resolvePromise({ child, pid: child.pid, http: info.httpPort, grpc: info.grpcPort, metrics: info.metricsPort, log: () => log });
      }
    });
    child.once('exit', (code) => {
      clearTimeout(timer);
      void writeFile(logFile, log);
      reject(new Error(`node exited with ${code}:\n${log.slice(-3000)}`));
    });
  });
}

/** CPU seconds of the node's main thread (its event loop) and of all its threads, from /proc. */
async function nodeCpu(pid) {
  // Under taskset, the pid is taskset's until it execs node: the same pid, so /proc/<pid> is node's.
  const seconds = async (path) => {
    const stat = await readFile(path, 'utf8');
    const rest = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(rest[11]) + Number(rest[12])) / CLK_TCK;
  };
  let total = 0;
  for (const tid of await readdir(`/proc/${pid}/task`)) total += await seconds(`/proc/${pid}/task/${tid}/stat`).catch(() => 0);
  return { main: await seconds(`/proc/${pid}/task/${pid}/stat`), total };
}

async function inferenceCount(node, model) {
  const res = await fetch(`http://127.0.0.1:${node.http}/v2/models/${model}/stats`);
  if (!res.ok) return Number.NaN;
  const body = await res.json();
  return (body.model_stats ?? []).reduce((sum, s) => sum + Number(s.inference_count ?? 0), 0);
}

function metricValues(text, family) {
  return text
    .split('\n')
    .filter((l) => l.startsWith(`${family}{`) || l.startsWith(`${family} `))
    .map((l) => Number(l.slice(l.lastIndexOf(' ') + 1)));
}

/** Samples the node's own GPU families once a second while `work` runs; returns the peaks. */
async function withGpuSampling(node, work) {
  let stop = false;
  const peaks = { utilization: null, memoryUsedBytes: null };
  const sampler = (async () => {
    while (!stop) {
      try {
        const text = await (await fetch(`http://127.0.0.1:${node.metrics}/metrics`)).text();
        for (const [key, family] of [['utilization', 'nv_gpu_utilization'], ['memoryUsedBytes', 'nv_gpu_memory_used_bytes']]) {
          for (const v of metricValues(text, family)) peaks[key] = Math.max(peaks[key] ?? v, v);
        }
      } catch {
        // the node may be busy; the next sample counts
      }
      await new Promise((r) => setTimeout(r, 1000));
    }
  })();
  try {
    return { result: await work(), gpu: peaks };
  } finally {
    stop = true;
    await sampler;
  }
}

/** One tessera-perf process at `concurrency`, on the load generator's cores; resolves with its point, or its failure. */
async function perfRun(node, cores, model, protocol, concurrency, json) {
  const target = `127.0.0.1:${protocol === 'grpc' ? node.grpc : node.http}`;
  const [command, args] = pinned(cores.load, process.execPath, [
    join(dist, 'tessera-perf.js'),
    '-m', model, '-u', target, '-i', protocol,
    '--stats-url', `http://127.0.0.1:${node.http}`,
    '--concurrency-range', String(concurrency),
    '--warmup-ms', options.quick ? '300' : '1500',
    '--measurement-interval', options.quick ? '500' : '2500',
    '--max-trials', options.quick ? '3' : '5',
    '--json-out', json,
  ]);
  const finished = await run(command, args, { timeout: 120_000, maxBuffer: 1 << 24 }).catch((e) => e);
  try {
    return { point: JSON.parse(await readFile(json, 'utf8')).points[0] };
  } catch {
    return { failure: String(finished?.stderr ?? finished?.message ?? 'no result').slice(-500) };
  }
}

/**
 * One load point: `--generators` tessera-perf processes at once sharing the concurrency (so one
 * generator's own event loop is not mistaken for the node's limit), their throughputs added.
 */
async function loadPoint(node, cores, model, protocol, concurrency, work) {
  const generators = Math.max(1, Math.min(concurrency, Number(options.generators)));
  const countBefore = await inferenceCount(node, model);
  const cpuBefore = await nodeCpu(node.pid);
  const sampled = await withGpuSampling(node, () =>
    Promise.all(
      Array.from({ length: generators }, (_, g) =>
        perfRun(node, cores, model, protocol, Math.round(concurrency / generators), join(work, `perf-${model}-${protocol}-${concurrency}-${g}.json`)),
      ),
    ),
  );
  const cpuAfter = await nodeCpu(node.pid);
  const countAfter = await inferenceCount(node, model);
  const inferences = countAfter - countBefore;
  const points = sampled.result.flatMap((r) => (r.point ? [r.point] : []));
  const complete = points.length === generators;
  const perInference = (s) => (inferences > 0 ? Math.round((s * 1e6) / inferences) : null);
  return {
    model,
    protocol,
    concurrency,
    generators,
    inferencesPerSec: complete ? Math.round(points.reduce((sum, p) => sum + p.inferencesPerSec, 0)) : null,
    p50Ms: complete ? Math.max(...points.map((p) => p.latency.p50Us)) / 1000 : null,
    p99Ms: complete ? Math.max(...points.map((p) => p.latency.p99Us)) / 1000 : null,
    errors: complete ? points.reduce((sum, p) => sum + p.errors, 0) : null,
    firstError: points.find((p) => p.firstError)?.firstError ?? sampled.result.find((r) => r.failure)?.failure,
    stable: complete ? points.every((p) => p.stable) : null,
    nodeCpuUsPerInference: perInference(cpuAfter.total - cpuBefore.total),
    nodeMainThreadUsPerInference: perInference(cpuAfter.main - cpuBefore.main),
    gpuUtilizationPeak: sampled.gpu.utilization,
    gpuMemoryUsedBytesPeak: sampled.gpu.memoryUsedBytes,
  };
}

/** The same random batch through both models; the largest differences, and the verdict at TOLERANCE. */
async function compareOutputs(node) {
  const rows = 16;
  const data = Array.from({ length: rows * 1024 }, () => Math.fround(Math.random() * 2 - 1));
  const infer = async (model) => {
    const res = await fetch(`http://127.0.0.1:${node.http}/v2/models/${model}/infer`, {
      method: 'POST',
      body: JSON.stringify({ inputs: [{ name: 'INPUT0', shape: [rows, 1024], datatype: 'FP32', data }] }),
    });
    const body = await res.json();
    if (!res.ok) throw new Error(`${model}: ${res.status} ${JSON.stringify(body)}`);
    return body.outputs[0].data;
  };
  const [gpu, cpu] = [await infer('mlp_gpu'), await infer('mlp_cpu')];
  let maxAbs = 0;
  let maxRel = 0;
  let maxCpu = 0;
  let within = true;
  for (let i = 0; i < cpu.length; i++) {
    const diff = Math.abs(gpu[i] - cpu[i]);
    maxAbs = Math.max(maxAbs, diff);
    maxRel = Math.max(maxRel, diff / Math.max(Math.abs(cpu[i]), 1e-12));
    maxCpu = Math.max(maxCpu, Math.abs(cpu[i]));
    if (!(diff <= TOLERANCE + TOLERANCE * Math.abs(cpu[i]))) within = false;
  }
  return { elements: cpu.length, maxAbsDiff: maxAbs, maxRelDiff: maxRel, largestCpuValue: maxCpu, tolerance: TOLERANCE, withinTolerance: within };
}

/** onnxruntime alone on the node's cores: WebGPU and the CPU (as many threads as mlp_cpu's two instances together). */
async function anchor(work, cores) {
  const model = join(work, 'models', 'mlp_gpu', '1', 'model.onnx');
  const threads = String(Math.max(1, cores.nodeCores ?? availableParallelism()));
  const [command, args] = pinned(cores.node, process.execPath, [
    join(new URL('.', import.meta.url).pathname, 'ort-anchor.mjs'),
    '--app', app, '--model', model, '--batch', '64', '--threads', threads, '--seconds', options.quick ? '1' : '3',
  ]);
  try {
    return JSON.parse((await run(command, args, { timeout: 120_000 })).stdout.trim().split('\n').at(-1));
  } catch (error) {
    return [{ error: String(error?.stderr ?? error).slice(-500) }];
  }
}

function table(report) {
  const lines = [
    `GPU check, ${new Date(report.finishedAt).toISOString()}: ${report.machine.gpus.join('; ') || 'no GPU seen'}, ${report.machine.cores} cores (${report.machine.cpu})`,
    '',
    `models: ${Object.entries(report.models).map(([m, s]) => `${m} ${s.state}${s.reason ? ` (${s.reason})` : ''}`).join('; ')}`,
    `providers: ${report.instances.join('; ') || '-'}`,
    `onnxruntime alone, batch 64: ${(report.anchor ?? []).map((a) => (a.error ? `${a.provider}: ${a.error.replace(/\s+/g, ' ')}` : `${a.provider} ${a.inferencesPerSec} inf/s (${a.threads} threads, ${a.cpuUsPerInference} us CPU/inf)`)).join('; ')}`,
    `outputs GPU vs CPU: ${report.outputs ? `max |diff| ${report.outputs.maxAbsDiff.toExponential(2)}, max relative ${report.outputs.maxRelDiff.toExponential(2)}, within ${report.outputs.tolerance}: ${report.outputs.withinTolerance}` : report.outputsError ?? '-'}`,
    '',
    '| model | protocol | concurrency (generators) | inf/s | p50 ms | p99 ms | node CPU us/inf | main thread us/inf | GPU util peak | GPU mem peak MiB | errors |',
    '| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |',
  ];
  for (const p of report.points) {
    const mem = p.gpuMemoryUsedBytesPeak === null ? '-' : Math.round(p.gpuMemoryUsedBytesPeak / 2 ** 20);
    const fmt = (v) => (v === null || v === undefined ? '-' : typeof v === 'number' ? String(Math.round(v * 100) / 100) : String(v));
    lines.push(
      `| ${p.model} | ${p.protocol} | ${p.concurrency} (${p.generators}) | ${fmt(p.inferencesPerSec)} | ${fmt(p.p50Ms)} | ${fmt(p.p99Ms)} | ${fmt(p.nodeCpuUsPerInference)} | ${fmt(p.nodeMainThreadUsPerInference)} | ${fmt(p.gpuUtilizationPeak)} | ${mem} | ${fmt(p.errors)} |`,
    );
  }
  if (report.error) lines.push('', `failed: ${report.error.split('\n')[0]}`);
  if (report.speedupAt64 !== undefined) lines.push('', `GPU / CPU throughput at concurrency 64 (HTTP): ${report.speedupAt64}x (target >= 5x)`);
  return `${lines.join('\n')}\n`;
}

async function main() {
  await mkdir(out, { recursive: true });
  const work = await mkdtemp(join(tmpdir(), 'tessera-gpu-check-'));
  const cores = coreSplit();
  const report = { options, machine: await machine(), cores, models: {}, instances: [], points: [] };
  say(`machine: ${JSON.stringify(report.machine)}`);
  let node;
  try {
    const written = await writeModels(work, cores.nodeCores);
    report.configs = written.configs;
    report.anchor = await anchor(work, cores);
    say(`onnxruntime alone: ${JSON.stringify(report.anchor)}`);
    say('starting the node');
    const loadStart = Date.now();
    node = await startNode(written.repo, cores.node, join(out, 'node.log'));
    report.nodeReadyS = (Date.now() - loadStart) / 1000;
    const index = await (await fetch(`http://127.0.0.1:${node.http}/v2/repository/index`, { method: 'POST', body: '{}' })).json();
    for (const entry of index) report.models[entry.name] = { state: entry.state, reason: entry.reason || undefined };
    say(`models: ${JSON.stringify(report.models)}`);
    const metrics = await (await fetch(`http://127.0.0.1:${node.metrics}/metrics`)).text();
    report.instances = metrics.split('\n').filter((l) => l.startsWith('tessera_model_instance_info{'));
    const gpuReady = report.models.mlp_gpu?.state === 'READY';
    if (gpuReady) {
      report.gpuConfigAccelerators = (await (await fetch(`http://127.0.0.1:${node.http}/v2/models/mlp_gpu/config`)).json()).optimization;
      try {
        report.outputs = await compareOutputs(node);
      } catch (error) {
        report.outputsError = String(error);
      }
      say(`outputs: ${JSON.stringify(report.outputs ?? report.outputsError)}`);
    }
    for (const model of gpuReady ? ['mlp_gpu', 'mlp_cpu'] : ['mlp_cpu']) {
      for (const concurrency of CONCURRENCIES) {
        const point = await loadPoint(node, cores, model, 'http', concurrency, work);
        report.points.push(point);
        say(JSON.stringify(point));
      }
      const grpc = await loadPoint(node, cores, model, 'grpc', CONCURRENCIES.at(-1), work);
      report.points.push(grpc);
      say(JSON.stringify(grpc));
    }
    const at = (model) => report.points.find((p) => p.model === model && p.protocol === 'http' && p.concurrency === 64)?.inferencesPerSec;
    if (at('mlp_gpu') && at('mlp_cpu')) report.speedupAt64 = Math.round((at('mlp_gpu') / at('mlp_cpu')) * 100) / 100;
  } catch (error) {
    report.error = String(error?.stack ?? error);
    say(`failed: ${report.error}`);
  } finally {
    if (node) {
      await writeFile(join(out, 'node.log'), node.log());
      node.child.kill('SIGTERM');
    }
    report.finishedAt = Date.now();
    report.durationS = Math.round((report.finishedAt - started) / 1000);
    await writeFile(join(out, 'gpu-check.json'), `${JSON.stringify(report, null, 2)}\n`);
    const text = table(report);
    await writeFile(join(out, 'gpu-check.md'), text);
    process.stdout.write(`\n${text}`);
    await rm(work, { recursive: true, force: true });
  }
  process.exitCode = report.error ? 1 : 0;
}

await main();
