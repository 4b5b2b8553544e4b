import { readFileSync } from 'node:fs';
for (const file of process.argv.slice(2)) {
  const p = JSON.parse(readFileSync(file, 'utf8'));
  const byId = new Map(p.nodes.map((n) => [n.id, n]));
  const out = new Map(); let t = p.startTime; const skip = p.startTime + 2_000_000; let total = 0;
  for (let i = 0; i < p.samples.length; i++) {
    t += p.timeDeltas[i]; const dt = (p.timeDeltas[i + 1] ?? 0) / 1000;
    if (t < skip) continue;
    const cf = byId.get(p.samples[i]).callFrame;
    if (cf.functionName === '(idle)' || cf.functionName === '(program)') continue;
    let c = cf.url;
    if (c.includes('/dist/')) c = 'bundle'; else if (c.startsWith('node:internal/http2')) c = 'node http2'; else if (c.startsWith('node:internal/streams')) c = 'node streams';
    else if (c === '') c = cf.functionName.startsWith('(garbage') ? 'GC' : 'native/other';
    else if (/_http_|node:http$/.test(c)) c = 'node http1'; else c = 'node other';
    out.set(c, (out.get(c) ?? 0) + dt); total += dt;
  }
  console.log(file.split('/').slice(-2)[0], 'total', total.toFixed(0), [...out].sort((a, b) => b[1] - a[1]).map(([k, v]) => `${k} ${v.toFixed(0)}`).join(', '));
}
