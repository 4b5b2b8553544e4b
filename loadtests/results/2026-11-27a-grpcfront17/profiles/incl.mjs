// inclusive ms under each named function (first occurrence on the stack), after 2 s
import { readFileSync } from 'node:fs';
const [file, ...names] = process.argv.slice(2);
const p = JSON.parse(readFileSync(file, 'utf8'));
const byId = new Map(p.nodes.map((n) => [n.id, n]));
const parent = new Map();
for (const n of p.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
const incl = new Map(names.map((n) => [n, 0])); let t = p.startTime; const skip = p.startTime + 2_000_000; let total = 0;
for (let i = 0; i < p.samples.length; i++) {
  t += p.timeDeltas[i]; const dt = (p.timeDeltas[i + 1] ?? 0) / 1000;
  if (t < skip) continue;
  let id = p.samples[i]; const leaf = byId.get(id).callFrame.functionName;
  if (leaf === '(idle)' || leaf === '(program)') continue;
  total += dt;
  const seen = new Set();
  while (id !== undefined) { const f = byId.get(id).callFrame; const key = f.functionName; if (incl.has(key) && !seen.has(key)) { incl.set(key, incl.get(key) + dt); seen.add(key); } id = parent.get(id); }
}
console.log(file.split('/').slice(-2)[0], 'busy', total.toFixed(0));
for (const [k, v] of incl) console.log(v.toFixed(1).padStart(8), k);
