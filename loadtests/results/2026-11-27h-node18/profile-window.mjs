// node prof.mjs FILE [lastSeconds] [top]: self and inclusive time by function over the last N seconds of samples
import { readFileSync } from 'node:fs';
const [file, lastS = '10', topS = '45'] = process.argv.slice(2);
const p = JSON.parse(readFileSync(file, 'utf8'));
const byId = new Map(p.nodes.map((n) => [n.id, n]));
const parent = new Map();
for (const n of p.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
let t = p.startTime; const times = [];
for (const d of p.timeDeltas) { t += d; times.push(t); }
// The busiest window of lastS seconds (a node profiled in turns idles before and after its own turn).
const bucket = new Map();
for (let i = 0; i < p.samples.length; i++) {
  const fnName = byId.get(p.samples[i]).callFrame.functionName;
  if (fnName === '(idle)' || fnName === '(program)') continue;
  // Serving work only (reads, ticks, worker messages): the startup's module compiling is not the turn.
  let serving = false;
  for (let id = p.samples[i]; id !== undefined && !serving; id = parent.get(id)) serving = /^(onStreamRead|processTicksAndRejections|afterWriteDispatched)$/.test(byId.get(id).callFrame.functionName);
  if (!serving) continue;
  const b = Math.floor(times[i] / 1e5);
  bucket.set(b, (bucket.get(b) ?? 0) + (p.timeDeltas[i + 1] ?? 0));
}
let best = -1, bestStart = Math.floor(p.startTime / 1e5);
const width = Number(lastS) * 10;
for (let b = Math.floor(p.startTime / 1e5); b <= Math.floor(p.endTime / 1e5) - width; b++) {
  let sum = 0;
  for (let k = 0; k < width; k++) sum += bucket.get(b + k) ?? 0;
  if (sum > best) { best = sum; bestStart = b; }
}
const from = bestStart * 1e5, to = from + Number(lastS) * 1e6;
const self = new Map(), incl = new Map(); let busy = 0, total = 0;
const key = (n) => `${n.callFrame.functionName || '(anon)'} ${n.callFrame.url.replace(/^.*\//, '')}:${n.callFrame.lineNumber + 1}`;
for (let i = 0; i < p.samples.length; i++) {
  if (times[i] < from || times[i] > to) continue;
  const dt = p.timeDeltas[i + 1] ?? p.timeDeltas[i];
  total += dt;
  const n = byId.get(p.samples[i]);
  if (n.callFrame.functionName === '(idle)' || n.callFrame.functionName === '(program)') continue;
  busy += dt;
  self.set(key(n), (self.get(key(n)) ?? 0) + dt);
  const seen = new Set();
  for (let id = n.id; id !== undefined; id = parent.get(id)) { const k = key(byId.get(id)); if (seen.has(k)) continue; seen.add(k); incl.set(k, (incl.get(k) ?? 0) + dt); }
}
console.log(`window ${(total/1e6).toFixed(1)} s, busy ${(busy/1e3).toFixed(0)} ms`);
const show = (m, title) => { console.log(`-- ${title}`); [...m].sort((a, b) => b[1] - a[1]).slice(0, Number(topS)).forEach(([k, v]) => console.log(`${(100*v/busy).toFixed(1).padStart(5)}%  ${k}`)); };
show(self, 'self'); show(incl, 'inclusive');
