// Joins `perf script` samples (recorded with -k CLOCK_MONOTONIC, the marks' clock) of the gateway's main thread
// with the llm-ttft-probe marks, and gives each first-token step's CPU per stream by what the stack was doing.
// usage: node perf-steps.mjs SCRIPT_TXT MARKS_JSON MAIN_TID HZ
import { readFileSync } from 'node:fs';
const [scriptFile, marksFile, tidArg, hzArg] = process.argv.slice(2);
const usPerSample = 1e6 / Number(hzArg);
const { marks } = JSON.parse(readFileSync(marksFile, 'utf8'));
const windows = { 'request read -> node request write called [0->1]': [0, 1], 'the node request write call [1->15]': [1, 15], "node's first data -> first client write [3->4]": [3, 4] };
const rules = [
  [/llm-ttft-marks/, 'marks (diagnosis only)'],
  [/^(createAbortSignal|AbortController|get signal)$/, "the client's AbortController"],
  [/^(randomUUID|getBufferedUUID|serializeUUID|beginRequest|extractTraceContext)$/, 'request id and span'],
  [/^(authenticate|authenticateRequest|presentedKey|findByKeyHash|lookupShared|hashOf)$/, 'auth (key memo, tenant lookup)'],
  [/^(parseLlmApiRequest|completionPrompt|chatPrompt|integerAtLeast|numberIn)$/, 'JSON parse and OpenAI checks'],
  [/^(readTierBody|readBody)$/, 'body read'],
  [/^(applyRateLimit|applyByteRate|admitPrompt|admitNoting|admitPromptTokens|utf8Length|byteLevelBound|chargePrompt)$/, 'limits and token budget'],
  [/^(acquire|admit|dispatch|leastLoaded|eligible|capacity|dispatched|room|roomOn|claim|schedulePump|queueFor)$/, 'LLM router admission'],
  [/^(render|renderHead)$/, 'node request render'],
  [/^(fire|run|call|import_opossum\.default\.timeout)$/, 'upstream choice, breaker, socket take and write (JS)'],
  [/^(onHead|takeUntilBlank|feed|readChunkLine|onChunkSize)$/, "node answer's head and chunk parse"],
  [/^(streamed|SseRelay|CompletionMeter|onAnswer)$/, 'relay and meter set-up'],
  [/^(renderStreamHead|withHeaders|withHeaders2|httpDate|startStream)$/, "client answer's head"],
  [/^(relayToRawStream|driveRelay|directBodyOf)$/, 'relay driver set-up'],
  [/^(push|meterSent|frameStreamChunk|deliver|scan)$/, 'first event: scan, meter, frame'],
  [/^(received|pump|startServing|serve|serve4|serve2|serve3|watchClient)$/, 'raw front door: request read and serve set-up'],
  [/^(completion|forwardLlm|forwardWhileAdmitting|admitAndForward|forward|forwardSettling|upstreamAbortOf)$/, 'LLM service glue (async steps, request objects)'],
];
const kernelStep = (frames) => {
  const all = frames.join(' ');
  if (/tcp_sendmsg|sock_sendmsg|__sys_sendto|do_writev|ksys_write/.test(all)) return 'kernel: socket write (loopback TCP: the receiver\'s side too)';
  if (/tcp_recvmsg|sock_recvmsg|ksys_read|sock_read_iter/.test(all)) return 'kernel: socket read';
  if (/epoll/.test(all)) return 'kernel: epoll';
  if (/getrusage/.test(all)) return 'marks (diagnosis only)';
  return 'kernel: other (interrupts, scheduling, page faults, timers)';
};
const classify = (frames) => {
  if (frames.length > 0 && /^ffffffff/.test(frames[0])) return kernelStep(frames);
  for (const f of frames) {
    if (/Heap::|Scavenge|MarkCompact|ConcurrentMarking|MinorMC|GCTracer|IncrementalMarking/.test(f)) return 'GC';
    if (/Compiler::|BaselineBatchCompiler|Maglev|TurboFan|Turbofan|BytecodeGenerator|Parser::|CompileLazy/.test(f)) return 'compiling (lazy compiles, baseline batches)';
    const js = /(?:^| )JS:[*^~+]?(\S*) (\S+)/.exec(f);
    if (js === null) continue;
    const name = js[1], file = js[2];
    if (/llm-ttft-marks/.test(file)) return 'marks (diagnosis only)';
    for (const [re, step] of rules) if (re.test(name)) return step;
  }
  return 'other (event loop, streams, microtasks, runtime)';
};
// Parse samples.
const text = readFileSync(scriptFile, 'utf8');
const samples = [];
for (const block of text.split('\n\n')) {
  const lines = block.split('\n').filter((l) => l.trim() !== '');
  if (lines.length === 0) continue;
  const head = /^\s*(\d+)\s+([\d.]+):/.exec(lines[0]);
  if (head === null) continue;
  samples.push({ tid: head[1], t: Number(head[2]) * 1e9, frames: lines.slice(1).map((l) => l.trim().replace(/^[0-9a-f]+ /, (m) => (m.startsWith('ffffffff') ? m : '')).trim()) });
}
// Kernel addresses were stripped above except ffffffff ones; keep a flag per frame instead.
for (const s of samples) s.frames = s.frames.map((f) => f);
const main = samples.filter((s) => s.tid === tidArg);
const first = main.length ? main[0].t : 0, last = main.length ? main[main.length - 1].t : 0;
const inside = marks.filter((m) => m[0] >= first && m[4] <= last && m[4] > 0);
console.log(`samples: ${samples.length} (main thread ${main.length}); streams inside the recording: ${inside.length}; ${usPerSample.toFixed(0)} µs per sample`);
for (const [title, [a, b]] of Object.entries(windows)) {
  const wins = inside.filter((m) => m[b] > 0 && m[a] > 0).map((m) => [m[a], m[b]]).sort((x, y) => x[0] - y[0]);
  const by = new Map();
  let n = 0, w = 0, wall = 0;
  for (const [s, e] of wins) wall += e - s;
  for (const s of main) {
    while (w < wins.length && wins[w][1] < s.t) w++;
    if (w >= wins.length) break;
    if (s.t < wins[w][0]) continue;
    const step = classify(s.frames);
    by.set(step, (by.get(step) ?? 0) + 1);
    n++;
  }
  const per = (c) => ((c * usPerSample) / wins.length).toFixed(1);
  console.log(`\n${title}: ${wins.length} streams, wall ${(wall / 1000 / wins.length).toFixed(0)} µs per stream, sampled CPU ${per(n)} µs per stream`);
  for (const [step, c] of [...by].sort((x, y) => y[1] - x[1])) console.log(`  ${per(c).padStart(7)} µs  ${step}`);
}
