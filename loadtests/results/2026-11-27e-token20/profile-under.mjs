// Inclusive time of the direct children of every frame named NAME, inside [fromS, toS): node profile-under.mjs FILE NAME fromS toS
import { readFileSync } from 'node:fs';
const [file, name, fromS, toS] = process.argv.slice(2);
const p = JSON.parse(readFileSync(file, 'utf8'));
const byId = new Map(p.nodes.map((n) => [n.id, n]));
const parent = new Map();
for (const n of p.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
let t = 0; const times = p.timeDeltas.map((d) => (t += d));
const out = new Map();
p.samples.forEach((id, i) => {
  if (times[i] < fromS * 1e6 || times[i] >= toS * 1e6) return;
  let child = id, at = parent.get(id);
  while (at !== undefined && byId.get(at).callFrame.functionName !== name) { child = at; at = parent.get(at); }
  if (at === undefined) return;
  const f = byId.get(child).callFrame; const k = `${f.functionName || '(anon)'} ${f.url.split('/').pop()}:${f.lineNumber}`;
  out.set(k, (out.get(k) ?? 0) + p.timeDeltas[i]);
});
for (const [k, v] of [...out].sort((a, b) => b[1] - a[1]).slice(0, 15)) console.log(`${(v / 1000).toFixed(1).padStart(7)} ms  ${k}`);
