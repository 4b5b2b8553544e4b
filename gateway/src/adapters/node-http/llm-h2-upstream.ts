/**
 * The LlmUpstream port over cleartext HTTP/2, for nodes that advertise `llmH2Address` (their
 * --llm-h2c-port): one session per node carries all its streams, so one read of the node's socket
 * brings the events of many streams (over HTTP/1.1 every stream is a connection and every event a read
 * of its own: docs/benchmarks.md, issue 20). Nodes without that address go to `fallback` (HTTP/1.1).
 *
 * - Cancellation: aborting the request's signal resets the stream (RST_STREAM CANCEL); the node's
 *   route sees its request's signal abort, as when an HTTP/1.1 connection closes.
 * - Back-pressure: the answer is the stream itself; a consumer that pauses it stops the stream's
 *   flow-control window from reopening, so the node stops sending after one window (64 KiB) per
 *   stream. The session's own window is sized for every stream's at once, so one stalled stream
 *   never holds up the others.
 * - A node gone or a GOAWAY fails only that session's streams: a stream the node never took (refused,
 *   past the GOAWAY, session never connected) is marked not accepted and may be retried elsewhere; a
 *   stream cut mid-answer makes the body's iteration throw. The next request opens a fresh session.
 */
import { connect, constants, type ClientHttp2Session, type ClientHttp2Stream, type IncomingHttpHeaders } from 'node:http2';
import { connect as netConnect } from 'node:net';
import { TesseraError } from '../../../../shared/src/errors/index.js';
import type { LlmUpstream, LlmUpstreamRequest, LlmUpstreamResponse, NodeView } from '../../core/ports/index.js';
import { markNotAccepted } from '../../core/routing/upstream-errors.js';
import type { NodeBreakers } from '../grpc/node-breakers.js';
import { makeDirectBody } from './h2-direct-body.js';

export interface LlmH2UpstreamOptions {
  /** Where nodes without an HTTP/2 address go (the HTTP/1.1 upstream). */
  readonly fallback: LlmUpstream;
  readonly breakers?: NodeBreakers;
  /** Streams one node may carry at once (sizes the session's flow-control window); default 256. */
  readonly maxStreamsPerNode?: number;
}

/** Per-stream receive window: what a paused stream may leave buffered at the gateway. */
const STREAM_WINDOW_BYTES = 64 * 1024;
/** A session with no stream for this long is closed. */
const IDLE_SESSION_MS = 60_000;

const CONNECT_CODES = new Set(['ECONNREFUSED', 'EHOSTUNREACH', 'ENETUNREACH', 'ENOTFOUND', 'EAI_AGAIN', 'ECONNRESET', 'EPIPE']);

function flatHeaders(headers: IncomingHttpHeaders): Record<string, string> {
  const out: Record<string, string> = {};
  // for-in, not Object.entries: no array per header on the way to a stream's first byte.
  for (const name in headers) {
    const value = headers[name];
    if (name.charCodeAt(0) === 58 /* ':' */ || value === undefined) continue;
    out[name] = Array.isArray(value) ? value.join(', ') : value;
  }
  return out;
}

class NodeSession {
  readonly session: ClientHttp2Session;
  connected = false;

  constructor(address: string, maxStreams: number, onGone: (session: NodeSession) => void) {
    this.session = connect(`http://${address}`, {
      settings: { initialWindowSize: STREAM_WINDOW_BYTES, enablePush: false },
      maxSessionMemory: 64,
      // Requests are small writes on a shared socket: without NODELAY, Nagle holds one back behind another's ACK.
      createConnection: (url: URL) => netConnect({ host: url.hostname.replace(/^\[|\]$/g, ''), port: Number(url.port), noDelay: true }),
    });
    const session = this.session;
    session.once('connect', () => {
      this.connected = true;
      // Room for every stream's window at once: a paused stream must not starve its neighbours.
      session.setLocalWindowSize(Math.max(1 << 20, maxStreams * STREAM_WINDOW_BYTES * 2));
    });
    // Errors reach the streams (each fails on its own); the session only leaves the pool.
    session.on('error', () => onGone(this));
    session.once('goaway', () => onGone(this));
    session.once('close', () => onGone(this));
    session.setTimeout(IDLE_SESSION_MS, () => {
      // Idle means no frame; one with streams open still has its answers coming.
      onGone(this);
      session.close();
    });
  }
}

/**
 * A session torn down under a stream (the node killed, its socket closed) ends the stream's readable
 * side like a complete answer, only with a non-zero close code: that end is dropped (the stream
 * closes without 'end', or with an error), so a cut answer is never taken for a whole one. The body
 * is also readable below its Readable (h2-direct-body.ts), as the native relay reads it.
 */
function failTruncatedEnd(stream: ClientHttp2Stream, nodeId: string): void {
  makeDirectBody(stream, () => {
    const code = stream.rstCode;
    if (code === undefined || code === constants.NGHTTP2_NO_ERROR) return true;
    // Already destroyed with the session, it then closes without 'end', which readers take as a cut.
    if (!stream.destroyed) stream.destroy(new Error(`the stream from node '${nodeId}' was cut mid-answer (HTTP/2 code ${code})`));
    return false;
  });
}

export function createLlmH2Upstream(options: LlmH2UpstreamOptions): LlmUpstream & { close(): void } {
  const sessions = new Map<string, NodeSession>();
  const maxStreams = options.maxStreamsPerNode ?? 256;

  function sessionFor(address: string): NodeSession {
    let entry = sessions.get(address);
    if (entry === undefined || entry.session.closed || entry.session.destroyed) {
      entry = new NodeSession(address, maxStreams, (gone) => {
        if (sessions.get(address) === gone) sessions.delete(address);
      });
      sessions.set(address, entry);
    }
    return entry;
  }

  function call(node: NodeView, address: string, request: LlmUpstreamRequest): Promise<LlmUpstreamResponse> {
    return new Promise<LlmUpstreamResponse>((resolve, reject) => {
      if (request.signal.aborted) {
        reject(Object.assign(TesseraError.cancelled('the client closed the connection'), { excused: true }));
        return;
      }
      const entry = sessionFor(address);
      const body = request.body;
      let stream: ClientHttp2Stream;
      try {
        stream = entry.session.request(
          {
            ':method': request.method,
            ':path': request.path,
            ...request.headers,
            ...(body === undefined ? {} : { 'content-length': String(body.length) }),
          },
          { endStream: body === undefined },
        );
      } catch (error) {
        // The session closed between the lookup and the request (GOAWAY received): nothing was sent.
        reject(markNotAccepted(TesseraError.unavailable(`node '${node.id}' could not take a stream: ${(error as Error).message}`)));
        return;
      }
      let answered = false;
      let aborted = false;
      const timer = setTimeout(() => {
        fail(TesseraError.deadlineExceeded(`node '${node.id}' did not answer within ${request.headersTimeoutMs} ms`));
        stream.close(constants.NGHTTP2_CANCEL);
      }, request.headersTimeoutMs);
      const onAbort = (): void => {
        aborted = true;
        if (!answered) fail(Object.assign(TesseraError.cancelled('the client closed the connection'), { excused: true }));
        stream.close(constants.NGHTTP2_CANCEL);
      };
      request.signal.addEventListener('abort', onAbort, { once: true });
      let settled = false;
      function fail(error: TesseraError): void {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        reject(error);
      }

      stream.once('response', (headers) => {
        if (settled) return;
        settled = answered = true;
        clearTimeout(timer);
        resolve({ status: Number(headers[':status'] ?? 502), headers: flatHeaders(headers), body: stream });
      });
      stream.on('error', (error: NodeJS.ErrnoException) => {
        if (answered || aborted) return; // the body's iteration (or nobody) reports it
        const code = error.code ?? '';
        const refused = stream.rstCode === constants.NGHTTP2_REFUSED_STREAM || code === 'ERR_HTTP2_GOAWAY_SESSION';
        const notAccepted = !entry.connected || refused || CONNECT_CODES.has(code) || CONNECT_CODES.has((error.cause as NodeJS.ErrnoException | undefined)?.code ?? '');
        fail(markNotAccepted(TesseraError.unavailable(`node '${node.id}' could not be reached over HTTP/2: ${error.message}`), notAccepted));
      });
      stream.once('close', () => {
        request.signal.removeEventListener('abort', onAbort);
        if (!answered) {
          // Closed with no answer and no error: reset by the node (refused past its stream bound) or the session went.
          const refused = stream.rstCode === constants.NGHTTP2_REFUSED_STREAM || !entry.connected;
          fail(markNotAccepted(TesseraError.unavailable(`node '${node.id}' closed the stream before answering (code ${stream.rstCode})`), refused));
        }
      });
      failTruncatedEnd(stream, node.id);
      if (body !== undefined) stream.end(body);
    });
  }

  return {
    send(node, request) {
      const address = node.llmH2Address;
      if (address === undefined || address === null) return options.fallback.send(node, request);
      return options.breakers === undefined ? call(node, address, request) : options.breakers.run(node.id, () => call(node, address, request));
    },
    close() {
      for (const entry of sessions.values()) entry.session.destroy();
      sessions.clear();
    },
  };
}
