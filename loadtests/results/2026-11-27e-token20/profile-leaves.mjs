// Self time of the leaf frames below any frame at FILE-LINE `chunk.js:LINE`, in [fromS,toS): node profile-leaves.mjs FILE URLPART LINE fromS toS
import { readFileSync } from 'node:fs';
const [file, urlPart, line, fromS, toS] = process.argv.slice(2);
const p = JSON.parse(readFileSync(file, 'utf8'));
const byId = new Map(p.nodes.map((n) => [n.id, n]));
const parent = new Map(); for (const n of p.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
let t = 0; const times = p.timeDeltas.map((d) => (t += d));
const out = new Map();
p.samples.forEach((id, i) => {
  if (times[i] < fromS * 1e6 || times[i] >= toS * 1e6) return;
  let at = id; let under = false;
  while (at !== undefined) { const f = byId.get(at).callFrame; if (f.url.includes(urlPart) && f.lineNumber === Number(line)) { under = true; break; } at = parent.get(at); }
  if (!under) return;
  const f = byId.get(id).callFrame; const k = `${f.functionName || '(anon)'} ${f.url.split('/').pop()}:${f.lineNumber}`;
  out.set(k, (out.get(k) ?? 0) + p.timeDeltas[i]);
});
for (const [k, v] of [...out].sort((a, b) => b[1] - a[1]).slice(0, 20)) console.log(`${(v / 1000).toFixed(1).padStart(7)} ms  ${k}`);
