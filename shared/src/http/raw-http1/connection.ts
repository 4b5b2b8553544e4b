/**
 * One client connection read by our own HTTP/1.1 reader for as long as every request on it lies in the strict
 * subset of head-reader.ts and the handler accepts it. The first request that does not (another route, any doubt)
 * is handed, unread, to node:http at a request boundary with nothing in flight: its bytes are put back on the
 * socket and node:http's own connection listener takes the socket from then on.
 *
 * Requests are served one at a time and in order: while one is in flight, reading pauses once one more head has
 * come (once one more head and body have, when its handler watches the client), and while the answers already
 * written wait for a slow reader, so one connection never holds more than two requests and their bodies. An
 * answer is whole (`answer`) or streamed as chunks (`startStream`, stream-writer.ts).
 * The server's timeouts hold as node:http's do (checked by the front door): headers within `headersTimeout`,
 * the whole request within `requestTimeout` (408 and close, as node:http answers), and an idle kept-alive
 * connection is closed after `keepAliveTimeout`.
 */
import type { Socket } from 'node:net';
import { BAD_REQUEST_ANSWER, REQUEST_TIMEOUT_ANSWER, renderAnswerHead, writeAnswer } from './answer-writer.js';
import { LastHead } from './head-memo.js';
import { MAX_HEAD_BYTES, type RawRequestHead } from './head-reader.js';
import { RawStreamWriter, renderStreamHead } from './stream-writer.js';

/** One whole request on the raw path. */
export interface RawRequest {
  readonly head: RawRequestHead;
  readonly body: Uint8Array;
  readonly socket: Socket;
}

/** How the raw path answers a request: exactly once per request, whole (`answer`) or streamed (`startStream`). */
export interface RawAnswer {
  answer(status: number, headers: Readonly<Record<string, string>>, chunks: readonly Uint8Array[], byteLength: number): void;
  /**
   * Starts a chunked answer (stream-writer.ts); the request is answered once the writer's `end` is called.
   * Undefined: the client is gone, or the head is one we refuse to write (the connection is then dropped).
   */
  startStream(status: number, headers: Readonly<Record<string, string>>): RawStreamWriter | undefined;
  /**
   * Keeps reading the client while its request is served, so that its going away is seen at once: `gone` is
   * called once if the socket ends or closes before the answer is done. Bytes of later requests read meanwhile
   * wait (up to one head and one body, then reading pauses) and are served after the answer.
   */
  watchClient(gone: () => void): void;
}

export interface RawHttp1Handler {
  /** Whether the raw path serves this request; false hands the connection to node:http before it. */
  accepts(head: RawRequestHead): boolean;
  /** Serves one whole request; `reply.answer` must be called once (a connection with an unanswered request reads no further request). */
  serve(request: RawRequest, reply: RawAnswer): void;
}

/** What a connection reads of its front door: limits, timeouts (node:http's server fields) and the hand-off. */
export interface RawConnectionContext {
  readonly handler: RawHttp1Handler;
  readonly maxBodyBytes: number;
  readonly headersTimeoutMs: () => number;
  readonly requestTimeoutMs: () => number;
  readonly keepAliveTimeoutMs: () => number;
  /** Gives the socket to node:http (its bytes already put back). */
  handOff(socket: Socket): void;
  /** The connection is no longer ours (closed or handed off). */
  forget(connection: RawConnection): void;
  /** The server is shutting down: end each connection once its answer is written. */
  readonly closing: () => boolean;
}

type Phase = 'idle' | 'head' | 'body' | 'serving';

const EMPTY = Buffer.alloc(0);

export class RawConnection implements RawAnswer {
  private phase: Phase = 'head';
  /** When the current request's first byte came (or the connection opened), or when the last answer was written. */
  private since = Date.now();
  /** Bytes read and not yet consumed (a head, or the requests after the current one). */
  private pending: Buffer = EMPTY;
  private head: RawRequestHead | undefined;
  private readonly lastHead = new LastHead();
  /** The body's chunks while it arrives in pieces. */
  private bodyParts: Buffer[] = [];
  private bodyBytes = 0;
  private ended = false;
  private pumping = false;
  /** Told when the client leaves while its request is served (watchClient). */
  private watcher: (() => void) | undefined = undefined;
  private readonly onData = (chunk: Buffer): void => this.received(chunk);
  private readonly onEnd = (): void => this.clientEnded();
  private readonly onClose = (): void => {
    this.context.forget(this);
    this.clientGone();
  };
  private readonly onDrain = (): void => this.resumeReading();

  constructor(
    readonly socket: Socket,
    private readonly context: RawConnectionContext,
  ) {
    socket.on('data', this.onData);
    socket.on('end', this.onEnd);
    socket.on('close', this.onClose);
    socket.on('error', ignore);
  }

  /** Nothing read of a next request and nothing in flight: safe to close at shutdown. */
  get idle(): boolean {
    return this.phase === 'idle' || (this.phase === 'head' && this.pending.byteLength === 0);
  }

  /** Applies the timeouts at `now` (the front door calls this now and then). */
  checkTimeouts(now: number): void {
    const elapsed = now - this.since;
    if (this.phase === 'idle') {
      const limit = this.context.keepAliveTimeoutMs();
      if (limit > 0 && elapsed >= limit) this.socket.destroy();
      return;
    }
    const limit = this.phase === 'head' ? Math.min(this.context.headersTimeoutMs(), this.context.requestTimeoutMs()) : this.context.requestTimeoutMs();
    if ((this.phase === 'head' || this.phase === 'body') && limit > 0 && elapsed >= limit) this.refuse(REQUEST_TIMEOUT_ANSWER);
  }

  answer(status: number, headers: Readonly<Record<string, string>>, chunks: readonly Uint8Array[], byteLength: number): void {
    if (this.phase !== 'serving' || this.socket.destroyed || this.socket.writableEnded) return;
    let head: string;
    try {
      head = renderAnswerHead(status, headers, byteLength, this.context.keepAliveTimeoutMs());
    } catch {
      this.socket.destroy(); // a head we refuse to write: the client sees the connection drop, never a split head
      return;
    }
    this.answered(writeAnswer(this.socket, head, chunks));
  }

  startStream(status: number, headers: Readonly<Record<string, string>>): RawStreamWriter | undefined {
    if (this.phase !== 'serving' || this.socket.destroyed || this.socket.writableEnded) return undefined;
    let head: string;
    try {
      // A shutdown under way: this answer is the connection's last, said in its head.
      head = renderStreamHead(status, headers, this.context.keepAliveTimeoutMs(), this.context.closing());
    } catch {
      this.socket.destroy();
      return undefined;
    }
    return new RawStreamWriter(this.socket, head, () => this.answered(this.socket.writableLength === 0));
  }

  watchClient(gone: () => void): void {
    if (this.phase !== 'serving') return;
    this.watcher = gone;
    if (this.socket.destroyed || this.socket.readableEnded) this.clientGone();
    else this.socket.resume();
  }

  /** The current request's answer is written: on to the next (`drained`: nothing of it waits in the socket). */
  private answered(drained: boolean): void {
    this.watcher = undefined;
    this.phase = 'idle';
    this.since = Date.now();
    if (this.context.closing()) {
      this.socket.end();
      return;
    }
    // The client reads its answers slowly: read nothing more until they have left.
    if (!drained) {
      this.socket.pause();
      this.socket.once('drain', this.onDrain);
    } else this.resumeReading();
  }

  /** The client ended or closed while its request is served: tell the watcher, once. */
  private clientGone(): void {
    const gone = this.watcher;
    this.watcher = undefined;
    gone?.();
  }

  private received(chunk: Buffer): void {
    if (this.phase === 'idle') {
      this.phase = 'head';
      this.since = Date.now();
    }
    if (this.phase === 'body') {
      this.bodyParts.push(chunk);
      this.bodyBytes += chunk.byteLength;
      if (this.bodyBytes < (this.head as RawRequestHead).contentLength) return;
      const all = Buffer.concat(this.bodyParts, this.bodyBytes);
      this.bodyParts = [];
      this.bodyBytes = 0;
      this.pending = all; // the body first, then whatever followed it
      this.phase = 'head';
      this.startServing(this.head as RawRequestHead, 0);
      return;
    }
    this.pending = this.pending.byteLength === 0 ? chunk : Buffer.concat([this.pending, chunk]);
    // Bytes behind the request in flight wait for its answer: at most one more head and body when its client is
    // watched, one head otherwise; past that, reading pauses.
    if (this.phase === 'serving') {
      const held = this.watcher === undefined ? MAX_HEAD_BYTES : MAX_HEAD_BYTES + this.context.maxBodyBytes;
      if (this.pending.byteLength > held) this.socket.pause();
      return;
    }
    this.pump();
  }

  /** Reads and serves the requests in `pending` until one is in flight, more bytes are needed, or the socket leaves. */
  private pump(): void {
    if (this.pumping) return;
    this.pumping = true;
    try {
      while (this.phase === 'head' && this.pending.byteLength > 0 && !this.socket.destroyed) {
        const head = this.lastHead.read(this.pending);
        if (head === 'incomplete') break;
        if (head === 'handOff' || head.contentLength > this.context.maxBodyBytes || !this.context.handler.accepts(head)) {
          this.giveToNodeHttp();
          return;
        }
        const have = this.pending.byteLength - head.headBytes;
        if (have < head.contentLength) {
          // The body comes in pieces: gather them, then join once (a large body is never re-copied per chunk).
          this.head = head;
          this.phase = 'body';
          const part = this.pending.subarray(head.headBytes);
          this.bodyParts = part.byteLength > 0 ? [part] : [];
          this.bodyBytes = part.byteLength;
          this.pending = EMPTY;
          break;
        }
        this.startServing(head, head.headBytes);
      }
    } finally {
      this.pumping = false;
    }
    if (this.ended && this.phase !== 'serving') this.endOfStream();
  }

  /** `pending` has the request's body at `bodyStart` (0 after a body read in pieces, else after the head): serve it. */
  private startServing(head: RawRequestHead, bodyStart: number): void {
    this.head = undefined;
    const body = this.pending.subarray(bodyStart, bodyStart + head.contentLength);
    this.pending = this.pending.subarray(bodyStart + head.contentLength);
    if (this.pending.byteLength === 0) this.pending = EMPTY;
    // Reading is not paused here: a client that sends one request at a time (every infer client) sends nothing
    // more until answered, and pausing and resuming the socket per request cost ~3% of the main thread.
    this.phase = 'serving';
    this.context.handler.serve({ head, body, socket: this.socket }, this);
  }

  private resumeReading(): void {
    if (this.socket.destroyed) return;
    if (this.pending.byteLength > 0) {
      this.phase = 'head';
      this.since = Date.now();
    }
    this.pump();
    if (this.phase !== 'serving' && !this.socket.destroyed) this.socket.resume();
  }

  private clientEnded(): void {
    this.ended = true;
    // As node:http (not half-open): a client that ends its side while served is gone; what was written still leaves.
    if (this.phase === 'serving' && this.watcher !== undefined) {
      this.clientGone();
      this.socket.end();
      return;
    }
    // An answer still to come is written first: the end is acted on once it is (pump).
    if (this.phase !== 'serving') this.endOfStream();
  }

  /** The client's end read, nothing in flight: a request cut short by it gets node:http's 400, else the socket ends. */
  private endOfStream(): void {
    if (this.phase === 'body' || (this.phase === 'head' && this.pending.byteLength > 0)) this.refuse(BAD_REQUEST_ANSWER);
    else this.socket.end();
  }

  private giveToNodeHttp(): void {
    const socket = this.socket;
    this.detach(true);
    socket.pause();
    if (this.pending.byteLength > 0) socket.unshift(this.pending);
    this.pending = EMPTY;
    this.context.handOff(socket);
    socket.resume();
  }

  private refuse(answer: string): void {
    this.detach();
    this.socket.pause();
    const socket = this.socket;
    socket.end(answer, 'latin1', () => socket.destroy());
  }

  /** Takes this connection's listeners off the socket (the error guard stays unless node:http takes over). */
  private detach(handingOff = false): void {
    this.socket.off('data', this.onData);
    this.socket.off('end', this.onEnd);
    this.socket.off('close', this.onClose);
    this.socket.off('drain', this.onDrain);
    this.watcher = undefined;
    if (handingOff) this.socket.off('error', ignore);
    this.context.forget(this);
  }
}

function ignore(): void {}
