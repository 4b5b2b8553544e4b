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
import { markNotAccepted } from '../../core/routing/upstream-errors.js';
import { MalformedAnswer, RawAnswerReader, type AnswerHead } from './raw-answer-reader.js';
import type { RawSocketPool } from './raw-socket-pool.js';

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
  return new Promise<RawInferAnswer>((resolve, reject) => {
    const { nodeId, address, signal } = call;
    const taken = fresh ? undefined : pool.take(address);
    const socket: Socket = taken ?? pool.open(address);
    let connected = taken !== undefined;
    let gotBytes = false;
    let settled = false;
    let head: AnswerHead | undefined;
    let lastError: Error | undefined;
    const parts: Buffer[] = [];
    let received = 0;

    const reader = new RawAnswerReader({
      head: (h) => {
        const length = h.headers['content-length'];
        if (length !== undefined && Number(length) > call.maxAnswerBytes) throw new MalformedAnswer(`an answer of ${length} bytes is over the ${call.maxAnswerBytes}-byte bound`);
        head = h;
      },
      data: (slice) => {
        received += slice.length;
        if (received > call.maxAnswerBytes) throw new MalformedAnswer(`the answer is over the ${call.maxAnswerBytes}-byte bound`);
        parts.push(slice);
      },
      end: () => {
        detach();
        if (reader.reusable) pool.giveBack(address, socket);
        else socket.destroy();
        const body = parts.length === 1 ? parts[0]! : Buffer.concat(parts, received);
        settle(undefined, { status: head!.status, headers: head!.headers, body: plain(body) });
      },
    });

    const timer = setTimeout(() => {
      fail(TesseraError.deadlineExceeded(`the request deadline passed before node '${nodeId}' answered`), false);
    }, Math.max(0, call.deadline - Date.now()));

    function settle(error: TesseraError | undefined, answer?: RawInferAnswer): void {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      if (error === undefined) resolve(answer!);
      else reject(error);
    }
    function fail(error: TesseraError, notAccepted: boolean): void {
      detach();
      socket.destroy();
      settle(markNotAccepted(error, notAccepted));
    }
    function detach(): void {
      socket.off('connect', onConnect);
      socket.off('data', onData);
      socket.off('error', onError);
      socket.off('close', onClose);
      signal?.removeEventListener('abort', onAbort);
    }
    function onConnect(): void {
      connected = true;
    }
    function onData(chunk: Buffer): void {
      gotBytes = true;
      try {
        reader.feed(chunk);
      } catch (error) {
        if (!(error instanceof MalformedAnswer)) throw error;
        detach();
        socket.destroy();
        settle(unusable(nodeId, `it broke HTTP/1.1: ${error.message}`));
      }
    }
    function onError(error: Error): void {
      lastError = error;
    }
    function onClose(): void {
      if (settled) return;
      if (reader.endsWithConnection && lastError === undefined) {
        // An answer framed by the connection's end: complete now.
        reader.reusable = false;
        detach();
        settle(undefined, { status: head!.status, headers: head!.headers, body: plain(Buffer.concat(parts, received)) });
        return;
      }
      detach();
      if (taken !== undefined && !gotBytes) {
        // A kept-alive socket the node closed as we wrote (it reads nothing while idle): once more, fresh.
        clearTimeout(timer);
        settled = true;
        exchange(pool, call, true).then(resolve, reject);
        return;
      }
      const reason = lastError?.message ?? 'the connection closed';
      if (!connected) settle(markNotAccepted(TesseraError.unavailable(`node '${nodeId}' is unreachable: ${reason}`), true));
      else settle(markNotAccepted(TesseraError.unavailable(`the connection to node '${nodeId}' was lost before its answer ended: ${reason}`), false));
    }
    function onAbort(): void {
      fail(Object.assign(TesseraError.cancelled('the request was cancelled'), { excused: true }), false);
    }

    socket.on('data', onData);
    socket.on('error', onError);
    socket.on('close', onClose);
    if (!connected) socket.once('connect', onConnect);
    if (signal !== undefined) {
      if (signal.aborted) {
        onAbort();
        return;
      }
      signal.addEventListener('abort', onAbort, { once: true });
    }
    // The head and small sections are one buffer; larger sections follow in the same writev.
    if (call.chunks.length > 1) socket.cork();
    for (const chunk of call.chunks) socket.write(chunk);
    if (call.chunks.length > 1) socket.uncork();
  });
}
