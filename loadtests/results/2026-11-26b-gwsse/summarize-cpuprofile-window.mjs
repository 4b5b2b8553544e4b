import { readFileSync } from 'node:fs';
const [file, fromS, top, toS] = process.argv.slice(2);
const p = JSON.parse(readFileSync(file, 'utf8'));
const byId = new Map(p.nodes.map((n) => [n.id, n]));
let t = 0; const self = new Map(); let busy = 0;
const from = Number(fromS) * 1e6;
for (let i = 0; i < p.samples.length; i++) {
  t += p.timeDeltas[i];
  if (t < from || (toS !== undefined && t > Number(toS) * 1e6)) continue;
  const n = byId.get(p.samples[i]); const name = n.callFrame.functionName || '(anon)';
  if (name === '(idle)') continue;
  const dt = p.timeDeltas[i + 1] ?? 0; busy += dt;
  const key = `${name} ${n.callFrame.url.split('/').pop()}:${n.callFrame.lineNumber}`;
  self.set(key, (self.get(key) ?? 0) + dt);
}
console.log(`busy ${(busy / 1000).toFixed(0)} ms from ${fromS}s of ${(t / 1e6).toFixed(1)} s`);
for (const [k, v] of [...self].sort((a, b) => b[1] - a[1]).slice(0, Number(top ?? 40))) console.log(`${(100 * v / busy).toFixed(1).padStart(5)}% ${k}`);
