// node step-table.mjs PROFILE [FROM_END_S] [WINDOW_S]: self time of the main thread's profile in a window, by step.
import { readFileSync, existsSync } from 'node:fs';
import { SourceMap } from 'node:module';
import { fileURLToPath } from 'node:url';
const [file, fromEnd = '12', win = '10'] = process.argv.slice(2);
const p = JSON.parse(readFileSync(file, 'utf8'));
const byId = new Map(p.nodes.map((n) => [n.id, n]));
const maps = new Map();
function mapOf(url) {
  if (!maps.has(url)) {
    let m;
    try { const path = fileURLToPath(url) + '.map'; if (existsSync(path)) m = new SourceMap(JSON.parse(readFileSync(path, 'utf8'))); } catch {}
    maps.set(url, m);
  }
  return maps.get(url);
}
function source(cf) {
  if (!cf.url.startsWith('file:')) return cf.url || cf.functionName;
  const m = mapOf(cf.url);
  if (!m) return cf.url;
  const e = m.findEntry(cf.lineNumber, cf.columnNumber);
  return (e && e.originalSource) ? e.originalSource.replace(/^.*?(shared|gpu-node|gateway|loadtests)\//, '$1/') : cf.url;
}
const WRITE_FN = /^(send|flush|write|respond|end|encode|gather|sendTrailers|sendHeaders|sendData|queue)/i;
function step(cf) {
  const fn = cf.functionName, src = source(cf);
  if (fn === '(garbage collector)') return 'GC';
  if (fn === '(program)') return '(program: V8/native outside JS)';
  if (/raw-http2\/(frame-reader|hpack-decoder|huffman|recent-strings|request-headers)/.test(src)) return 'frame read + hpack decode';
  if (/raw-http2\/(hpack-encoder|turn-output)/.test(src)) return 'answer write (h2 framing, hpack encode)';
  if (/raw-http2\//.test(src)) return WRITE_FN.test(fn) ? 'answer write (h2 framing, hpack encode)' : 'frame read + hpack decode';
  if (/grpc\/(infer-request-scan|infer-codec|parameter-codec|typed-contents|protobuf-parameters-decode)/.test(src) || /tensors\/(validate|datatype)/.test(src)) return 'request decode';
  if (/grpc\/(infer-response-encoder|protobuf-writer|protobuf-parameters|grpc-frame)|answer-head-memo/.test(src)) return 'answer encode';
  if (/grpc\/h2-unary-call|server\/grpc\/|grpc-timeout|raw-h2-front|taking-front/.test(src)) return 'call handling (per-call object, trailers)';
  if (/request-validator|validated-inputs|messages\//.test(src)) return 'validation';
  if (/scheduler\//.test(src)) return 'scheduler + batcher';
  if (/models\/|server-api\/|repository\//.test(src)) return 'core.infer + stats';
  if (/backends\/|tensors\/batch|workers\//.test(src) || fn === 'postMessage' || /worker\/io|messageport/.test(src)) return 'hand-off to the instance thread (plan, gather, post, split)';
  if (/node:net|stream_base_commons|streams\/|writeBuffer|writev|utf8Write|onStreamRead|node:buffer|internal\/buffer/.test(src) || /^(writeBuffer|writev|writeUtf8String|utf8Write|copy)$/.test(fn)) return 'socket I/O + Buffer';
  if (/events|task_queues|async_hooks|timers|process\//.test(src) || fn === 'runMicrotasks') return 'events, ticks, timers, microtasks';
  if (/_http|http_server|node:http|fetch|undici/.test(src)) return 'stats HTTP (the bench polling)';
  return 'other: ' + (src.length > 60 ? src.slice(-60) : src);
}
let t = p.startTime; const times = p.samples.map((_, i) => (t += p.timeDeltas[i]));
let start, end;
if (fromEnd === 'busiest') {
  // The busiest WINDOW_S-second stretch: the turn under load, wherever it lies in the process's life.
  const buckets = new Map();
  for (let i = 0; i < p.samples.length; i++) { if (byId.get(p.samples[i]).callFrame.functionName === '(idle)') continue; const b = Math.floor((times[i] - p.startTime) / 1e6); buckets.set(b, (buckets.get(b) ?? 0) + (p.timeDeltas[i + 1] ?? 0)); }
  const last = Math.max(...buckets.keys()); let best = -1, at = 0;
  for (let b = Number(process.env.SKIP_S ?? 0); b <= last; b++) { let sum = 0; for (let k = b; k < b + Number(win); k++) sum += buckets.get(k) ?? 0; if (sum > best) { best = sum; at = b; } }
  start = p.startTime + at * 1e6; end = start + Number(win) * 1e6;
} else { end = p.endTime - Number(fromEnd) * 1e6 + Number(win) * 1e6; start = end - Number(win) * 1e6; }
const by = new Map(); let busy = 0;
for (let i = 0; i < p.samples.length; i++) {
  if (times[i] < start || times[i] > end) continue;
  const n = byId.get(p.samples[i]); if (n.callFrame.functionName === '(idle)') continue;
  const dt = p.timeDeltas[i + 1] ?? 0; busy += dt; const k = step(n.callFrame); by.set(k, (by.get(k) ?? 0) + dt);
}
console.log(JSON.stringify({ busyMs: busy / 1e3, steps: Object.fromEntries([...by].sort((a, b) => b[1] - a[1]).map(([k, v]) => [k, +(100 * v / busy).toFixed(1)])) }, null, 1));
