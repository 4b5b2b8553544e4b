/**
 * The infer fast path: `POST /v2/models/{m}[/versions/{v}]/infer` served straight on node:http's
 * IncomingMessage/ServerResponse, ahead of Hono. Every other request (and an infer path the shared
 * matcher is unsure of: matchInferPath leaves escaped or unusual model names to the router) goes on to
 * the Hono app.
 *
 * Why: infer is the one route on the hot path, and the Web Request/Response layer costs more than the
 * rest of the request (a profile of `simple` at 2,400 req/s spent ~10% of the main thread building
 * undici Requests, AbortSignals and ReadableStreams for bodies, and ~4% turning Responses back into
 * node writes). The logic itself is shared with the Hono route (infer-route.ts), so both answer alike.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { isTesseraError, TesseraError } from '../../../../shared/src/errors/index.js';
import { incomingHeader, matchInferPath, type InferTarget } from '../../../../shared/src/http/index.js';
import { connectionSignal } from './connection-signal.js';
import { allowedBy, type Restriction } from '../restricted-apis.js';
import { readIncomingBody, type ReadBodyOptions } from './body-reader.js';
import { runInfer, type InferHttpInput, type InferRouteContext } from './infer-route.js';
import { withLoadHeaders } from './load-headers.js';
import { errorAnswer, type HttpLogger } from './responses.js';

export type NativeListener = (incoming: IncomingMessage, outgoing: ServerResponse) => boolean;

/**
 * Returns a listener that serves infer requests and answers false for anything else, so the caller
 * hands those to the router. With the inference category restricted (--http-restricted-api), a request
 * without the header and value is left to the router too, which refuses it (403) as every route does.
 */
export function createNativeInferListener(context: InferRouteContext, logger: HttpLogger, restriction?: Restriction): NativeListener {
  return (incoming, outgoing) => {
    if (incoming.method !== 'POST' || incoming.url === undefined) return false;
    if (restriction !== undefined && !allowedBy(restriction, incoming.headers[restriction.header.toLowerCase()])) return false;
    const target = matchInferPath(incoming.url);
    if (target === undefined) return false;
    void serve(context, logger, incoming, outgoing, target);
    return true;
  };
}

async function serve(
  context: InferRouteContext,
  logger: HttpLogger,
  incoming: IncomingMessage,
  outgoing: ServerResponse,
  target: InferTarget,
): Promise<void> {
  // Aborted when the connection closes; shared by the connection's requests (connection-signal.ts).
  const clientSignal = connectionSignal(incoming.socket);
  const input = new IncomingInferInput(incoming, clientSignal);
  try {
    const answer = await runInfer(context, input, target.model, target.version);
    // Load headers before Content-Length: the order the raw reader's answer writer gives (raw-infer.ts).
    const headers = withLoadHeaders(answer.headers, context.core, target.model);
    headers['Content-Length'] = String(answer.byteLength);
    outgoing.writeHead(200, headers);
    writeChunks(outgoing, answer.chunks);
  } catch (error) {
    const failure = clientSignal.aborted && !isTesseraError(error) ? TesseraError.cancelled('the client closed the connection') : error;
    const answer = errorAnswer(failure, logger, { method: 'POST', url: incoming.url ?? '' });
    if (outgoing.headersSent || outgoing.destroyed) return;
    // A body we stopped reading (over a limit, undecodable) cannot be skipped on a kept-alive
    // connection without reading it all: close the connection after the answer instead.
    const unread = !incoming.complete;
    const headers: Record<string, string> = { ...withLoadHeaders({ ...answer.headers }, context.core, target.model), 'Content-Length': String(Buffer.byteLength(answer.body)) };
    if (unread) headers['Connection'] = 'close';
    outgoing.writeHead(answer.status, headers);
    outgoing.end(answer.body);
    if (unread) outgoing.once('finish', () => incoming.socket?.destroySoon());
  }
}

/**
 * The answer's chunks in one write: corked, so the head, the JSON header and each output's bytes leave
 * as one writev (end() uncorks fully) instead of being copied into one body first.
 */
function writeChunks(outgoing: ServerResponse, chunks: readonly Uint8Array[]): void {
  const last = chunks.length - 1;
  if (last > 0) outgoing.cork();
  for (let i = 0; i < last; i++) outgoing.write(chunks[i]);
  outgoing.end(chunks[last]);
}

/** The request as infer-route.ts reads it: one object per request, its methods shared, not two closures. */
class IncomingInferInput implements InferHttpInput {
  constructor(
    private readonly incoming: IncomingMessage,
    readonly clientSignal: AbortSignal,
  ) {}

  header(name: string): string | null {
    return incomingHeader(this.incoming, name);
  }

  readBody(options: ReadBodyOptions): Promise<Uint8Array> {
    return readIncomingBody(this.incoming, options);
  }
}
