// Scratch: alternate ready times of two bundles (before/after) with N models, node on core 0.
import { spawn } from 'node:child_process';
import { mkdir, rm, writeFile, readFile, readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { simpleModel } from '../../../gpu-node/src/example-models/index.js';
import { parseStartedLine } from '../../../loadtests/src/lib/processes/node-process.js';

const [count, rounds, ...bundles] = process.argv.slice(2);
const dir = `/tmp/linger-ready-${count}`;
await rm(dir, { recursive: true, force: true });
const files = await simpleModel.build();
for (let i = 0; i < Number(count); i++) for (const f of files) {
  const p = join(dir, `simple_${i}`, f.path); await mkdir(join(p, '..'), { recursive: true });
  await writeFile(p, f.path === 'config.pbtxt' ? String(f.contents).replace('name: "simple"', `name: "simple_${i}"`) : f.contents);
}
const extra = process.env.EXTRA ? process.env.EXTRA.split(' ') : [];
for (let r = 0; r < Number(rounds); r++) for (const b of bundles) {
  const t0 = performance.now();
  const child = spawn('taskset', ['-c', '0', process.execPath, 'bin/tessera-node.js', '--model-repository', dir, '--http-port', '0', '--grpc-port', '0', '--allow-metrics', 'false', '--http-address', '127.0.0.1', '--grpc-address', '127.0.0.1', ...extra], { env: { ...process.env, TESSERA_BUNDLE_DIR: b }, stdio: ['ignore', 'ignore', 'pipe'] });
  const ms = await new Promise<number>((res) => createInterface({ input: child.stderr! }).on('line', (l) => { if (parseStartedLine(l)) res(performance.now() - t0); }));
  const st = await readFile(`/proc/${child.pid}/status`, 'utf8');
  const stat = (await readFile(`/proc/${child.pid}/stat`, 'utf8')).split(') ')[1]!.split(' ');
  const cpuMs = (Number(stat[11]) + Number(stat[12])) * 10;
  const threads = (await readdir(`/proc/${child.pid}/task`)).length;
  console.log(`${b.split('/').pop()} ${count} models: ${ms.toFixed(0)} ms (cpu ${cpuMs} ms), rss ${/VmRSS:\s+(\d+)/.exec(st)?.[1]} kB, ${threads} threads`);
  child.kill('SIGTERM'); await new Promise((r) => child.once('exit', r));
}
await rm(dir, { recursive: true, force: true });
