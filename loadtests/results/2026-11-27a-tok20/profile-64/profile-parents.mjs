// Self time of the named functions by their callers (4 frames up): node profile-parents.mjs FILE.cpuprofile NAME...
import { readFileSync } from 'node:fs';
const [file, ...names] = process.argv.slice(2);
const p = JSON.parse(readFileSync(file, 'utf8'));
const byId = new Map(p.nodes.map((n) => [n.id, n]));
const parent = new Map();
for (const n of p.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
const dt = new Map();
const ids = p.samples; const deltas = p.timeDeltas;
for (let i = 0; i < ids.length; i++) dt.set(ids[i], (dt.get(ids[i]) ?? 0) + (deltas[i] ?? 0));
for (const name of names) {
  const agg = new Map();
  for (const n of p.nodes) {
    if (n.callFrame.functionName !== name) continue;
    const chain = [];
    let id = parent.get(n.id);
    for (let d = 0; d < 4 && id !== undefined; d++) { const f = byId.get(id).callFrame; chain.push(`${f.functionName || '(anon)'}@${f.url.split('/').pop()}:${f.lineNumber}`); id = parent.get(id); }
    const key = chain.join(' < ');
    agg.set(key, (agg.get(key) ?? 0) + (dt.get(n.id) ?? 0));
  }
  console.log(`== ${name}`);
  for (const [k, v] of [...agg].sort((a, b) => b[1] - a[1]).slice(0, 5)) console.log(`  ${(v / 1000).toFixed(1)} ms  ${k}`);
}
