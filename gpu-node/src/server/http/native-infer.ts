/**
 * The infer fast path: `POST /v2/models/{m}[/versions/{v}]/infer` served straight on node:http's
 * IncomingMessage/ServerResponse, ahead of Hono. Every other request (and an infer path this matcher
 * is unsure of) goes on to the Hono app.
 *
 * Why: infer is the one route on the hot path, and the Web Request/Response layer costs more than the
 * rest of the request (a profile of `simple` at 2,400 req/s spent ~10% of the main thread building
 * undici Requests, AbortSignals and ReadableStreams for bodies, and ~4% turning Responses back into
 * node writes). The logic itself is shared with the Hono route (infer-route.ts), so both answer alike.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { isTesseraError, TesseraError } from '../../../../shared/src/errors/index.js';
import { readIncomingBody } from './body-reader.js';
import { runInfer, type InferHttpInput, type InferRouteContext } from './infer-route.js';
import { errorAnswer, type HttpLogger } from './responses.js';

/** `/v2/models/{model}[/versions/{digits}]/infer`, query string allowed. */
const INFER_PATH = /^\/v2\/models\/([^/?]+)(?:\/versions\/([0-9]+))?\/infer(?:\?.*)?$/;

export type NativeListener = (incoming: IncomingMessage, outgoing: ServerResponse) => boolean;

interface InferTarget {
  readonly model: string;
  readonly version: string | undefined;
}

/** The model and version of an infer URL, or undefined when this is not one we serve here. */
export function matchInferPath(url: string): InferTarget | undefined {
  const match = INFER_PATH.exec(url);
  if (match === null) return undefined;
  let model: string;
  try {
    model = decodeURIComponent(match[1] as string);
  } catch {
    return undefined; // a malformed escape: let the router's own decoding decide
  }
  const version = match[2];
  // A version keeps its value but not its leading zeros, as the Hono route does.
  return { model, version: version === undefined ? undefined : BigInt(version).toString() };
}

/**
 * Returns a listener that serves infer requests and answers false for anything else, so the caller
 * hands those to the router.
 */
export function createNativeInferListener(context: InferRouteContext, logger: HttpLogger): NativeListener {
  return (incoming, outgoing) => {
    if (incoming.method !== 'POST' || incoming.url === undefined) return false;
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
  const client = new AbortController();
  // 'close' before the answer was written means the client went away: the queued request is dropped.
  const onClose = (): void => {
    if (!outgoing.writableFinished) client.abort(TesseraError.cancelled('the client closed the connection'));
  };
  outgoing.once('close', onClose);
  const input: InferHttpInput = {
    header: (name) => headerValue(incoming, name),
    readBody: (options) => readIncomingBody(incoming, options),
    clientSignal: client.signal,
  };
  try {
    const answer = await runInfer(context, input, target.model, target.version);
    answer.headers['Content-Length'] = String(answer.body.byteLength);
    outgoing.writeHead(200, answer.headers);
    outgoing.end(answer.body);
  } catch (error) {
    const failure = client.signal.aborted && !isTesseraError(error) ? TesseraError.cancelled('the client closed the connection') : error;
    const answer = errorAnswer(failure, logger, { method: 'POST', url: incoming.url ?? '' });
    if (outgoing.headersSent || outgoing.destroyed) return;
    // A body we stopped reading (over a limit, undecodable) cannot be skipped on a kept-alive
    // connection without reading it all: close the connection after the answer instead.
    const unread = !incoming.complete;
    const headers: Record<string, string> = { ...answer.headers, 'Content-Length': String(Buffer.byteLength(answer.body)) };
    if (unread) headers['Connection'] = 'close';
    outgoing.writeHead(answer.status, headers);
    outgoing.end(answer.body);
    if (unread) outgoing.once('finish', () => incoming.socket?.destroySoon());
  } finally {
    outgoing.off('close', onClose);
  }
}

function headerValue(incoming: IncomingMessage, name: string): string | null {
  const value = incoming.headers[name];
  if (value === undefined) return null;
  return Array.isArray(value) ? value.join(', ') : value;
}
