// The anchor of issue 18's wave (plain JS, run by node-wave-anchor.ts pinned to one core): a bare node:http or
// node:http2 server doing the I/O tessera-node does for mlp_large's [64] wave and nothing else. It reads each 4 KB
// FP32 request (KServe binary extension over HTTP/1.1, or a gRPC ModelInferRequest over HTTP/2), decodes the
// header JSON or scans the protobuf for raw_input_contents, copies the row into a 64-row batch, hands the batch
// to a worker thread (transferred, not cloned) that runs onnxruntime on it (ANCHOR_MODEL) or spins a fixed CPU
// time (ANCHOR_SPIN_US per row), and answers each caller with its 4 KB row the way a KServe server must. Its main
// thread's CPU per request is the floor node:http / node:http2 put under the node's event loop. `raw` serves the
// same HTTP/1.1 wave over a plain net.Server with a minimal reader (request line, headers to CRLFCRLF, one
// Content-Length body, keep-alive) and a pre-rendered answer head: what is left without node:http (issue 18).
// `raw-grpc` serves the gRPC wave over a plain net.Server with a minimal HTTP/2 reader (node-wave-anchor-raw-h2.mjs):
// what is left without node:http2.
//   node node-wave-anchor-server.mjs http|grpc|raw|raw-grpc
// Prints {"msg":"anchor started","port":P,"statsPort":S}; GET http://127.0.0.1:S/ answers {"inferences":N,"batches":B}.
import http from 'node:http';
import http2 from 'node:http2';
import net from 'node:net';
import { Worker, isMainThread, parentPort } from 'node:worker_threads';
import { rawGrpcServer } from './node-wave-anchor-raw-h2.mjs';

const ROW_BYTES = 4096;
const BATCH = 64;
/** As the node's [64] config: a partial batch goes after this long (only the warm-up's first waves are partial). */
const FLUSH_MS = 60;

if (isMainThread) main();
else worker();

function main() {
  const protocol = process.argv[2];
  const servers = { http: httpServer, grpc: grpcServer, raw: rawServer, 'raw-grpc': rawGrpcAnchor };
  if (servers[protocol] === undefined) throw new Error('usage: node-wave-anchor-server.mjs http|grpc|raw|raw-grpc');
  const runner = new Worker(new URL(import.meta.url), { env: process.env });
  let inferences = 0;
  let batches = 0;
  let rows = new Uint8Array(BATCH * ROW_BYTES);
  /** The callers of the batch being formed, in row order. */
  let callers = [];
  /** Batches formed while the worker was busy. */
  const waiting = [];
  let busy = false;
  let flushTimer;

  const dispatch = () => {
    if (busy || waiting.length === 0) return;
    busy = true;
    const next = waiting.shift();
    runner.postMessage({ rows: next.rows, count: next.callers.length }, [next.rows.buffer]);
    runner.once('message', (out) => {
      busy = false;
      const output = new Uint8Array(out.buffer, out.byteOffset, out.byteLength);
      next.callers.forEach((answer, i) => answer(output.subarray(i * ROW_BYTES, (i + 1) * ROW_BYTES)));
      inferences += next.callers.length;
      batches += 1;
      dispatch();
    });
  };
  const close = () => {
    clearTimeout(flushTimer);
    flushTimer = undefined;
    if (callers.length === 0) return;
    waiting.push({ rows, callers });
    rows = new Uint8Array(BATCH * ROW_BYTES);
    callers = [];
    dispatch();
  };
  /** Queues one row; `answer` gets the output row. */
  const enqueue = (row, answer) => {
    rows.set(row, callers.length * ROW_BYTES);
    callers.push(answer);
    if (callers.length === BATCH) close();
    else flushTimer ??= setTimeout(close, FLUSH_MS);
  };

  const server = servers[protocol](enqueue);
  const stats = http.createServer((_req, res) => res.end(JSON.stringify({ inferences, batches })));
  server.listen(0, '127.0.0.1', () =>
    stats.listen(0, '127.0.0.1', () => {
      process.stderr.write(`${JSON.stringify({ msg: 'anchor started', port: server.address().port, statsPort: stats.address().port })}\n`);
    }),
  );
  process.once('SIGTERM', () => process.exit(0));
}

/** KServe HTTP with the binary extension: header JSON, then the row; the answer the same way. */
function httpServer(enqueue) {
  const head = Buffer.from(JSON.stringify({ model_name: 'mlp_large', model_version: '1', outputs: [{ name: 'OUTPUT0', datatype: 'FP32', shape: [1, 1024], parameters: { binary_data_size: ROW_BYTES } }] }));
  const headers = { 'content-type': 'application/octet-stream', 'inference-header-content-length': String(head.length), 'content-length': String(head.length + ROW_BYTES) };
  return http.createServer((req, res) => {
    const chunks = [];
    req.on('data', (chunk) => chunks.push(chunk));
    req.on('end', () => {
      const body = chunks.length === 1 ? chunks[0] : Buffer.concat(chunks);
      const jsonLength = Number(req.headers['inference-header-content-length']);
      const header = JSON.parse(body.toString('utf8', 0, jsonLength));
      const size = header.inputs?.[0]?.parameters?.binary_data_size;
      if (size !== ROW_BYTES || body.length !== jsonLength + ROW_BYTES) {
        res.writeHead(400).end('expected one 4 KB FP32 row');
        return;
      }
      enqueue(body.subarray(jsonLength), (row) => {
        const answer = Buffer.allocUnsafe(head.length + ROW_BYTES);
        head.copy(answer, 0);
        answer.set(row, head.length);
        res.writeHead(200, headers);
        res.end(answer);
      });
    });
  });
}

const CRLFCRLF = Buffer.from('\r\n\r\n');

/** The value of header `name` (lower case, with its colon) in a latin1 head, or undefined. */
function headerValue(head, name) {
  const at = head.indexOf(`\r\n${name}`);
  if (at < 0) return undefined;
  const end = head.indexOf('\r\n', at + 2);
  return head.slice(at + 2 + name.length, end).trim();
}

/**
 * The same KServe binary wave over a plain net.Server: a minimal HTTP/1.1 reader (no node:http, no llhttp) and one
 * socket.write per answer of a head rendered once (with a Date refreshed each second) plus the body.
 * Requests on a connection are read one at a time: reading pauses while one is in flight (h2load sends one per
 * connection at a time anyway).
 */
function rawServer(enqueue) {
  const head = Buffer.from(JSON.stringify({ model_name: 'mlp_large', model_version: '1', outputs: [{ name: 'OUTPUT0', datatype: 'FP32', shape: [1, 1024], parameters: { binary_data_size: ROW_BYTES } }] }));
  let date = new Date().toUTCString();
  let answerHead = render();
  function render() {
    return Buffer.from(
      `HTTP/1.1 200 OK\r\nContent-Type: application/octet-stream\r\nInference-Header-Content-Length: ${head.length}\r\n` +
        `Date: ${date}\r\nConnection: keep-alive\r\nKeep-Alive: timeout=5\r\nContent-Length: ${head.length + ROW_BYTES}\r\n\r\n`,
      'latin1',
    );
  }
  setInterval(() => {
    date = new Date().toUTCString();
    answerHead = render();
  }, 1000).unref();
  const bad = Buffer.from('HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\nConnection: close\r\n\r\n');
  return net.createServer((socket) => {
    socket.setNoDelay(true);
    let pending = Buffer.alloc(0);
    let inFlight = false;
    const fail = () => socket.end(bad);
    const pump = () => {
      while (!inFlight) {
        const headEnd = pending.indexOf(CRLFCRLF);
        if (headEnd < 0) return;
        const text = pending.toString('latin1', 0, headEnd + 2).toLowerCase();
        if (!text.startsWith('post /v2/models/mlp_large/infer http/1.1\r\n')) return fail();
        const length = Number(headerValue(text, 'content-length:'));
        const jsonLength = Number(headerValue(text, 'inference-header-content-length:'));
        const bodyStart = headEnd + 4;
        if (!(length >= 0) || !(jsonLength >= 0)) return fail();
        if (pending.length < bodyStart + length) return;
        const body = pending.subarray(bodyStart, bodyStart + length);
        pending = pending.subarray(bodyStart + length);
        const header = JSON.parse(body.toString('utf8', 0, jsonLength));
        const size = header.inputs?.[0]?.parameters?.binary_data_size;
        if (size !== ROW_BYTES || body.length !== jsonLength + ROW_BYTES) return fail();
        inFlight = true;
        enqueue(body.subarray(jsonLength), (row) => {
          inFlight = false;
          if (socket.destroyed) return;
          const answer = Buffer.allocUnsafe(answerHead.length + head.length + ROW_BYTES);
          answerHead.copy(answer, 0);
          head.copy(answer, answerHead.length);
          answer.set(row, answerHead.length + head.length);
          socket.write(answer);
          pump();
        });
      }
    };
    socket.on('data', (chunk) => {
      pending = pending.length === 0 ? chunk : Buffer.concat([pending, chunk]);
      pump();
    });
    socket.on('error', () => {});
  });
}

/** The bytes of raw_input_contents (field 7) in a ModelInferRequest, or undefined. */
function rawInput(message) {
  let at = 0;
  const varint = () => {
    let value = 0;
    for (let shift = 0; ; shift += 7) {
      const byte = message[at++];
      value += (byte & 0x7f) * 2 ** shift;
      if (byte < 0x80) return value;
    }
  };
  while (at < message.length) {
    const tag = varint();
    const wire = tag & 7;
    if (wire === 0) varint();
    else if (wire === 2) {
      const length = varint();
      if (tag >>> 3 === 7) return message.subarray(at, at + length);
      at += length;
    } else return undefined;
  }
  return undefined;
}

// ModelInferResponse: model_name (1), model_version (2), outputs (5: name, datatype, packed shape), then raw_output_contents (6) with its length.
const tensor = Buffer.from([0x0a, 7, ...Buffer.from('OUTPUT0'), 0x12, 4, ...Buffer.from('FP32'), 0x1a, 3, 1, 0x80, 0x08]);
const prefix = Buffer.from([0x0a, 9, ...Buffer.from('mlp_large'), 0x12, 1, 0x31, 0x2a, tensor.length, ...tensor, 0x32, 0x80, 0x20]);
const messageLength = prefix.length + ROW_BYTES;

/** The framed gRPC answer carrying one output row. */
function grpcAnswer(out) {
  const answer = Buffer.allocUnsafe(5 + messageLength);
  answer[0] = 0;
  answer.writeUInt32BE(messageLength, 1);
  prefix.copy(answer, 5);
  answer.set(out, 5 + prefix.length);
  return answer;
}

/** The row of a framed ModelInferRequest, or undefined when it is not one 4 KB row. */
function grpcRow(body) {
  const row = body.length > 5 ? rawInput(body.subarray(5)) : undefined;
  return row?.length === ROW_BYTES ? row : undefined;
}

/** gRPC ModelInfer over node:http2: framed message in, framed ModelInferResponse and grpc-status trailers out. */
function grpcServer(enqueue) {
  const server = http2.createServer();
  // h2load resets its connection when its run ends: a session's 'error' with no listener would end the anchor.
  server.on('session', (session) => session.on('error', () => {}));
  server.on('stream', (stream) => {
    stream.on('error', () => {});
    const chunks = [];
    stream.on('data', (chunk) => chunks.push(chunk));
    stream.on('end', () => {
      const row = grpcRow(chunks.length === 1 ? chunks[0] : Buffer.concat(chunks));
      if (stream.destroyed) return; // h2load's reset at the end of a run leaves cut bodies on destroyed streams
      if (row === undefined) {
        stream.respond({ ':status': 200, 'content-type': 'application/grpc', 'grpc-status': '3', 'grpc-message': 'expected one 4 KB FP32 row' }, { endStream: true });
        return;
      }
      enqueue(row, (out) => {
        if (stream.destroyed || stream.closed || stream.session?.destroyed !== false) return; // h2load ends its run with calls in flight
        stream.respond({ ':status': 200, 'content-type': 'application/grpc' }, { waitForTrailers: true });
        stream.once('wantTrailers', () => stream.sendTrailers({ 'grpc-status': '0' }));
        stream.end(grpcAnswer(out));
      });
    });
  });
  return server;
}

/** The same gRPC wave over our own minimal HTTP/2 reader instead of node:http2. */
function rawGrpcAnchor(enqueue) {
  return rawGrpcServer((body, answer) => {
    const row = grpcRow(body);
    if (row === undefined) answer(undefined, 3, 'expected one 4 KB FP32 row');
    else enqueue(row, (out) => answer(grpcAnswer(out)));
  });
}

/** Runs each batch: onnxruntime with one intra-op thread on ANCHOR_MODEL, or a spin of ANCHOR_SPIN_US per row. */
async function worker() {
  const modelPath = process.env.ANCHOR_MODEL;
  const spinUs = Number(process.env.ANCHOR_SPIN_US ?? 400);
  let session;
  let ort;
  if (modelPath) {
    ort = (await import('onnxruntime-node')).default;
    session = await ort.InferenceSession.create(modelPath, { intraOpNumThreads: 1, interOpNumThreads: 1, executionMode: 'sequential' });
  }
  parentPort.on('message', async ({ rows, count }) => {
    let out;
    if (session) {
      const input = new ort.Tensor('float32', new Float32Array(rows.buffer, 0, count * 1024), [count, 1024]);
      const result = await session.run({ INPUT0: input });
      out = new Uint8Array(result.OUTPUT0.data.buffer, result.OUTPUT0.data.byteOffset, count * ROW_BYTES);
    } else {
      const until = performance.now() + (spinUs * count) / 1000;
      while (performance.now() < until);
      out = rows.subarray(0, count * ROW_BYTES);
    }
    parentPort.postMessage(out, [out.buffer]);
  });
}
