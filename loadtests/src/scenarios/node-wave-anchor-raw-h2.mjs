// The `raw-grpc` anchor of issue 18's wave (used by node-wave-anchor-server.mjs): gRPC ModelInfer over a plain
// net.Server with a minimal HTTP/2 reader written here instead of node:http2, so anchor-grpc − anchor-raw is what
// node:http2 itself costs per call. Enough of RFC 9113 / RFC 7541 for h2load and node:http2 clients: preface,
// SETTINGS (+ACK), PING, WINDOW_UPDATE both ways, HEADERS (+CONTINUATION, padding, priority) with an HPACK decoder
// (dynamic table, Huffman, size updates), DATA, RST_STREAM, GOAWAY. Answers are pre-encoded HEADERS + DATA +
// trailing HEADERS (static table and literals only), corked so one batch's answers leave in one writev.
// Not a server to trust with hostile input: a protocol error closes the connection, limits are the anchor's.
import net from 'node:net';

const PREFACE = Buffer.from('PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n', 'latin1');
const FRAME = { DATA: 0, HEADERS: 1, PRIORITY: 2, RST_STREAM: 3, SETTINGS: 4, PUSH_PROMISE: 5, PING: 6, GOAWAY: 7, WINDOW_UPDATE: 8, CONTINUATION: 9 };
const END_STREAM = 0x1;
const ACK = 0x1;
const END_HEADERS = 0x4;
const PADDED = 0x8;
const PRIORITY_FLAG = 0x20;
const DEFAULT_WINDOW = 65_535;
/** The connection window we open at the start and top up when half of it is used. */
const CONNECTION_WINDOW = 1 << 24;
const MAX_FRAME = 16_384;
const TABLE_SIZE = 4096;

// RFC 7541 Appendix A: the static table (index 1..61).
const STATIC = [
  [':authority', ''], [':method', 'GET'], [':method', 'POST'], [':path', '/'], [':path', '/index.html'], [':scheme', 'http'],
  [':scheme', 'https'], [':status', '200'], [':status', '204'], [':status', '206'], [':status', '304'], [':status', '400'],
  [':status', '404'], [':status', '500'], ['accept-charset', ''], ['accept-encoding', 'gzip, deflate'], ['accept-language', ''],
  ['accept-ranges', ''], ['accept', ''], ['access-control-allow-origin', ''], ['age', ''], ['allow', ''], ['authorization', ''],
  ['cache-control', ''], ['content-disposition', ''], ['content-encoding', ''], ['content-language', ''], ['content-length', ''],
  ['content-location', ''], ['content-range', ''], ['content-type', ''], ['cookie', ''], ['date', ''], ['etag', ''], ['expect', ''],
  ['expires', ''], ['from', ''], ['host', ''], ['if-match', ''], ['if-modified-since', ''], ['if-none-match', ''], ['if-range', ''],
  ['if-unmodified-since', ''], ['last-modified', ''], ['link', ''], ['location', ''], ['max-forwards', ''], ['proxy-authenticate', ''],
  ['proxy-authorization', ''], ['range', ''], ['referer', ''], ['refresh', ''], ['retry-after', ''], ['server', ''], ['set-cookie', ''],
  ['strict-transport-security', ''], ['transfer-encoding', ''], ['user-agent', ''], ['vary', ''], ['via', ''], ['www-authenticate', ''],
];

// RFC 7541 Appendix B: code length of each symbol 0..255 and EOS (256); the code is canonical, so lengths suffice.
const HUFFMAN_LENGTHS = (
  '13 23 28 28 28 28 28 28 28 24 30 28 28 30 28 28 28 28 28 28 28 28 30 28 28 28 28 28 28 28 28 28 ' +
  '6 10 10 12 13 6 8 11 10 10 8 11 8 6 6 6 5 5 5 6 6 6 6 6 6 6 7 8 15 6 12 10 ' +
  '13 6 7 7 7 7 7 7 7 7 7 7 7 7 7 7 7 7 7 7 7 7 7 7 8 7 8 13 19 13 14 6 ' +
  '15 5 6 5 6 5 6 6 6 5 7 7 6 6 6 5 6 7 6 5 5 6 7 7 7 7 7 15 11 14 13 28 ' +
  '20 22 20 20 22 22 22 23 22 23 23 23 23 23 24 23 24 24 22 23 24 23 23 23 23 21 22 23 22 23 23 24 ' +
  '22 21 20 22 22 23 23 21 23 22 22 24 21 22 23 23 21 21 22 21 23 22 23 23 20 22 22 22 23 22 22 23 ' +
  '26 26 20 19 22 23 22 25 26 26 26 27 27 26 24 25 19 21 26 27 27 26 27 24 21 21 26 26 28 27 27 27 ' +
  '20 24 20 21 22 21 21 23 22 22 25 25 24 24 26 23 26 27 26 26 27 27 27 27 27 28 27 27 27 27 27 26 30'
)
  .split(' ')
  .map(Number);

/** A binary decode tree: node n's children at next[2n], next[2n+1]; a leaf is -(symbol + 1). */
const HUFFMAN_TREE = (() => {
  const next = new Int32Array(2 * 600).fill(0);
  let nodes = 1;
  const order = HUFFMAN_LENGTHS.map((length, symbol) => [length, symbol]).sort((a, b) => a[0] - b[0] || a[1] - b[1]);
  let code = 0;
  let previous = order[0][0];
  order.forEach(([length, symbol], i) => {
    if (i > 0) code = (code + 1) * 2 ** (length - previous);
    previous = length;
    let node = 0;
    for (let bit = length - 1; bit >= 0; bit--) {
      const slot = 2 * node + (Math.floor(code / 2 ** bit) & 1);
      if (bit === 0) next[slot] = -(symbol + 1);
      else {
        if (next[slot] === 0) next[slot] = nodes++;
        node = next[slot];
      }
    }
  });
  return next;
})();

function huffmanDecode(bytes, start, end) {
  const out = [];
  let node = 0;
  let depth = 0;
  for (let i = start; i < end; i++) {
    for (let bit = 7; bit >= 0; bit--) {
      const next = HUFFMAN_TREE[2 * node + ((bytes[i] >> bit) & 1)];
      if (next < 0) {
        if (next === -257) throw new Error('EOS in a Huffman string');
        out.push(-next - 1);
        node = 0;
        depth = 0;
      } else {
        node = next;
        depth++;
      }
    }
  }
  if (depth > 7) throw new Error('Huffman padding over 7 bits');
  return Buffer.from(out).toString('latin1');
}

/** HPACK header block decoder with its dynamic table (newest first). */
class HpackDecoder {
  table = [];
  size = 0;

  decode(block) {
    const headers = [];
    let at = 0;
    const integer = (prefixBits) => {
      const mask = (1 << prefixBits) - 1;
      let value = block[at++] & mask;
      if (value < mask) return value;
      for (let shift = 0; ; shift += 7) {
        if (at >= block.length || shift > 28) throw new Error('bad HPACK integer');
        const byte = block[at++];
        value += (byte & 0x7f) * 2 ** shift;
        if (byte < 0x80) return value;
      }
    };
    const string = () => {
      const huffman = (block[at] & 0x80) !== 0;
      const length = integer(7);
      if (at + length > block.length) throw new Error('HPACK string past the block');
      const text = huffman ? huffmanDecode(block, at, at + length) : block.toString('latin1', at, at + length);
      at += length;
      return text;
    };
    const entry = (index) => {
      if (index >= 1 && index <= STATIC.length) return STATIC[index - 1];
      const dynamic = this.table[index - STATIC.length - 1];
      if (dynamic === undefined) throw new Error('HPACK index out of range');
      return dynamic;
    };
    while (at < block.length) {
      const byte = block[at];
      if (byte & 0x80) headers.push(entry(integer(7)));
      else if ((byte & 0xe0) === 0x20) this.resize(integer(5));
      else {
        const indexing = (byte & 0xc0) === 0x40;
        const index = integer(indexing ? 6 : 4);
        const name = index === 0 ? string() : entry(index)[0];
        const field = [name, string()];
        headers.push(field);
        if (indexing) this.add(field);
      }
    }
    return headers;
  }

  add(field) {
    this.table.unshift(field);
    this.size += field[0].length + field[1].length + 32;
    this.resize(TABLE_SIZE);
  }

  resize(max) {
    if (max > TABLE_SIZE) throw new Error('HPACK table size over the setting');
    while (this.size > max) {
      const [name, value] = this.table.pop();
      this.size -= name.length + value.length + 32;
    }
  }
}

function frame(type, flags, stream, payload) {
  const out = Buffer.allocUnsafe(9 + payload.length);
  out.writeUIntBE(payload.length, 0, 3);
  out[3] = type;
  out[4] = flags;
  out.writeUInt32BE(stream, 5);
  out.set(payload, 9);
  return out;
}

const ourSettings = frame(FRAME.SETTINGS, 0, 0, Buffer.from([0, 3, 0, 0, 0, 128])); // MAX_CONCURRENT_STREAMS 128
const settingsAck = frame(FRAME.SETTINGS, ACK, 0, Buffer.alloc(0));
const windowUpdate = (stream, increment) => {
  const payload = Buffer.allocUnsafe(4);
  payload.writeUInt32BE(increment, 0);
  return frame(FRAME.WINDOW_UPDATE, 0, stream, payload);
};
// :status 200 (static 8), content-type (static 31, literal not indexed) application/grpc.
const responseBlock = Buffer.from([0x88, 0x0f, 0x10, 16, ...Buffer.from('application/grpc')]);
const trailerBlock = Buffer.from([0x00, 11, ...Buffer.from('grpc-status'), 1, 0x30]);
const errorTrailerBlock = (status, message) =>
  Buffer.from([0x88, 0x0f, 0x10, 16, ...Buffer.from('application/grpc'), 0x00, 11, ...Buffer.from('grpc-status'), 1, 0x30 + status, 0x00, 12, ...Buffer.from('grpc-message'), message.length, ...Buffer.from(message)]);

/**
 * gRPC over the raw reader: `onCall(body, answer)` gets each finished request's body (the framed message) and
 * answers with `answer(message)` (framed gRPC message bytes) or `answer(undefined, status, text)`.
 */
export function rawGrpcServer(onCall) {
  return net.createServer((socket) => {
    socket.setNoDelay(true);
    const decoder = new HpackDecoder();
    const streams = new Map();
    let pending = Buffer.alloc(0);
    let preface = false;
    let sendWindow = DEFAULT_WINDOW;
    let peerInitialWindow = DEFAULT_WINDOW;
    let received = 0;
    let lastStream = 0;
    /** Header block fragments of a HEADERS awaiting CONTINUATION: {id, parts, endStream}. */
    let continuing;
    /** Answers waiting for send window, in order. */
    const blocked = [];
    let corked = false;

    const send = (bytes) => {
      if (!corked) {
        corked = true;
        socket.cork();
        process.nextTick(() => {
          corked = false;
          socket.uncork();
        });
      }
      socket.write(bytes);
    };
    const fail = (code) => {
      const payload = Buffer.alloc(8);
      payload.writeUInt32BE(lastStream, 0);
      payload.writeUInt32BE(code, 4);
      socket.end(frame(FRAME.GOAWAY, 0, 0, payload));
      pending = Buffer.alloc(0);
    };
    const flushBlocked = () => {
      while (blocked.length > 0) {
        const next = blocked[0];
        const stream = streams.get(next.id);
        if (stream === undefined) {
          blocked.shift();
          continue;
        }
        if (next.message.length > sendWindow || next.message.length > stream.window) return;
        blocked.shift();
        writeAnswer(next.id, stream, next.message);
      }
    };
    const writeAnswer = (id, stream, message) => {
      sendWindow -= message.length;
      stream.window -= message.length;
      streams.delete(id);
      const out = Buffer.allocUnsafe(27 + responseBlock.length + message.length + trailerBlock.length);
      let at = 0;
      const head = (length, type, flags) => {
        out.writeUIntBE(length, at, 3);
        out[at + 3] = type;
        out[at + 4] = flags;
        out.writeUInt32BE(id, at + 5);
        at += 9;
      };
      head(responseBlock.length, FRAME.HEADERS, END_HEADERS);
      at += responseBlock.copy(out, at);
      head(message.length, FRAME.DATA, 0);
      out.set(message, at);
      at += message.length;
      head(trailerBlock.length, FRAME.HEADERS, END_HEADERS | END_STREAM);
      trailerBlock.copy(out, at);
      send(out);
    };
    const answerFor = (id) => (message, status, text) => {
      const stream = streams.get(id);
      if (stream === undefined || socket.destroyed) return; // reset or gone while in the batch
      if (message === undefined) {
        streams.delete(id);
        send(frame(FRAME.HEADERS, END_HEADERS | END_STREAM, id, errorTrailerBlock(status, text)));
      } else if (message.length > MAX_FRAME) throw new Error('anchor answers fit one DATA frame');
      else if (blocked.length > 0 || message.length > sendWindow || message.length > stream.window) blocked.push({ id, message });
      else writeAnswer(id, stream, message);
    };
    const finish = (id, stream) => {
      const body = stream.chunks.length === 1 ? stream.chunks[0] : Buffer.concat(stream.chunks);
      stream.chunks = undefined;
      onCall(body, answerFor(id), stream.path);
    };
    const headersDone = (id, block, endStream) => {
      const headers = decoder.decode(block);
      if (id <= lastStream || id % 2 === 0) return fail(1);
      lastStream = id;
      const path = headers.find(([name]) => name === ':path')?.[1];
      const stream = { chunks: [], path, window: peerInitialWindow };
      streams.set(id, stream);
      if (endStream) finish(id, stream);
    };
    const onFrame = (type, flags, id, payload) => {
      if (continuing !== undefined && type !== FRAME.CONTINUATION) return fail(1);
      switch (type) {
        case FRAME.DATA: {
          received += payload.length;
          if (received >= CONNECTION_WINDOW / 2) {
            send(windowUpdate(0, received));
            received = 0;
          }
          const stream = streams.get(id);
          if (stream === undefined || stream.chunks === undefined) return; // reset or already whole
          const pad = flags & PADDED ? payload[0] : 0;
          const start = flags & PADDED ? 1 : 0;
          if (start + pad > payload.length) return fail(1);
          stream.chunks.push(payload.subarray(start, payload.length - pad));
          if (flags & END_STREAM) finish(id, stream);
          return;
        }
        case FRAME.HEADERS: {
          let start = 0;
          let end = payload.length;
          if (flags & PADDED) {
            end -= payload[0];
            start = 1;
          }
          if (flags & PRIORITY_FLAG) start += 5;
          if (start > end) return fail(1);
          const block = payload.subarray(start, end);
          if (flags & END_HEADERS) headersDone(id, block, (flags & END_STREAM) !== 0);
          else continuing = { id, parts: [block], endStream: (flags & END_STREAM) !== 0 };
          return;
        }
        case FRAME.CONTINUATION: {
          if (continuing === undefined || continuing.id !== id) return fail(1);
          continuing.parts.push(payload);
          if (flags & END_HEADERS) {
            const { parts, endStream } = continuing;
            continuing = undefined;
            headersDone(id, Buffer.concat(parts), endStream);
          }
          return;
        }
        case FRAME.SETTINGS: {
          if (flags & ACK) return;
          for (let at = 0; at + 6 <= payload.length; at += 6) {
            if (payload.readUInt16BE(at) !== 4) continue; // INITIAL_WINDOW_SIZE: the only one our answers need
            const value = payload.readUInt32BE(at + 2);
            for (const stream of streams.values()) stream.window += value - peerInitialWindow;
            peerInitialWindow = value;
          }
          send(settingsAck);
          flushBlocked();
          return;
        }
        case FRAME.WINDOW_UPDATE: {
          const increment = payload.readUInt32BE(0) & 0x7fffffff;
          if (id === 0) sendWindow += increment;
          else {
            const stream = streams.get(id);
            if (stream !== undefined) stream.window += increment;
          }
          flushBlocked();
          return;
        }
        case FRAME.PING:
          if (!(flags & ACK)) send(frame(FRAME.PING, ACK, 0, payload));
          return;
        case FRAME.RST_STREAM:
          streams.delete(id);
          return;
        case FRAME.GOAWAY:
          socket.end();
          return;
        default:
          return; // PRIORITY and unknown types are ignored
      }
    };
    const pump = () => {
      if (!preface) {
        if (pending.length < PREFACE.length) return;
        if (!pending.subarray(0, PREFACE.length).equals(PREFACE)) return fail(1);
        preface = true;
        pending = pending.subarray(PREFACE.length);
        send(Buffer.concat([ourSettings, windowUpdate(0, CONNECTION_WINDOW - DEFAULT_WINDOW)]));
      }
      let at = 0;
      while (pending.length - at >= 9) {
        const length = pending.readUIntBE(at, 3);
        if (length > MAX_FRAME) return fail(6);
        if (pending.length - at < 9 + length) break;
        onFrame(pending[at + 3], pending[at + 4], pending.readUInt32BE(at + 5) & 0x7fffffff, pending.subarray(at + 9, at + 9 + length));
        if (socket.destroyed || pending.length === 0) return;
        at += 9 + length;
      }
      pending = pending.subarray(at);
    };
    socket.on('data', (chunk) => {
      pending = pending.length === 0 ? chunk : Buffer.concat([pending, chunk]);
      try {
        pump();
      } catch {
        fail(9); // COMPRESSION_ERROR: the only throws are the HPACK decoder's
      }
    });
    socket.on('error', () => {});
  });
}
