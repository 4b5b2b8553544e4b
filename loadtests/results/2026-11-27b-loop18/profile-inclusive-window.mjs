// usage: node incl.mjs FILE SECONDS [TOP] — inclusive shares (count-weighted) by function over the last N seconds.
import { readFileSync } from 'node:fs';
const [file, secs, top = '60', skipEnd = '1'] = process.argv.slice(2);
const p = JSON.parse(readFileSync(file, 'utf8'));
const byId = new Map(p.nodes.map((n) => [n.id, n]));
const parent = new Map(); for (const n of p.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
let t = p.startTime; const times = p.timeDeltas.map((d) => (t += d));
const end = p.endTime - Number(skipEnd) * 1e6, from = end - Number(secs) * 1e6;
const incl = new Map(); let busy = 0;
const label = (n) => `${n.callFrame.functionName || '(anon)'} ${n.callFrame.url.split('/').pop()}:${n.callFrame.lineNumber}`;
for (let i = 0; i < p.samples.length; i++) {
  if (times[i] < from || times[i] > end) continue;
  let n = byId.get(p.samples[i]);
  if (n.callFrame.functionName === '(idle)') continue;
  busy++;
  const seen = new Set();
  for (;;) { const l = label(n); if (!seen.has(l)) { seen.add(l); incl.set(l, (incl.get(l) ?? 0) + 1); } const pid = parent.get(n.id); if (pid === undefined) break; n = byId.get(pid); }
}
console.log(`busy ${busy}`);
for (const [k, v] of [...incl].sort((a, b) => b[1] - a[1]).slice(0, Number(top))) console.log(`${(100 * v / busy).toFixed(1).padStart(5)}% ${k}`);
