// usage: node trim.mjs FILE SECONDS_FROM_END [TOP] — self-time shares (count-weighted) over the last N seconds.
import { readFileSync } from 'node:fs';
const [file, secs, top = '60', skipEnd = '0'] = process.argv.slice(2);
const p = JSON.parse(readFileSync(file, 'utf8'));
const byId = new Map(p.nodes.map((n) => [n.id, n]));
let t = p.startTime; const times = p.timeDeltas.map((d) => (t += d));
const end = p.endTime - Number(skipEnd) * 1e6, from = end - Number(secs) * 1e6;
const fn = new Map(), files = new Map(); let busy = 0;
const ours = /tessera-node|chunk-/;
for (let i = 0; i < p.samples.length; i++) {
  if (times[i] < from || times[i] > end) continue;
  const n = byId.get(p.samples[i]); const f = n.callFrame;
  if (f.functionName === '(idle)') continue;
  busy++;
  const k = `${f.functionName || '(anon)'} ${f.url.split('/').pop()}:${f.lineNumber}`;
  fn.set(k, (fn.get(k) ?? 0) + 1);
  const file = f.url === '' ? f.functionName : ours.test(f.url) ? 'OURS ' + f.url.split('/').pop() : f.url.split('/').pop();
  files.set(file, (files.get(file) ?? 0) + 1);
}
console.log(`busy samples ${busy}`);
for (const [k, v] of [...fn].sort((a, b) => b[1] - a[1]).slice(0, Number(top))) console.log(`${(100 * v / busy).toFixed(1).padStart(5)}% ${k}`);
console.log('-- by file');
for (const [k, v] of [...files].sort((a, b) => b[1] - a[1]).slice(0, 40)) console.log(`${(100 * v / busy).toFixed(1).padStart(5)}% ${k}`);
let o = 0; for (const [k, v] of files) if (k.startsWith('OURS')) o += v; console.log(`ours total ${(100 * o / busy).toFixed(1)}%`);
