// Self time of a gateway .cpuprofile by step of a streamed token, inside a time window (seconds from the profile's start):
// node profile-steps.mjs FILE [fromS toS] ; without a window prints busy ms per second to find one.
import { readFileSync } from 'node:fs';
const [file, fromS, toS] = process.argv.slice(2);
const p = JSON.parse(readFileSync(file, 'utf8'));
const byId = new Map(p.nodes.map((n) => [n.id, n]));
const parent = new Map();
for (const n of p.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
let t = 0;
const times = p.timeDeltas.map((d) => (t += d));
if (fromS === undefined) {
  const perS = [];
  p.samples.forEach((id, i) => { const n = byId.get(id); const f = n.callFrame.functionName; if (f === '(idle)' || f === '(program)') return; const s = Math.floor(times[i] / 1e6); perS[s] = (perS[s] ?? 0) + (p.timeDeltas[i] ?? 0); });
  console.log(perS.map((v, s) => `${s}s ${((v ?? 0) / 1000).toFixed(1)}`).join('\n'));
  process.exit(0);
}
const from = Number(fromS) * 1e6, to = Number(toS) * 1e6;
// Step of a sample: by its own function first, else by the nearest classified ancestor.
const rules = [
  ['GC', /^\(garbage collector\)$/],
  ['per stream, amortized: request in, auth, admission, node request, stream end', /^(serve3|completion|forwardLlm|parserOnHeadersComplete|parserOnIncoming|parserOnBody|admitPromptTokens|admitPrompt|applyRateLimit|authenticate|authenticateRequest|finishRequest|endReadableNT|emitCloseNT|onconnection|resOnFinish|requestOnConnect|connectionListenerInternal|readIncomingBody|collectIncomingBody|parseLlmApiRequest|beginRequest|emitCloseNT|recordRequest)$/],
  ['socket write to client (node:net, libuv)', /^(writeBuffer|writev|writeGeneric|writevGeneric|_write|_writeGeneric|Writable\.write|write|afterWrite|afterWriteDispatched|onWriteComplete|afterWriteTick|handleWriteReq|uncork|clearBuffer|doWrite|writeOrBuffer)$/],
  ['socket read (libuv, onStreamRead, Readable)', /^(onStreamRead|read|readableAddChunk|addChunk|push|emit|emitReadable_|flow|maybeReadMore_|_read|resume_|resume)$/],
  ['HTTP/2 session (node:http2 frames, streams)', /^(onSessionRead|onStreamClose|onStreamTrailers|onSessionHeaders|writeGeneric2|ondata|onData2)$/],
  ['chunk parse (raw reader, chunked de-framing)', /^(feed|readChunkLine|onChunkSize|takeUntilBlank|hexValue|deliver)$/],
  ['event scan / metering (relay push, scanner, counter)', /^(push|tokensIn|tokensAt|literalTokens|sameBytes|countPieceBytes|countPiece|meterSent|lastEventEnd|concat|add|parsedText|learn|encodeNative|BytePairEncodingCore|encode|countUtf8|countTokens)$/],
  ['framing (frameChunk)', /^frameChunk$/],
  ['relay driver (onData, send, start)', /^(onData|send|start)$/],
  ['charges (settle, take, leases, Redis)', /^(settle|take|valid|runningLow|charged|takeFromLease|renew|evalsha|sendCommand|parseReply|execute)$/],
  ['timers', /^(listOnTimeout|processTimers|Timeout|refresh|insert|unrefActive|_unrefTimer|setTimeout|clearTimeout)$/],
  ['microtasks / ticks', /^(processTicksAndRejections|runMicrotasks|nextTick)$/],
];
const ownUrl = (f) => f.url.includes('/dist/') || f.url.includes('chunk-');
const cat = new Map();
let busy = 0;
const classify = (id) => {
  const n = byId.get(id); const f = n.callFrame;
  if (f.functionName === '(garbage collector)') return 'GC';
  for (const [name, re] of rules) if (re.test(f.functionName)) {
    if (name.startsWith('event scan') && !ownUrl(f) && !/BytePair|encodeNative/.test(f.functionName)) continue;
    if (name.startsWith('socket read') && f.functionName === 'push' && ownUrl(f)) continue;
    return name;
  }
  return undefined;
};
p.samples.forEach((id, i) => {
  if (times[i] < from || times[i] >= to) return;
  const f = byId.get(id).callFrame.functionName;
  if (f === '(idle)' || f === '(program)') return;
  const us = p.timeDeltas[i] ?? 0;
  busy += us;
  let c; let at = id;
  while (at !== undefined && (c = classify(at)) === undefined) at = parent.get(at);
  c ??= 'other';
  if (c === 'other') { const fr = byId.get(id).callFrame; c = `other: ${fr.functionName || '(anon)'} ${fr.url.split('/').pop()}`; }
  cat.set(c, (cat.get(c) ?? 0) + us);
});
const tokens = Number(process.argv[5] ?? NaN);
console.log(`busy ${(busy / 1000).toFixed(1)} ms in [${fromS}, ${toS}) s; tokens ${tokens}: ${(busy / tokens).toFixed(1)} µs per token sampled`);
const rows = [...cat].sort((a, b) => b[1] - a[1]);
for (const [k, v] of rows.slice(0, 16)) console.log(`${(v / 1000).toFixed(1).padStart(8)} ms ${(100 * v / busy).toFixed(1).padStart(5)}% ${(v / tokens).toFixed(1).padStart(7)} µs/token  ${k}`);
