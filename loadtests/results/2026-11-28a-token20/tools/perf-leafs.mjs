// For main-thread samples in a window whose classification is STEP, counts their top frames (leaf..depth).
import { readFileSync } from 'node:fs';
const [scriptFile, marksFile, tid, a, b, stepName, depthArg] = process.argv.slice(2);
process.argv = [process.argv[0], process.argv[1]];
const depth = Number(depthArg ?? 4);
const { marks } = JSON.parse(readFileSync(marksFile, 'utf8'));
const wins = marks.filter((m) => m[a] > 0 && m[b] > 0).map((m) => [m[a], m[b]]).sort((x, y) => x[0] - y[0]);
const src = readFileSync('/tmp/t20/tools/perf-steps.mjs', 'utf8');
const rulesSrc = src.slice(src.indexOf('const rules = ['), src.indexOf('const kernelStep'));
const classifySrc = src.slice(src.indexOf('const kernelStep'), src.indexOf('// Parse samples.'));
const { rules, classify } = new Function(`${rulesSrc}${classifySrc}; return { rules, classify };`)();
const counts = new Map();
for (const block of readFileSync(scriptFile, 'utf8').split('\n\n')) {
  const lines = block.split('\n').filter((l) => l.trim() !== '');
  const head = /^\s*(\d+)\s+([\d.]+):/.exec(lines[0] ?? '');
  if (head === null || head[1] !== tid) continue;
  const t = Number(head[2]) * 1e9;
  if (!wins.some(([s, e]) => t >= s && t <= e)) continue;
  const frames = lines.slice(1).map((l) => l.trim().replace(/^[0-9a-f]+ /, (m) => (m.startsWith('ffffffff') ? m : '')).trim());
  if (classify(frames) !== stepName) continue;
  const key = frames.slice(0, depth).map((f) => f.replace(/file:\/\/\S*\//, '').slice(0, 90)).join(' <- ');
  counts.set(key, (counts.get(key) ?? 0) + 1);
}
for (const [k, c] of [...counts].sort((x, y) => y[1] - x[1]).slice(0, 25)) console.log(String(c).padStart(4), k);
