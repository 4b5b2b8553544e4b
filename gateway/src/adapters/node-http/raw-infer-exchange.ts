/**
 * One infer request and its whole answer on a kept-alive raw HTTP/1.1 socket (raw-infer-upstream.ts):
 * the request's buffers written at once (corked: one writev), the answer read strictly
 * (raw-answer-reader.ts) and gathered up to `maxAnswerBytes`. A socket goes back to the pool only
 * after an answer that ended cleanly with nothing after it; anything else destroys it, so one broken
 * answer never reaches the next request on that socket.
 *
 * Failures are TesseraErrors marked as the gRPC upstream marks them (grpc-errors.ts): not accepted only
 * when the connection never came up; an answer that breaks HTTP/1.1 or is too large is BAD_GATEWAY
 * (counted against the node); a connection lost mid-answer is UNAVAILABLE, accepted (the node may have
 * run it); the deadline and the caller's cancellation destroy the socket, so the node sees it go.
 */
import type { Socket } from 'node:net';
import { TesseraError } from '../../../../shared/src/errors/index.js';
import type { CancelSignal } from '../../core/http/cancellation.js';
import { deadlineBeforeAnswer, markNotAccepted } from '../../core/routing/upstream-errors.js';
import { MalformedAnswer, RawAnswerReader, type AnswerEvents, type AnswerHead } from './raw-answer-reader.js';
import type { RawSocketPool, SocketHolder } from './raw-socket-pool.js';
import { DeadlineHeap, type DeadlineEntry, type Expiring } from './deadline-heap.js';

export interface RawInferAnswer {
  readonly status: number;
  /** Lower-case names. */
  readonly headers: Readonly<Record<string, string>>;
  /** A plain Uint8Array view (not a Buffer, whose slice() does not copy), as the gRPC path's tensors are. */
  readonly body: Uint8Array;
}

function plain(bytes: Buffer): Uint8Array {
  return new Uint8Array(bytes.buffer, bytes.byteOffset, bytes.length);
}

export interface RawInferExchange {
  readonly nodeId: string;
  readonly address: string;
  readonly chunks: readonly Uint8Array[];
  /** Absolute, ms since the epoch. */
  readonly deadline: number;
  readonly signal?: CancelSignal;
  readonly maxAnswerBytes: number;
}

function unusable(nodeId: string, problem: string): TesseraError {
  return markNotAccepted(TesseraError.badGateway(`node '${nodeId}' sent an answer the gateway cannot use: ${problem}`), false);
}

export function exchange(pool: RawSocketPool, call: RawInferExchange, fresh = false): Promise<RawInferAnswer> {
  return new Exchange(pool, call, fresh).answer;
}

/** Every exchange's deadline on one timer (deadline-heap.ts says why). */
const deadlines = new DeadlineHeap();

/**
 * One exchange in one object: the socket's events come through the pool's own listeners (SocketHolder)
 * and the answer's through the reader's (AnswerEvents), so a call adds and removes no socket listener
 * and makes one closure (the cancellation's), where ten closures and eight listener changes were; its
 * deadline is an entry of one shared heap, not a timer of its own.
 */
class Exchange implements SocketHolder, AnswerEvents, Expiring {
  readonly answer: Promise<RawInferAnswer>;
  private resolve!: (answer: RawInferAnswer) => void;
  private reject!: (error: unknown) => void;
  private readonly socket: Socket;
  private readonly taken: boolean;
  private connected: boolean;
  private gotBytes = false;
  private settled = false;
  private answerHead: AnswerHead | undefined = undefined;
  private lastError: Error | undefined = undefined;
  private readonly parts: Buffer[] = [];
  private received = 0;
  private readonly reader: RawAnswerReader;
  private readonly deadline: DeadlineEntry;
  private readonly onAbort = (): void => {
    this.fail(Object.assign(TesseraError.cancelled('the request was cancelled'), { excused: true }), false);
  };

  constructor(
    private readonly pool: RawSocketPool,
    private readonly call: RawInferExchange,
    fresh: boolean,
  ) {
    this.answer = new Promise<RawInferAnswer>((resolve, reject) => {
      this.resolve = resolve;
      this.reject = reject;
    });
    const taken = fresh ? undefined : pool.take(call.address, this);
    this.socket = taken ?? pool.open(call.address, this);
    this.taken = this.connected = taken !== undefined;
    if (!this.connected) this.socket.once('connect', () => void (this.connected = true));
    this.reader = new RawAnswerReader(this);
    this.deadline = deadlines.add(call.deadline, this);
    const signal = call.signal;
    if (signal !== undefined) {
      if (signal.aborted) {
        this.onAbort();
        return;
      }
      signal.addEventListener('abort', this.onAbort, { once: true });
    }
    // The head and small sections are one buffer; larger sections follow in the same writev.
    const socket = this.socket;
    if (call.chunks.length > 1) socket.cork();
    for (const chunk of call.chunks) socket.write(chunk);
    if (call.chunks.length > 1) socket.uncork();
  }

  expire(): void {
    this.fail(deadlineBeforeAnswer(this.call.nodeId), false);
  }

  // The reader's events (AnswerEvents).

  head(head: AnswerHead): void {
    const length = head.headers['content-length'];
    const max = this.call.maxAnswerBytes;
    if (length !== undefined && Number(length) > max) throw new MalformedAnswer(`an answer of ${length} bytes is over the ${max}-byte bound`);
    this.answerHead = head;
  }

  data(slice: Buffer): void {
    this.received += slice.length;
    if (this.received > this.call.maxAnswerBytes) throw new MalformedAnswer(`the answer is over the ${this.call.maxAnswerBytes}-byte bound`);
    this.parts.push(slice);
  }

  end(): void {
    this.detach();
    if (this.reader.reusable) this.pool.giveBack(this.call.address, this.socket);
    else this.socket.destroy();
    this.settleAnswer();
  }

  // The socket's events (SocketHolder).

  onData(chunk: Buffer): void {
    this.gotBytes = true;
    try {
      this.reader.feed(chunk);
    } catch (error) {
      if (!(error instanceof MalformedAnswer)) throw error;
      this.detach();
      this.socket.destroy();
      this.settle(unusable(this.call.nodeId, `it broke HTTP/1.1: ${error.message}`));
    }
  }

  onError(error: Error): void {
    this.lastError = error;
  }

  onClose(): void {
    if (this.settled) return;
    const { nodeId } = this.call;
    if (this.reader.endsWithConnection && this.lastError === undefined) {
      // An answer framed by the connection's end: complete now.
      this.reader.reusable = false;
      this.detach();
      this.settleAnswer();
      return;
    }
    this.detach();
    if (this.taken && !this.gotBytes) {
      // A kept-alive socket the node closed as we wrote (it reads nothing while idle): once more, fresh.
      deadlines.cancel(this.deadline);
      this.settled = true;
      exchange(this.pool, this.call, true).then(this.resolve, this.reject);
      return;
    }
    const reason = this.lastError?.message ?? 'the connection closed';
    if (!this.connected) this.settle(markNotAccepted(TesseraError.unavailable(`node '${nodeId}' is unreachable: ${reason}`), true));
    else this.settle(markNotAccepted(TesseraError.unavailable(`the connection to node '${nodeId}' was lost before its answer ended: ${reason}`), false));
  }

  private settleAnswer(): void {
    const { parts, received } = this;
    const body = parts.length === 1 ? parts[0]! : Buffer.concat(parts, received);
    this.settle(undefined, { status: this.answerHead!.status, headers: this.answerHead!.headers, body: plain(body) });
  }

  private settle(error: TesseraError | undefined, answer?: RawInferAnswer): void {
    if (this.settled) return;
    this.settled = true;
    deadlines.cancel(this.deadline);
    if (error === undefined) this.resolve(answer!);
    else this.reject(error);
  }

  private fail(error: TesseraError, notAccepted: boolean): void {
    this.detach();
    this.socket.destroy();
    this.settle(markNotAccepted(error, notAccepted));
  }

  private detach(): void {
    this.pool.letGo(this.socket);
    this.call.signal?.removeEventListener('abort', this.onAbort);
  }
}
