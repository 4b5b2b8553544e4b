/**
 * The LlmUpstream port as raw HTTP/1.1 on `net.Socket`, to the nodes' HTTP ports: a request is one
 * pre-rendered buffer written with one `socket.write` on a kept-alive socket, which libuv hands to the
 * kernel inside the call. node:http and node:http2 send a request only after the macrotask that made
 * it ends, so the gateway's bookkeeping after `send` (and node's ~260 µs of http2 `request()`) delayed
 * the node's start by ~0.6 ms at one stream (docs/benchmarks.md, issue 20, raw-flush-check.mjs).
 *
 * - The answer is read strictly (raw-answer-reader.ts); one that breaks HTTP/1.1 fails its request or
 *   its body and the socket is destroyed. A socket goes back to the pool only after a clean end.
 * - Cancellation: aborting the request's signal destroys the socket (the node sees its client leave).
 * - Failures before any answer byte are marked not accepted (retried elsewhere, as node:http's are);
 *   a kept-alive socket the node had closed is first retried once on a fresh connection.
 * - The time to the answer's head runs through the node's circuit breaker when one is given.
 */
import type { Socket } from 'node:net';
import { TesseraError } from '../../../../shared/src/errors/index.js';
import type { LlmUpstream, LlmUpstreamRequest, LlmUpstreamResponse, NodeView } from '../../core/ports/index.js';
import { markNotAccepted } from '../../core/routing/upstream-errors.js';
import type { NodeBreakers } from '../grpc/node-breakers.js';
import { RawAnswerBody } from './raw-answer-body.js';
import { AnswerHeadMemo } from './raw-answer-head.js';
import { MalformedAnswer, RawAnswerReader } from './raw-answer-reader.js';
import { RawRequestBytes, UnsafeRequest } from './raw-request-bytes.js';
import { RawSocketPool } from './raw-socket-pool.js';

export interface LlmRawUpstreamOptions {
  readonly breakers?: NodeBreakers;
  /** Idle sockets kept per node; default 64. */
  readonly maxIdlePerNode?: number;
}

function cancelled(): TesseraError {
  return Object.assign(TesseraError.cancelled('the client closed the connection'), { excused: true });
}

export function createLlmRawUpstream(options: LlmRawUpstreamOptions = {}): LlmUpstream & { close(): void } {
  const pool = new RawSocketPool(options.maxIdlePerNode ?? 64);
  const requests = new RawRequestBytes();
  // Nodes answer every stream with the same head but its Date: read once, then from the memo (raw-answer-head.ts).
  const heads = new AnswerHeadMemo();

  function call(node: NodeView, address: string, request: LlmUpstreamRequest, bytes: Buffer, fresh: boolean): Promise<LlmUpstreamResponse> {
    return new Promise<LlmUpstreamResponse>((resolve, reject) => {
      if (request.signal.aborted) {
        reject(cancelled());
        return;
      }
      const taken = fresh ? undefined : pool.take(address);
      const socket: Socket = taken ?? pool.open(address);
      // Written first: on an idle kept-alive socket the bytes reach the kernel before this call returns.
      socket.write(bytes);
      // Made while the node works, not when its answer comes: less to do between its first bytes and the client's.
      const body = new RawAnswerBody(socket);
      let answered = false;
      let settled = false;
      let gotBytes = false;
      let lastError: NodeJS.ErrnoException | undefined;
      const reader = new RawAnswerReader({
        head: (head) => {
          settled = answered = true;
          clearTimeout(timer);
          const response: LlmUpstreamResponse = { status: head.status, headers: head.headers, body };
          // Before the body's first bytes (they follow in this read): a stream started here gets them directly.
          request.onAnswer?.(response);
          resolve(response);
        },
        data: (slice) => body.deliver(slice),
        end: () => release(),
      }, heads);
      const timer = setTimeout(() => {
        fail(TesseraError.deadlineExceeded(`node '${node.id}' did not answer within ${request.headersTimeoutMs} ms`));
        socket.destroy();
      }, request.headersTimeoutMs);

      function fail(error: TesseraError): void {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        reject(error);
      }
      function detach(): void {
        socket.off('data', onData);
        socket.off('error', onError);
        socket.off('close', onClose);
        request.signal.removeEventListener('abort', onAbort);
      }
      /** The answer ended by its framing: the body ends, the socket is kept if nothing broke keep-alive. */
      function release(): void {
        detach();
        body.finish();
        if (reader.reusable) pool.giveBack(address, socket);
        else socket.destroy();
      }
      function onData(chunk: Buffer): void {
        gotBytes = true;
        try {
          reader.feed(chunk);
        } catch (error) {
          if (!(error instanceof MalformedAnswer)) throw error;
          const message = `node '${node.id}' broke HTTP/1.1: ${error.message}`;
          detach();
          if (!answered) fail(TesseraError.unavailable(message));
          else body.fail(new Error(message));
          socket.destroy();
        }
      }
      function onError(error: NodeJS.ErrnoException): void {
        lastError = error;
      }
      function onClose(): void {
        detach();
        if (answered) {
          // An answer framed by the connection's end ends here; any other is cut.
          if (reader.endsWithConnection && lastError === undefined) body.finish();
          else body.fail(new Error(`the connection to node '${node.id}' closed mid-answer`));
          return;
        }
        if (settled) return;
        if (taken !== undefined && !gotBytes) {
          // A kept-alive socket the node closed as we wrote: once more on a fresh connection.
          clearTimeout(timer);
          settled = true;
          call(node, address, request, bytes, true).then(resolve, reject);
          return;
        }
        const reason = lastError?.message ?? 'the connection closed before an answer';
        // No answer byte came: an LLM request has no side effect, so another node may take it.
        fail(markNotAccepted(TesseraError.unavailable(`node '${node.id}' could not be reached: ${reason}`), !gotBytes));
      }
      function onAbort(): void {
        if (answered) body.fail(new Error('aborted by the gateway'));
        else fail(cancelled());
        socket.destroy();
      }
      socket.on('data', onData);
      socket.on('error', onError);
      socket.on('close', onClose);
      request.signal.addEventListener('abort', onAbort, { once: true });
    });
  }

  function send(node: NodeView, request: LlmUpstreamRequest): Promise<LlmUpstreamResponse> {
    const address = node.httpAddress!;
    let bytes: Buffer;
    try {
      bytes = requests.render(request.method, address, request.path, request.headers, request.body);
    } catch (error) {
      if (error instanceof UnsafeRequest) return Promise.reject(TesseraError.invalidArg(error.message));
      throw error;
    }
    return call(node, address, request, bytes, false);
  }

  return {
    send(node, request) {
      if (node.httpAddress === null) {
        return Promise.reject(markNotAccepted(TesseraError.unavailable(`node '${node.id}' has no HTTP address for LLM routes`)));
      }
      return options.breakers === undefined ? send(node, request) : options.breakers.run(node.id, () => send(node, request));
    },
    close() {
      pool.close();
    },
  };
}
