// Scratch: unload/reload cycles (explicit mode) RSS, for each bundle, node on core 0.
import { spawn } from 'node:child_process';
import { mkdir, rm, writeFile, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { simpleModel } from '../../../gpu-node/src/example-models/index.js';
import { parseStartedLine } from '../../../loadtests/src/lib/processes/node-process.js';

const [count, cycles, ...bundles] = process.argv.slice(2);
const dir = `/tmp/linger-cycles-${count}`;
await rm(dir, { recursive: true, force: true });
const files = await simpleModel.build();
const names = Array.from({ length: Number(count) }, (_, i) => `simple_${i}`);
for (const n of names) for (const f of files) {
  const p = join(dir, n, f.path); await mkdir(join(p, '..'), { recursive: true });
  await writeFile(p, f.path === 'config.pbtxt' ? String(f.contents).replace('name: "simple"', `name: "${n}"`) : f.contents);
}
const rss = async (pid: number) => Number(/VmRSS:\s+(\d+)/.exec(await readFile(`/proc/${pid}/status`, 'utf8'))?.[1]) / 1024;
const post = async (port: number, path: string) => { const r = await fetch(`http://127.0.0.1:${port}${path}`, { method: 'POST', body: '{}' }); await r.arrayBuffer(); };
for (const b of bundles) {
  const child = spawn('taskset', ['-c', '0', process.execPath, new URL('../../../bin/tessera-node.js', import.meta.url).pathname, '--model-repository', dir, '--http-port', '0', '--grpc-port', '0', '--allow-metrics', 'false', '--http-address', '127.0.0.1', '--grpc-address', '127.0.0.1', '--model-control-mode', 'explicit', '--load-model', '*'], { env: { ...process.env, TESSERA_BUNDLE_DIR: b }, stdio: ['ignore', 'ignore', 'pipe'] });
  const port = await new Promise<number>((res) => createInterface({ input: child.stderr! }).on('line', (l) => { const p = parseStartedLine(l); if (p) res(p.httpPort); }));
  const out: string[] = [];
  for (let c = 0; c < Number(cycles); c++) {
    for (const n of names) await post(port, `/v2/repository/models/${n}/unload`);
    await new Promise((r) => setTimeout(r, 300));
    const q = [...names];
    await Promise.all(Array.from({ length: 4 }, async () => { for (let n = q.shift(); n; n = q.shift()) await post(port, `/v2/repository/models/${n}/load`); }));
    out.push((await rss(child.pid!)).toFixed(1));
  }
  await new Promise((r) => setTimeout(r, 4000));
  const threads = (await (await import('node:fs/promises')).readdir(`/proc/${child.pid}/task`)).length;
  console.log(`${b.split('/').pop()}: ${out.join(', ')} MB; 4 s later ${(await rss(child.pid!)).toFixed(1)} MB, ${threads} threads`);
  child.kill('SIGTERM'); await new Promise((r) => child.once('exit', r));
}
await rm(dir, { recursive: true, force: true });
