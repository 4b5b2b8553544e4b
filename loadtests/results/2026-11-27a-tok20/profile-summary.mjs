// Self time by function of a .cpuprofile (top N), and the busy total: node profile-summary.mjs FILE.cpuprofile [N]
import { readFileSync } from 'node:fs';
import { gunzipSync } from 'node:zlib';
const [file, top = '40'] = process.argv.slice(2);
const raw = readFileSync(file);
const p = JSON.parse((file.endsWith('.gz') ? gunzipSync(raw) : raw).toString('utf8'));
const self = new Map();
for (let i = 0; i < p.samples.length; i++) self.set(p.samples[i], (self.get(p.samples[i]) ?? 0) + (p.timeDeltas[i] ?? 0));
const byFn = new Map();
let busy = 0;
for (const n of p.nodes) {
  const us = self.get(n.id) ?? 0;
  const f = n.callFrame;
  if (f.functionName === '(idle)' || f.functionName === '(program)') continue;
  busy += us;
  const key = `${f.functionName || '(anon)'} ${f.url.split('/').pop()}:${f.lineNumber}`;
  byFn.set(key, (byFn.get(key) ?? 0) + us);
}
console.log(`busy ${(busy / 1000).toFixed(0)} ms`);
for (const [k, v] of [...byFn].sort((a, b) => b[1] - a[1]).slice(0, Number(top))) console.log(`${(v / 1000).toFixed(1).padStart(8)} ms ${(100 * v / busy).toFixed(1).padStart(5)}%  ${k}`);
