import { readFileSync } from 'node:fs';
const [file, names] = process.argv.slice(2);
const set = new Set(names.split(','));
const p = JSON.parse(readFileSync(file, 'utf8'));
const byId = new Map(p.nodes.map((x) => [x.id, x]));
let t = p.startTime; const skip = p.startTime + 2_000_000; let busy = 0; const by = new Map();
for (let i = 0; i < p.samples.length; i++) {
  t += p.timeDeltas[i]; const dt = (p.timeDeltas[i + 1] ?? 0) / 1000;
  if (t < skip) continue;
  const f = byId.get(p.samples[i]).callFrame;
  if (f.functionName === '(idle)' || f.functionName === '(program)') continue;
  busy += dt;
  if (f.url.includes('/dist/') && set.has(f.functionName)) by.set(f.functionName, (by.get(f.functionName) ?? 0) + dt);
}
const sum = [...by.values()].reduce((a, b) => a + b, 0);
console.log(`${file.split('/').slice(-3, -1).join('/')}: busy ${busy.toFixed(0)}, front-door functions ${sum.toFixed(0)} ms (${(100 * sum / busy).toFixed(1)}%): ${[...by].sort((a, b) => b[1] - a[1]).map(([k, v]) => `${k} ${v.toFixed(0)}`).join(', ')}`);
