// usage: node parents.mjs FILE SECONDS NAME [DEPTH] — callers (DEPTH frames up) of samples whose self frame is NAME.
import { readFileSync } from 'node:fs';
const [file, secs, name, depth = '3', skipEnd = '1'] = process.argv.slice(2);
const p = JSON.parse(readFileSync(file, 'utf8'));
const byId = new Map(p.nodes.map((n) => [n.id, n]));
const parent = new Map(); for (const n of p.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
let t = p.startTime; const times = p.timeDeltas.map((d) => (t += d));
const end = p.endTime - Number(skipEnd) * 1e6, from = end - Number(secs) * 1e6;
const out = new Map(); let total = 0;
const label = (n) => `${n.callFrame.functionName || '(anon)'}@${n.callFrame.url.split('/').pop()}:${n.callFrame.lineNumber}`;
for (let i = 0; i < p.samples.length; i++) {
  if (times[i] < from || times[i] > end) continue;
  let n = byId.get(p.samples[i]);
  if (n.callFrame.functionName !== name) continue;
  total++;
  const chain = [];
  for (let d = 0; d < Number(depth); d++) { const pid = parent.get(n.id); if (pid === undefined) break; n = byId.get(pid); chain.push(label(n)); }
  const k = chain.join(' < ');
  out.set(k, (out.get(k) ?? 0) + 1);
}
console.log(`${name}: ${total} samples`);
for (const [k, v] of [...out].sort((a, b) => b[1] - a[1]).slice(0, 15)) console.log(`${String(v).padStart(5)} ${k}`);
