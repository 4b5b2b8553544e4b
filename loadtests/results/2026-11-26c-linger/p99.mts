// Scratch: 1-model vs 100-model node (poll mode), same closed loop alternating; --trace-gc counts, CPU/request.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdir, rm, writeFile, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { simpleModel } from '../../../gpu-node/src/example-models/index.js';
import { parseStartedLine } from '../../../loadtests/src/lib/processes/node-process.js';
import { createHttpInferClient } from '../../../loadtests/src/lib/clients/http-client.js';
import { summarizeLatencies, median } from '../../../loadtests/src/lib/sampling/percentiles.js';

const rounds = Number(process.argv[2] ?? 8), windowS = Number(process.argv[3] ?? 1.5);
const flags = (process.env.NODE_FLAGS ?? '--trace-gc').split(' ').filter(Boolean);
async function repo(n: number) {
  const dir = `/tmp/linger-p99-${n}`; await rm(dir, { recursive: true, force: true });
  const files = await simpleModel.build();
  for (let i = 0; i < n; i++) for (const f of files) { const p = join(dir, `simple_${i}`, f.path); await mkdir(join(p, '..'), { recursive: true }); await writeFile(p, f.path === 'config.pbtxt' ? String(f.contents).replace('name: "simple"', `name: "simple_${i}"`) : f.contents); }
  return dir;
}
interface N { child: ChildProcess; port: number; gc: string[] }
async function start(dir: string): Promise<N> {
  const child = spawn('taskset', ['-c', '0', process.execPath, ...flags, new URL('../../../bin/tessera-node.js', import.meta.url).pathname, '--model-repository', dir, '--http-port', '0', '--grpc-port', '0', '--allow-metrics', 'false', '--http-address', '127.0.0.1', '--grpc-address', '127.0.0.1', ...(process.env.MODE === 'none' ? [] : ['--model-control-mode', 'poll'])], { stdio: ['ignore', 'pipe', 'pipe'], cwd: process.env.CPU_PROF_DIR ?? process.cwd() });
  const gc: string[] = [];
  createInterface({ input: child.stdout! }).on('line', (l) => gc.push(l));
  const port = await new Promise<number>((res) => createInterface({ input: child.stderr! }).on('line', (l) => { const p = parseStartedLine(l); if (p) res(p.httpPort); }));
  return { child, port, gc };
}
const cpu = async (pid: number) => { const s = (await readFile(`/proc/${pid}/stat`, 'utf8')).split(') ')[1]!.split(' '); return (Number(s[11]) + Number(s[12])) * 10; };
function req(model: string) { const d = new Uint8Array(new Int32Array(16).map((_, i) => i).buffer); return { id: '', modelName: model, inputs: [{ name: 'INPUT0', datatype: 'INT32', shape: [1, 16], data: d }, { name: 'INPUT1', datatype: 'INT32', shape: [1, 16], data: d }], parameters: {} } as never; }
async function window(n: N, s: number) {
  const c = createHttpInferClient('127.0.0.1', n.port, 1); const r = req('simple_0'); const out: number[] = [];
  for (const e = performance.now() + 100; performance.now() < e;) await c.infer(r);
  for (const e = performance.now() + s * 1000; performance.now() < e;) { const t = performance.now(); await c.infer(r); out.push((performance.now() - t) * 1000); }
  await c.close(); return out;
}
const nodes = [await start(await repo(1)), await start(await repo(100))];
for (const n of nodes) await window(n, 2);
const stats = nodes.map(() => ({ samples: [] as number[], p99s: [] as number[], cpuMs: 0, gc0: 0 }));
nodes.forEach((n, i) => (stats[i]!.gc0 = n.gc.length));
for (let r = 0; r < rounds; r++) for (let i = 0; i < 2; i++) {
  const n = nodes[i]!; const c0 = await cpu(n.child.pid!); const w = await window(n, windowS); stats[i]!.cpuMs += (await cpu(n.child.pid!)) - c0;
  stats[i]!.samples.push(...w); stats[i]!.p99s.push(summarizeLatencies(w).p99Us);
}
nodes.forEach((n, i) => {
  const s = stats[i]!; const lines = n.gc.slice(s.gc0);
  const sc = lines.filter((l) => l.includes('Scavenge')); const mc = lines.filter((l) => /Mark-Compact|Mark-sweep|Mark-Sweep/i.test(l));
  const ms = (ls: string[]) => ls.reduce((a, l) => a + Number(/([\d.]+) \/ [\d.]+ ms/.exec(l)?.[1] ?? 0), 0);
  const heap = /([\d.]+) \(([\d.]+)\) MB, /.exec(lines[lines.length - 1] ?? '')?.slice(1, 3).join('/');
  const sum = summarizeLatencies(s.samples);
  console.log(`${i === 0 ? 1 : 100} models: n=${s.samples.length} p50 ${sum.p50Us.toFixed(0)} p99 ${sum.p99Us.toFixed(0)} median-window-p99 ${median(s.p99s).toFixed(0)} us; cpu/req ${(s.cpuMs * 1000 / s.samples.length).toFixed(0)} us; scavenges ${sc.length} (${ms(sc).toFixed(1)} ms), mark ${mc.length} (${ms(mc).toFixed(1)} ms); per 1000 req: ${(sc.length * 1000 / s.samples.length).toFixed(1)} scav; heap last ${heap}`);
  if (process.env.SHOW) console.log(lines.slice(-3).join('\n'));
  const nvp = lines.filter((l) => l.includes('gc=s'));
  if (nvp.length > 0) {
    const sums = new Map<string, number>();
    for (const l of nvp) for (const m of l.matchAll(/([a-z_.]+)=([\d.]+)/g)) sums.set(m[1]!, (sums.get(m[1]!) ?? 0) + Number(m[2]));
    const keys = ['pause', 'scavenge', 'scavenge.roots', 'scavenge.parallel', 'scavenge.update_refs', 'scavenge.weak', 'scavenge.weak_global_handles.process', 'scavenge.free_remembered_set', 'semi_space_copied', 'promoted', 'total_size_before', 'total_size_after', 'holes_size_before'];
    console.log(`  ${nvp.length} scavenges, means: ` + keys.filter((k) => sums.has(k)).map((k) => `${k}=${((sums.get(k) ?? 0) / nvp.length).toFixed(k.includes('size') || k.includes('copied') || k === 'promoted' ? 0 : 2)}`).join(' '));
    if (process.env.ALLKEYS) console.log([...sums.keys()].join(' '));
  }
});
for (const n of nodes) { n.child.kill('SIGTERM'); await new Promise((r) => n.child.once('exit', r)); }
