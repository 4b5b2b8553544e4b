// share of busy samples (after 2 s) whose nearest bundle frame lies in [lo, hi) of the given chunk, or whose nearest bundle frame is one of the named functions
import { readFileSync } from 'node:fs';
const [file, chunk, lo, hi, names] = process.argv.slice(2);
const fnames = new Set((names ?? '').split(',').filter(Boolean));
const p = JSON.parse(readFileSync(file, 'utf8'));
const byId = new Map(p.nodes.map((x) => [x.id, x]));
const parent = new Map();
for (const x of p.nodes) for (const c of x.children ?? []) parent.set(c, x.id);
let t = p.startTime; const skip = p.startTime + 2_000_000; let busy = 0, region = 0, named = 0;
for (let i = 0; i < p.samples.length; i++) {
  t += p.timeDeltas[i]; const dt = (p.timeDeltas[i + 1] ?? 0) / 1000;
  if (t < skip) continue;
  let id = p.samples[i]; const leaf = byId.get(id).callFrame.functionName;
  if (leaf === '(idle)' || leaf === '(program)') continue;
  busy += dt;
  while (id !== undefined && !byId.get(id).callFrame.url.includes('/dist/')) id = parent.get(id);
  if (id === undefined) continue;
  const f = byId.get(id).callFrame;
  if (f.url.endsWith(chunk) && f.lineNumber + 1 >= Number(lo) && f.lineNumber + 1 < Number(hi)) region += dt;
  else if (fnames.has(f.functionName)) named += dt;
}
console.log(`${file.split('/').slice(-3, -1).join('/')}: busy ${busy.toFixed(0)} ms; opossum ${region.toFixed(1)} ms (${(100 * region / busy).toFixed(2)}%); named [${[...fnames]}] ${named.toFixed(1)} ms (${(100 * named / busy).toFixed(2)}%)`);
