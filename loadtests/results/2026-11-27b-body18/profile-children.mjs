// usage: node children.mjs FILE SECONDS NAME — inclusive samples under NAME split by NAME's direct child (self = NAME itself).
import { readFileSync } from 'node:fs';
const [file, secs, name, skipEnd = '1'] = process.argv.slice(2);
const p = JSON.parse(readFileSync(file, 'utf8'));
const byId = new Map(p.nodes.map((n) => [n.id, n]));
const parent = new Map(); for (const n of p.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
let t = p.startTime; const times = p.timeDeltas.map((d) => (t += d));
const end = p.endTime - Number(skipEnd) * 1e6, from = end - Number(secs) * 1e6;
const label = (n) => `${n.callFrame.functionName || '(anon)'} ${n.callFrame.url.split('/').pop()}:${n.callFrame.lineNumber}`;
const by = new Map(); let busy = 0, under = 0;
for (let i = 0; i < p.samples.length; i++) {
  if (times[i] < from || times[i] > end) continue;
  let n = byId.get(p.samples[i]);
  if (n.callFrame.functionName === '(idle)') continue;
  busy++;
  let child = '(self)';
  for (;;) { const l = label(n); if (l.startsWith(name)) { under++; by.set(child, (by.get(child) ?? 0) + 1); break; } child = l; const pid = parent.get(n.id); if (pid === undefined) break; n = byId.get(pid); }
}
console.log(`busy ${busy}, under ${name}: ${(100 * under / busy).toFixed(1)}%`);
for (const [k, v] of [...by].sort((a, b) => b[1] - a[1])) console.log(`${(100 * v / busy).toFixed(2).padStart(6)}% ${k}`);
