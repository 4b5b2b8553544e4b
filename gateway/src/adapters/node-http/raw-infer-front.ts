/**
 * The gateway's infer fast path on our own HTTP/1.1 reader (shared/src/http/raw-http1): the requests
 * native-infer.ts serves, read without node:http's IncomingMessage / ServerResponse and answered through the
 * same core `serveInfer` (DirectInfer), so answer, metric and access line are the same.
 *
 * It takes a request only when its head lies in the reader's strict subset (one Content-Length, no
 * Transfer-Encoding, no Content-Encoding, each header name once: so never two Authorization headers) and
 * its target is an infer path `matchInferPath` accepts; anything else hands the connection, unread, to
 * node:http at that request boundary, where native-infer.ts and the Hono app serve it as before.
 *
 * A body over RAW_MAX_BODY_BYTES goes to node:http too: the raw reader gathers a whole body before the request
 * is served, so before its key is checked, and a public front door must not hold megabytes per connection for
 * clients it has not authenticated (on node:http a 401 is answered before the body is read).
 *
 * Behind a switch, on by default: `httpRawReader` in the config, `--http-raw-reader` on the command line.
 */
import type { Socket } from 'node:net';
import type { Logger } from '../../../../shared/src/logging/index.js';
import { rememberLastTarget, type RawAnswer, type RawHttp1Handler, type RawRequest } from '../../../../shared/src/http/raw-http1/index.js';
import { matchInferPath, type DirectInfer, type DirectInferRequest, type InferTarget } from '../../core/app/index.js';
import { BodyOverLimitError, type CancelSignal, type Cancellation, type HeaderReader, type HttpAnswer } from '../../core/http/index.js';
import { EndOfTurnWriter } from './end-of-turn-writer.js';

/** Largest body the raw reader gathers before authentication: about what node:http buffers of a connection anyway. */
export const RAW_MAX_BODY_BYTES = 64 * 1024;

const INTERNAL_ERROR: HttpAnswer = { status: 500, headers: { 'Content-Type': 'application/json' }, body: JSON.stringify({ error: 'internal error' }) };

/**
 * One request on the raw path, in one object of a fixed shape, as NativeRequest is on node:http: its own
 * header reader and Cancellation, with its AbortSignal and socket listeners made only when something
 * listens (a cache hit makes neither). The client is gone once its socket closed or sent its end of
 * stream: the server is not half-open (node:http aborts such a request and ends the connection too).
 */
class RawInferRequest implements DirectInferRequest, Cancellation, CancelSignal, HeaderReader {
  readonly headers: HeaderReader = this;
  readonly cancel: Cancellation = this;
  readonly watch: CancelSignal = this;
  answer: HttpAnswer | undefined = undefined;
  /** Answered (or failed): from then on the socket is the next request's. */
  private settled = false;
  private listening = false;
  private controller: AbortController | undefined = undefined;
  private listeners: (() => void)[] | undefined = undefined;
  private readonly onGone = (): void => this.clientGone();

  constructor(
    private readonly request: RawRequest,
    readonly reply: RawAnswer,
    readonly path: string,
  ) {}

  get(name: string): string | null {
    return this.request.head.headers.get(name) ?? null;
  }

  /** The whole body is here already (within the server's limit); a tier's smaller limit is checked as native-infer does. */
  readBody(maxBytes: number): Promise<Uint8Array> {
    const { body, head } = this.request;
    if (body.byteLength > maxBytes) return Promise.reject(new BodyOverLimitError(maxBytes, String(head.contentLength)));
    return Promise.resolve(body);
  }

  get aborted(): boolean {
    const socket = this.request.socket;
    return !this.settled && (socket.destroyed || socket.readableEnded);
  }

  get signal(): AbortSignal {
    if (this.controller === undefined) {
      const controller = (this.controller = new AbortController());
      if (this.aborted) controller.abort();
      else this.listen();
    }
    return this.controller.signal;
  }

  /** As AbortSignal's: a listener added after the client left is not called (callers read `aborted`). */
  addEventListener(_type: 'abort', listener: () => void): void {
    this.listeners ??= [];
    this.listeners.push(listener);
    this.listen();
  }

  removeEventListener(_type: 'abort', listener: () => void): void {
    const at = this.listeners?.indexOf(listener) ?? -1;
    if (at >= 0) this.listeners!.splice(at, 1);
  }

  /** Once answered, the socket belongs to the next request: nothing of this one listens to it. */
  stopListening(): void {
    this.settled = true;
    this.unlisten();
  }

  private listen(): void {
    if (this.listening || this.settled) return;
    this.listening = true;
    const socket: Socket = this.request.socket;
    socket.once('end', this.onGone);
    socket.once('close', this.onGone);
  }

  private unlisten(): void {
    if (!this.listening) return;
    this.listening = false;
    this.request.socket.off('end', this.onGone);
    this.request.socket.off('close', this.onGone);
  }

  private clientGone(): void {
    if (this.settled) return;
    this.unlisten();
    this.controller?.abort();
    for (const called of this.listeners?.splice(0) ?? []) called();
  }
}

export function createRawInferHandler(serveInfer: DirectInfer, logger: Logger): RawHttp1Handler {
  // Answers go out together at the end of each event-loop turn, as on node:http (end-of-turn-writer.ts).
  const replies = new EndOfTurnWriter<RawInferRequest>((request) => write(request.reply, request.answer ?? INTERNAL_ERROR));
  const match = rememberLastTarget(matchInferPath);
  return {
    accepts: (head) => match(head.target) !== undefined,
    serve(request, reply) {
      const target = match(request.head.target) as InferTarget;
      void serve(serveInfer, logger, replies, new RawInferRequest(request, reply, target.path), target);
    },
  };
}

async function serve(serveInfer: DirectInfer, logger: Logger, replies: EndOfTurnWriter<RawInferRequest>, request: RawInferRequest, target: InferTarget): Promise<void> {
  try {
    request.answer = await serveInfer(request, target.model, target.version);
  } catch (error) {
    // serveInfer turns failures into answers: reaching this is our bug.
    logger.error('the infer fast path failed', { error: String(error), stack: (error as Error)?.stack });
    request.answer = INTERNAL_ERROR;
  } finally {
    request.stopListening();
  }
  replies.push(request);
}

/** The answer framed as node:http frames native-infer's (raw-http1/answer-writer.ts adds Content-Length and the rest). */
function write(reply: RawAnswer, answer: HttpAnswer): void {
  const body = answer.body ?? '';
  const bytes = typeof body === 'string' ? Buffer.from(body, 'utf8') : body;
  reply.answer(answer.status, answer.headers, [bytes], bytes.byteLength);
}
