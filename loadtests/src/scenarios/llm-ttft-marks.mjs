// Loaded into the gateway under test with `node --import` by llm-ttft-probe.ts (LLM_TTFT_PROBE_MARKS=1;
// plain JS, so it runs in front of the production bundle). For each streamed LLM request it records, on
// process.hrtime (CLOCK_MONOTONIC, the load generator's clock too): the server's 'request' event, the
// HTTP/2 stream opened to the node, the node's response headers, the node's first data, and the first
// write to the client's socket, and every GC. On exit (SIGTERM) it writes them to TTFT_MARKS_OUT as JSON.
// Through NODE_OPTIONS it also runs in the node (TTFT_MARKS_PER_PID=1: one file per process), where a
// request's first socket write is its answer's start. Diagnosis only: the wrappers cost a few µs a request.
import { writeFileSync } from 'node:fs';
import http from 'node:http';
import http2 from 'node:http2';
import net from 'node:net';
import { syncBuiltinESMExports } from 'node:module';
import { PerformanceObserver, performance } from 'node:perf_hooks';

// TTFT_MARKS_PER_PID=1 (the probe loaded into several processes through NODE_OPTIONS): one file each.
const out = process.env.TTFT_MARKS_OUT && (process.env.TTFT_MARKS_PER_PID === '1' ? `${process.env.TTFT_MARKS_OUT}.${process.pid}` : process.env.TTFT_MARKS_OUT);
const nowNs = () => Number(process.hrtime.bigint());
/**
 * [requestNs, upstreamOpenNs, upstreamHeadersNs, upstreamFirstDataNs, clientFirstWriteNs], then diagnosis
 * marks: [5..12] a diagnosis build's, [13] first write, [14] header count, [15] the first immediate after
 * the stream was opened (its frames written), [16] the gateway's CPU µs from the stream opened to [15].
 */
const marks = [];
/**
 * Per mark of the five above, the process's CPU (user + sys, µs) and the event loop's idle time (µs,
 * time blocked waiting for I/O or timers) when it was taken: a step's wall time that is neither CPU
 * nor idle loop is time the process was runnable but not running (another process had the core).
 */
const costs = [];
const costOf = () => {
  const cpu = process.cpuUsage();
  return [cpu.user + cpu.system, performance.eventLoopUtilization().idle * 1000];
};
// The probe sends one stream at a time: the request being served is the one the upstream stream belongs to.
let current;

// Marks placed by a diagnosis build (globalThis.__ttftMark?.(i) in the request's steps), when there are any.
globalThis.__ttftMark = (i) => {
  if (current !== undefined) current[5 + i] = nowNs();
};

/** [startNs, durationMs, kind] of every GC (perf_hooks), to see which fall inside a request's first token. */
const gcs = [];
const perfOriginNs = nowNs() - performance.now() * 1e6;
new PerformanceObserver((list) => {
  for (const entry of list.getEntries()) gcs.push([perfOriginNs + entry.startTime * 1e6, entry.duration, entry.detail?.kind ?? 0]);
}).observe({ entryTypes: ['gc'] });

/** Starts a request's marks at `socket` (its first write after the node's headers is the first event). */
function beginRequest(socket, headerCount) {
  {
    // [13]: the first write of any kind (a node's answer, when the probe is loaded into the node); [14]: header count.
    const mark = [nowNs(), 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, headerCount];
    const cost = [costOf()];
    marks.push(mark);
    costs.push(cost);
    current = mark;
    const write = socket.write;
    // The first write after the node's headers is the first event (the status line goes with it).
    socket.write = function (...args) {
      if (mark[13] === 0) {
        mark[13] = nowNs();
        // No stream to a node was opened for it (this is the node): nothing more to see on this socket.
        if (mark[1] === 0) socket.write = write;
      }
      if (mark[2] !== 0 && mark[4] === 0) {
        mark[4] = nowNs();
        cost[4] = costOf();
        socket.write = write;
      }
      return write.apply(this, args);
    };
  }
}

// The raw HTTP/1.1 front door (shared/src/http/raw-http1) reads its sockets itself and emits no 'request': a
// request starts at the socket read whose bytes begin with `POST ` (its head; the body comes with it or after).
// That is earlier than node:http's 'request' event, which comes after node:http has parsed the head.
const rawSockets = new WeakSet();
const emit = http.Server.prototype.emit;
http.Server.prototype.emit = function (event, req) {
  if (event === 'connection' && process.env.TTFT_MARKS_PER_PID !== '1') {
    const socket = req;
    const socketEmit = socket.emit;
    socket.emit = function (name, chunk) {
      if (name === 'data' && Buffer.isBuffer(chunk) && chunk[0] === 0x50 && chunk.toString('latin1', 0, 5) === 'POST ') {
        rawSockets.add(socket);
        let headers = 0;
        const end = chunk.indexOf('\r\n\r\n');
        for (let at = chunk.indexOf('\r\n'); at >= 0 && at < end; at = chunk.indexOf('\r\n', at + 2)) headers += 1;
        beginRequest(socket, headers);
      }
      return socketEmit.apply(this, arguments);
    };
  }
  // A request node:http parsed on a socket the raw reader handed over is already marked at its read.
  if (event === 'request' && req.method === 'POST' && !rawSockets.has(req.socket)) beginRequest(req.socket, req.rawHeaders.length / 2);
  return emit.apply(this, arguments);
};

const connect = http2.connect;
http2.connect = function (...args) {
  const session = connect.apply(this, args);
  const request = session.request;
  session.request = function (...rargs) {
    const mark = current;
    const cost = costs[costs.length - 1];
    if (mark !== undefined) {
      mark[1] = nowNs();
      cost[1] = costOf();
      // [15]: the first JS immediate after it, which runs after the native one that writes the stream's
      // frames to the node's socket (node:http2 sends a session's pending frames from an immediate).
      setImmediate(() => {
        mark[15] = nowNs();
        // [16]: the gateway's CPU (µs) from the stream opened to that immediate.
        mark[16] = costOf()[0] - cost[1][0];
      });
    }
    const stream = request.apply(this, rargs);
    if (mark !== undefined) {
      stream.once('response', () => {
        mark[2] = nowNs();
        cost[2] = costOf();
        // Wrapped here, outside h2-direct-body.ts's own wrapper: every chunk the handle reads is seen.
        const push = stream.push;
        stream.push = function (chunk, ...rest) {
          if (mark[3] === 0 && chunk !== null) {
            mark[3] = nowNs();
            cost[3] = costOf();
          }
          return push.call(this, chunk, ...rest);
        };
        if (stream.readableLength > 0) {
          mark[3] = mark[2];
          cost[3] = cost[2];
        }
      });
    }
    return stream;
  };
  return session;
};
// The raw HTTP/1.1 upstream (llm-raw-upstream.ts) writes its pre-rendered request with one socket.write:
// [1] is that write, [15]/[16] its return (the bytes are in the kernel by then) and the CPU until it, and
// the node socket's first read is both [2] and [3] (the answer's head comes with its first event).
const socketWrite = net.Socket.prototype.write;
if (process.env.TTFT_MARKS_PER_PID !== '1') {
  net.Socket.prototype.write = function (chunk, ...rest) {
    const mark = current;
    if (mark === undefined || mark[1] !== 0 || !Buffer.isBuffer(chunk) || chunk[0] !== 0x50 || chunk.toString('latin1', 0, 5) !== 'POST ') return socketWrite.call(this, chunk, ...rest);
    const cost = costs[costs.length - 1];
    mark[1] = nowNs();
    cost[1] = costOf();
    this.once('data', () => {
      mark[2] = mark[3] = nowNs();
      cost[2] = cost[3] = costOf();
    });
    const written = socketWrite.call(this, chunk, ...rest);
    mark[15] = nowNs();
    mark[16] = costOf()[0] - cost[1][0];
    return written;
  };
}
syncBuiltinESMExports();

const dump = () => {
  if (out) writeFileSync(out, JSON.stringify({ marks, gcs, costs }));
};
process.once('exit', dump);
for (const signal of ['SIGTERM', 'SIGINT']) {
  process.once(signal, () => {
    dump();
    process.exit(0);
  });
}
