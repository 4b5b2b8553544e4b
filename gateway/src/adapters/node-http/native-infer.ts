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
import { matchInferPath, type DirectInfer, type InferTarget } from '../../core/app/index.js';
import type { HeaderReader, HttpAnswer } from '../../core/http/index.js';
import { incomingHeader } from '../../../../shared/src/http/index.js';
import { EndOfTurnWriter } from './end-of-turn-writer.js';
import { discardUnreadBody, readIncomingBody } from './incoming-body.js';
import { hasRepeatedAuthorization, isCompressed } from './request-shape.js';

/** Serves the request and answers true, or answers false and leaves it untouched. */
export type NativeListener = (incoming: IncomingMessage, outgoing: ServerResponse) => boolean;

interface Reply {
  readonly outgoing: ServerResponse;
  readonly answer: HttpAnswer;
}

export function createNativeInferListener(serveInfer: DirectInfer, logger: Logger): NativeListener {
  // Answers go out together at the end of each event-loop turn (end-of-turn-writer.ts says why).
  const replies = new EndOfTurnWriter<Reply>(({ outgoing, answer }) => write(outgoing, answer));
  return (incoming, outgoing) => {
    if (incoming.method !== 'POST' || incoming.url === undefined) return false;
    const target = matchInferPath(incoming.url);
    if (target === undefined || isCompressed(incoming) || hasRepeatedAuthorization(incoming)) return false;
    void serve(serveInfer, logger, replies, incoming, outgoing, target);
    return true;
  };
}

async function serve(
  serveInfer: DirectInfer,
  logger: Logger,
  replies: EndOfTurnWriter<Reply>,
  incoming: IncomingMessage,
  outgoing: ServerResponse,
  target: InferTarget,
): Promise<void> {
  const client = new AbortController();
  // 'close' before the answer was written means the client went away: the request is cancelled.
  const onClose = (): void => {
    if (!outgoing.writableFinished) client.abort();
  };
  outgoing.once('close', onClose);
  try {
    const answer = await serveInfer(
      { path: target.path, headers: headerReader(incoming), readBody: (maxBytes) => readIncomingBody(incoming, maxBytes), signal: client.signal },
      target.model,
      target.version,
    );
    replies.push({ outgoing, answer });
  } catch (error) {
    // serveInfer turns failures into answers: reaching this is our bug.
    logger.error('the infer fast path failed', { error: String(error), stack: (error as Error)?.stack });
    write(outgoing, { status: 500, headers: { 'Content-Type': 'application/json' }, body: JSON.stringify({ error: 'internal error' }) });
  } finally {
    outgoing.off('close', onClose);
  }
  if (!incoming.readableEnded) outgoing.once('finish', () => discardUnreadBody(incoming));
}

function write(outgoing: ServerResponse, answer: HttpAnswer): void {
  if (outgoing.headersSent || outgoing.destroyed) return;
  const body = answer.body ?? '';
  const length = typeof body === 'string' ? Buffer.byteLength(body) : body.byteLength;
  outgoing.writeHead(answer.status, { ...answer.headers, 'Content-Length': String(length) });
  outgoing.end(body);
}

/** Headers by lower-case name, read as Web Headers would give them. */
function headerReader(incoming: IncomingMessage): HeaderReader {
  return { get: (name) => incomingHeader(incoming, name) };
}

