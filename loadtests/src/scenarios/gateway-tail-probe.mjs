// Loaded into the gateway under test with `node --import` by gateway-c1-tail.ts (plain JS, so it runs
// in front of the production bundle without tsx). It records, with process.hrtime (CLOCK_MONOTONIC, the
// clock the load generator reads too), what the gateway did and when: every HTTP request's server time
// ('request' emitted -> response 'finish'), every GC (perf_hooks), every timer callback's synchronous
// run, and every write on an outgoing socket (Redis, by port). SIGUSR2 writes it all to
// TAIL_PROBE_OUT as JSON. Diagnosis only: the wrappers cost a few µs per timer and request.
import { closeSync, openSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import { Session } from 'node:inspector';
import net from 'node:net';
import { PerformanceObserver, performance } from 'node:perf_hooks';
import v8 from 'node:v8';

const out = process.env.TAIL_PROBE_OUT;
// TAIL_PROBE_STDOUT=<file>: fd 1 becomes that file, so V8's own traces (--trace-gc) land there; the
// gateway logs on stderr, which the bench keeps reading.
if (process.env.TAIL_PROBE_STDOUT) {
  closeSync(1);
  const fd = openSync(process.env.TAIL_PROBE_STDOUT, 'a');
  if (fd !== 1) throw new Error(`stdout redirect took fd ${fd}`);
}
const nowNs = () => Number(process.hrtime.bigint());
const perfOriginNs = nowNs() - performance.now() * 1e6;

/** [startNs, durationMs, kind] */
const gc = [];
/** [startNs, durationNs, kind, delayMs, label] */
const timers = [];
/** [startNs, durationNs, young-generation bytes allocated during it (-1: a GC ran in between)] */
const requests = [];
// TAIL_PROBE_ALLOC=1: read the young generation's use at each request's start and end (a few µs each).
const sampleAlloc = process.env.TAIL_PROBE_ALLOC === '1';
const youngUsed = () => {
  let used = 0;
  for (const space of v8.getHeapSpaceStatistics()) if (space.space_name === 'new_space' || space.space_name === 'new_large_object_space') used += space.space_used_size;
  return used;
};
let gcCount = 0;
/** [gapNs, young bytes allocated between the last request's end and this one's start] (TAIL_PROBE_ALLOC=1) */
const gaps = [];
let lastEnd = { ns: 0, used: 0, gc: -1 };
/** [atNs, remotePort, bytes] */
const outgoing = [];

new PerformanceObserver((list) => {
  gcCount++;
  for (const entry of list.getEntries()) gc.push([perfOriginNs + entry.startTime * 1e6, entry.duration, entry.detail?.kind ?? 0]);
}).observe({ entryTypes: ['gc'] });

// A label only for callbacks that ran long enough to matter; the rest keep the delay alone.
const LABEL_OVER_NS = 100_000;
const label = (fn) => fn.name || String(fn).slice(0, 160).replace(/\s+/g, ' ');

function wrapTimer(original, kind) {
  return function wrappedTimer(callback, ms, ...args) {
    if (typeof callback !== 'function') return original.call(this, callback, ms, ...args);
    const timed = function (...callArgs) {
      const t0 = nowNs();
      try {
        return callback.apply(this, callArgs);
      } finally {
        const took = nowNs() - t0;
        timers.push([t0, took, kind, ms ?? 0, took > LABEL_OVER_NS ? label(callback) : '']);
      }
    };
    return original.call(this, timed, ms, ...args);
  };
}
globalThis.setTimeout = wrapTimer(globalThis.setTimeout, 'timeout');
globalThis.setInterval = wrapTimer(globalThis.setInterval, 'interval');

const serverEmit = http.Server.prototype.emit;
http.Server.prototype.emit = function (event, req, res) {
  if (event === 'request') {
    if (!heapStarted && heapFrom > 0 && requests.length + 1 >= heapFrom && sampling) startHeapSampling();
    const t0 = nowNs();
    const used0 = sampleAlloc ? youngUsed() : 0;
    const gc0 = gcCount;
    if (sampleAlloc && lastEnd.gc === gc0) gaps.push([t0 - lastEnd.ns, used0 - lastEnd.used]);
    res.once('finish', () => {
      const t1 = nowNs();
      const used1 = sampleAlloc ? youngUsed() : 0;
      requests.push([t0, t1 - t0, sampleAlloc && gcCount === gc0 ? used1 - used0 : -1]);
      lastEnd = { ns: t1, used: used1, gc: gcCount };
    });
  }
  return serverEmit.apply(this, arguments);
};

const socketWrite = net.Socket.prototype.write;
net.Socket.prototype.write = function (chunk) {
  // Outgoing connections only (a server's accepted socket has `server` set).
  if (!this.server) outgoing.push([nowNs(), this.remotePort ?? 0, typeof chunk === 'string' ? chunk.length : (chunk?.length ?? 0)]);
  return socketWrite.apply(this, arguments);
};

// TAIL_PROBE_HEAP_SAMPLE=1: V8's sampling heap profiler, garbage included (every 4 KiB allocated), summed
// by allocating function into the dump: what makes the young generation fill.
let heapSession;
// TAIL_PROBE_HEAP_SAMPLE=live: only what is still alive when the dump is taken (what the gateway keeps);
// =promoted: that and what mark-compacts freed (what the scavenges promoted and the old generation held).
const heapSample = process.env.TAIL_PROBE_HEAP_SAMPLE;
// TAIL_PROBE_HEAP_FROM=<n>: start sampling at the n-th request, so start-up is left out (with `live`:
// what was allocated since and not yet freed, i.e. what the scavenges promoted, until a mark-compact).
const heapFrom = Number(process.env.TAIL_PROBE_HEAP_FROM ?? 0);
let heapStarted = false;
function startHeapSampling() {
  heapStarted = true;
  // `promoted`: garbage freed by mark-compacts kept, by scavenges dropped: what lived long enough to be promoted.
  const major = heapSample === '1' || heapSample === 'promoted';
  heapSession = new Session();
  heapSession.connect();
  heapSession.post('HeapProfiler.startSampling', { samplingInterval: 4096, includeObjectsCollectedByMajorGC: major, includeObjectsCollectedByMinorGC: heapSample === '1' });
}
const sampling = heapSample === '1' || heapSample === 'live' || heapSample === 'promoted';
if (sampling && heapFrom === 0) startHeapSampling();

function allocationsByFunction(profile) {
  const sums = new Map();
  const walk = (node, stack) => {
    const frame = `${node.callFrame.functionName || '(anonymous)'} ${node.callFrame.url.split('/').pop()}:${node.callFrame.lineNumber + 1}`;
    const path = [...stack, frame];
    if (node.selfSize > 0) {
      const key = path.slice(-4).join(' < ');
      sums.set(key, (sums.get(key) ?? 0) + node.selfSize);
    }
    for (const child of node.children) walk(child, path);
  };
  walk(profile.head, []);
  return [...sums.entries()].sort((a, b) => b[1] - a[1]).slice(0, 60);
}

function dump(heap) {
  if (out) writeFileSync(out, JSON.stringify({ pid: process.pid, gc, timers, requests, outgoing, gaps, memory: process.memoryUsage(), heapSpaces: v8.getHeapSpaceStatistics(), heap, heapFrom }));
}

process.on('SIGUSR2', () => {
  if (heapSession === undefined) return dump(undefined);
  heapSession.post('HeapProfiler.stopSampling', (error, result) => dump(error ? String(error) : allocationsByFunction(result.profile)));
});
