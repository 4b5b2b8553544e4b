/**
 * The infer fast path on node:http: `POST /v2/models/{m}[/versions/{v}]/infer` served straight from
 * IncomingMessage to ServerResponse through the core's `serveInfer` (core/app/direct-infer.ts), ahead
 * of the Hono app. The listener answers false for anything it leaves to Hono:
 * - any other method or path, or an infer URL the core's matcher is unsure of (matchInferPath);
 * - a compressed body (Content-Encoding other than identity): the core's Web reader decompresses;
 * - a request with several Authorization headers: node:http keeps only the first, Web Headers join
 *   them (a malformed key, 401), and the two paths must not disagree.
 * Whichever path serves it, a request gets the same answer, metrics and log line.
 *
 * Why: a profile of a cache hit spent about a quarter of the gateway's CPU building Web Requests
 * (headers, AbortSignal, body stream), Web Responses (twice: the route's and the one with the extra
 * headers) and in Hono's dispatch. Same pattern as the node agent's gpu-node/src/server/http/native-infer.ts.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Logger } from '../../../../shared/src/logging/index.js';
import { matchInferPath, type DirectInfer, type DirectInferRequest, type InferTarget } from '../../core/app/index.js';
import type { CancelSignal, Cancellation, HeaderReader, HttpAnswer } from '../../core/http/index.js';
import { incomingHeader } from '../../../../shared/src/http/index.js';
import { EndOfTurnWriter } from './end-of-turn-writer.js';
import { discardUnreadBody, readIncomingBody } from './incoming-body.js';
import { hasRepeatedAuthorization, isCompressed } from './request-shape.js';

/** Serves the request and answers true, or answers false and leaves it untouched. */
export type NativeListener = (incoming: IncomingMessage, outgoing: ServerResponse) => boolean;

/**
 * One request on the fast path: what the core reads of it (path, headers, body, cancellation) and,
 * once known, its answer, in one object of a fixed shape. It is its own header reader and its own
 * Cancellation: its AbortSignal, and the 'close' listener that aborts it, are made on first read of
 * `signal`, so a cache hit makes neither (core/http/cancellation.ts); `aborted` reads the response's
 * state instead (node:http marks it destroyed when the connection closes).
 */
class NativeRequest implements DirectInferRequest, Cancellation, CancelSignal, HeaderReader {
  readonly headers: HeaderReader = this;
  readonly cancel: Cancellation = this;
  /** What the cache, dispatcher and upstream call listen to: this, no AbortController (a miss's). */
  readonly watch: CancelSignal = this;
  /** Set when serveInfer answered; written at the end of the turn. */
  answer: HttpAnswer | undefined = undefined;
  private controller: AbortController | undefined = undefined;
  private onClose: (() => void) | undefined = undefined;
  /** The watch's listeners, and the one 'close' listener that calls them; made on first add. */
  private listeners: (() => void)[] | undefined = undefined;
  private onWatchClose: (() => void) | undefined = undefined;

  constructor(
    private readonly incoming: IncomingMessage,
    readonly outgoing: ServerResponse,
    readonly path: string,
  ) {}

  get(name: string): string | null {
    return incomingHeader(this.incoming, name);
  }

  readBody(maxBytes: number): Promise<Uint8Array> {
    return readIncomingBody(this.incoming, maxBytes);
  }

  /** The connection closed before the answer was written: the client went away. */
  get aborted(): boolean {
    return this.outgoing.destroyed && !this.outgoing.writableFinished;
  }

  get signal(): AbortSignal {
    if (this.controller === undefined) {
      const controller = (this.controller = new AbortController());
      if (this.aborted) controller.abort();
      else {
        this.onClose = () => {
          if (!this.outgoing.writableFinished) controller.abort();
        };
        this.outgoing.once('close', this.onClose);
      }
    }
    return this.controller.signal;
  }

  /** As AbortSignal's: a listener added after the client left is not called (callers read `aborted`). */
  addEventListener(_type: 'abort', listener: () => void): void {
    if (this.listeners === undefined) {
      const listeners: (() => void)[] = (this.listeners = []);
      this.onWatchClose = () => {
        if (this.outgoing.writableFinished) return;
        for (const called of listeners.splice(0)) called();
      };
      this.outgoing.once('close', this.onWatchClose);
    }
    this.listeners.push(listener);
  }

  removeEventListener(_type: 'abort', listener: () => void): void {
    const at = this.listeners?.indexOf(listener) ?? -1;
    if (at >= 0) this.listeners!.splice(at, 1);
  }

  /** Once answered, a close no longer cancels anything. */
  stopListening(): void {
    if (this.onClose !== undefined) this.outgoing.off('close', this.onClose);
    if (this.onWatchClose !== undefined) this.outgoing.off('close', this.onWatchClose);
  }
}

export function createNativeInferListener(serveInfer: DirectInfer, logger: Logger): NativeListener {
  // Answers go out together at the end of each event-loop turn (end-of-turn-writer.ts says why).
  const replies = new EndOfTurnWriter<NativeRequest>((request) => write(request.outgoing, request.answer!));
  return (incoming, outgoing) => {
    if (incoming.method !== 'POST' || incoming.url === undefined) return false;
    const target = matchInferPath(incoming.url);
    if (target === undefined || isCompressed(incoming) || hasRepeatedAuthorization(incoming)) return false;
    void serve(serveInfer, logger, replies, new NativeRequest(incoming, outgoing, target.path), target);
    return true;
  };
}

async function serve(serveInfer: DirectInfer, logger: Logger, replies: EndOfTurnWriter<NativeRequest>, request: NativeRequest, target: InferTarget): Promise<void> {
  const { outgoing } = request;
  try {
    request.answer = await serveInfer(request, target.model, target.version);
    replies.push(request);
  } catch (error) {
    // serveInfer turns failures into answers: reaching this is our bug.
    logger.error('the infer fast path failed', { error: String(error), stack: (error as Error)?.stack });
    write(outgoing, { status: 500, headers: { 'Content-Type': 'application/json' }, body: JSON.stringify({ error: 'internal error' }) });
  } finally {
    request.stopListening();
  }
  const incoming = outgoing.req;
  if (!incoming.readableEnded) outgoing.once('finish', () => discardUnreadBody(incoming));
}

/** `answer.headers` is this answer's own (DirectInfer's contract): Content-Length is added in place. */
function write(outgoing: ServerResponse, answer: HttpAnswer): void {
  if (outgoing.headersSent || outgoing.destroyed) return;
  const body = answer.body ?? '';
  const headers = answer.headers;
  headers['Content-Length'] = String(typeof body === 'string' ? Buffer.byteLength(body) : body.byteLength);
  outgoing.writeHead(answer.status, headers);
  outgoing.end(body);
}
