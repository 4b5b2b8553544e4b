// Self time per source module (dist chunk lines mapped to their `// path` banner) within the busiest window of a .cpuprofile.
import { readFileSync } from 'node:fs';
const [file, windowS = '9', top = '30', fromS] = process.argv.slice(2);
const p = JSON.parse(readFileSync(file, 'utf8'));
const byId = new Map(p.nodes.map((n) => [n.id, n]));
const times = []; let t = p.startTime;
for (const d of p.timeDeltas) { t += d; times.push(t); }
const idle = (n) => n.callFrame.functionName === '(idle)';
// busiest window
const w = Number(windowS) * 1e6; let best = [0, 0], j = 0, count = 0;
const busy = p.samples.map((s) => (idle(byId.get(s)) ? 0 : 1));
for (let i = 0; i < times.length; i++) { count += busy[i]; while (times[i] - times[j] > w) count -= busy[j++]; if (count > best[1]) best = [j, count]; }
let [from] = best; if (fromS !== undefined) { from = times.findIndex((x) => x - p.startTime >= Number(fromS) * 1e6); } const until = times[from] + w;
const banners = new Map();
const bannerOf = (url, line) => {
  if (!url.startsWith('file://') || !url.includes('/dist/')) return url.replace(/^node:internal\//, 'node:');
  let list = banners.get(url);
  if (!list) { list = []; readFileSync(new URL(url), 'utf8').split('\n').forEach((l, i) => { if (/^\/\/ (node_modules|gateway|shared|gpu-node)\//.test(l)) list.push([i, l.slice(3)]); }); banners.set(url, list); }
  let found = 'dist?'; for (const [i, name] of list) { if (i <= line) found = name; else break; } return found;
};
const mod = new Map(), fn = new Map(); let total = 0;
for (let i = from; i < times.length && times[i] <= until; i++) {
  const n = byId.get(p.samples[i]); if (idle(n)) continue;
  const dt = (p.timeDeltas[i + 1] ?? 0); total += dt;
  const m = n.callFrame.url === '' ? `(native) ${n.callFrame.functionName}` : bannerOf(n.callFrame.url, n.callFrame.lineNumber);
  mod.set(m, (mod.get(m) ?? 0) + dt);
  const f = `${n.callFrame.functionName || '(anon)'}  ${m}`; fn.set(f, (fn.get(f) ?? 0) + dt);
}
console.log(`window ${windowS} s from +${((times[from] - p.startTime) / 1e6).toFixed(1)} s: busy ${(total / 1000).toFixed(0)} ms`);
for (const [title, map] of [['by module', mod], ['by function', fn]]) {
  console.log(`\n${title}`);
  [...map].sort((a, b) => b[1] - a[1]).slice(0, Number(top)).forEach(([k, v]) => console.log(`${(100 * v / total).toFixed(1).padStart(5)}% ${(v / 1000).toFixed(0).padStart(5)} ms  ${k}`));
}
