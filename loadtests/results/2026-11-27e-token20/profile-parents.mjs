// Callers (stack above) of frames named NAME: node profile-parents.mjs FILE NAME depth
import { readFileSync } from 'node:fs';
const [file, name, depth = '4'] = process.argv.slice(2);
const p = JSON.parse(readFileSync(file, 'utf8'));
const byId = new Map(p.nodes.map((n) => [n.id, n]));
const parent = new Map(); for (const n of p.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
const self = new Map(); p.samples.forEach((id, i) => self.set(id, (self.get(id) ?? 0) + p.timeDeltas[i]));
const out = new Map();
for (const n of p.nodes) if (n.callFrame.functionName === name) {
  const chain = []; let at = parent.get(n.id);
  for (let d = 0; d < Number(depth) && at !== undefined; d++) { const f = byId.get(at).callFrame; chain.push(`${f.functionName || '(anon)'}@${f.url.split('/').pop()}:${f.lineNumber}`); at = parent.get(at); }
  const k = chain.join(' < '); out.set(k, (out.get(k) ?? 0) + (self.get(n.id) ?? 0));
}
for (const [k, v] of [...out].sort((a, b) => b[1] - a[1]).slice(0, 8)) console.log(`${(v / 1000).toFixed(1)} ms  ${k}`);
