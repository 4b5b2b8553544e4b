// usage: node diff.mjs a.cpuprofile b.cpuprofile [n] : self time by function, a vs b (ms), skipping the first 2 s (startup)
import { readFileSync } from 'node:fs';
function selfBy(file) {
  const p = JSON.parse(readFileSync(file, 'utf8'));
  const byId = new Map(p.nodes.map((n) => [n.id, n]));
  const out = new Map();
  let t = p.startTime, total = 0;
  const skipUntil = p.startTime + 2_000_000;
  for (let i = 0; i < p.samples.length; i++) {
    t += p.timeDeltas[i];
    const dt = p.timeDeltas[i + 1] ?? 0;
    if (t < skipUntil) continue;
    const n = byId.get(p.samples[i]);
    const cf = n.callFrame;
    if (cf.functionName === '(idle)' || cf.functionName === '(program)') continue;
    const url = cf.url.replace(/.*\/dist\//, 'dist/').replace(/chunk-[A-Z0-9]+/, 'chunk');
    const key = `${cf.functionName || '(anon)'} ${url}`;
    out.set(key, (out.get(key) ?? 0) + dt / 1000);
    total += dt / 1000;
  }
  return { out, total };
}
const [a, b] = [selfBy(process.argv[2]), selfBy(process.argv[3])];
const n = Number(process.argv[4] ?? 50);
console.log(`busy after 2s: A ${a.total.toFixed(0)} ms, B ${b.total.toFixed(0)} ms`);
const keys = new Set([...a.out.keys(), ...b.out.keys()]);
const rows = [...keys].map((k) => [k, a.out.get(k) ?? 0, b.out.get(k) ?? 0]).sort((x, y) => (y[1] - y[2]) - (x[1] - x[2]));
console.log('A - B (ms), largest first');
for (const [k, x, y] of rows.slice(0, n)) console.log(`${(x - y).toFixed(1).padStart(7)} ${x.toFixed(1).padStart(7)} ${y.toFixed(1).padStart(7)}  ${k}`);
console.log('... B more than A');
for (const [k, x, y] of rows.slice(-15)) console.log(`${(x - y).toFixed(1).padStart(7)} ${x.toFixed(1).padStart(7)} ${y.toFixed(1).padStart(7)}  ${k}`);
