/**
 * The LLM POST routes on node:http, ahead of the Hono app (as native-infer.ts does for infer):
 * `/v1/completions`, `/v1/chat/completions` and `/v2/models/{m}[/versions/{v}]/generate[_stream]`,
 * served through the core's `DirectLlm` (core/llm/direct-llm.ts), a streamed answer written from the
 * node's socket to the client's (relay-to-response.ts). The listener answers false for what it leaves
 * to Hono: other methods and paths, a URL the matcher is unsure of (core/llm/llm-path.ts), and the
 * request shapes of request-shape.ts. Whichever path serves it, a request gets the same answer,
 * metrics and log line; the Hono routes stay for Workers.
 *
 * Why: per streamed token, the Hono path spent its time in Web Streams machinery (the ReadableStream
 * answer pulled by @hono/node-server: pull/enqueue/read promises), the upstream body's async iterator,
 * and garbage from both (docs/benchmarks.md, issue 20).
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Logger } from '../../../../shared/src/logging/index.js';
import { incomingHeader } from '../../../../shared/src/http/index.js';
import { matchLlmPostPath, type DirectLlm, type DirectLlmAnswer, type LlmPostTarget } from '../../core/llm/index.js';
import { discardUnreadBody, readIncomingBody } from './incoming-body.js';
import type { NativeListener } from './native-infer.js';
import { relayToResponse } from './relay-to-response.js';
import { hasRepeatedAuthorization, isCompressed } from './request-shape.js';

export function createNativeLlmListener(serveLlm: DirectLlm, logger: Logger): NativeListener {
  return (incoming, outgoing) => {
    if (incoming.method !== 'POST' || incoming.url === undefined) return false;
    const target = matchLlmPostPath(incoming.url);
    if (target === undefined || isCompressed(incoming) || hasRepeatedAuthorization(incoming)) return false;
    void serve(serveLlm, logger, incoming, outgoing, target);
    return true;
  };
}

async function serve(serveLlm: DirectLlm, logger: Logger, incoming: IncomingMessage, outgoing: ServerResponse, target: LlmPostTarget): Promise<void> {
  const client = new AbortController();
  // 'close' before the answer was written means the client went away: the request is cancelled.
  const onClose = (): void => {
    if (!outgoing.writableFinished) client.abort();
  };
  outgoing.once('close', onClose);
  const url = incoming.url!;
  const query = url.indexOf('?');
  try {
    const answer = await serveLlm(
      {
        path: query < 0 ? url : url.slice(0, query),
        headers: { get: (name) => incomingHeader(incoming, name) },
        readBody: (maxBytes) => readIncomingBody(incoming, maxBytes),
        signal: client.signal,
        // The relay stops the node's request through the client's signal: no second controller per stream.
        abort: () => client.abort(),
        // An admitted stream starts in the turn the node's head comes: status line, headers and first event in one write.
        startStream: (stream, headers, recordRequest) => {
          if (outgoing.destroyed || outgoing.headersSent) return false;
          relayToResponse(stream.source, stream.relay, outgoing, headers, recordRequest);
          return true;
        },
      },
      target,
    );
    write(outgoing, answer);
  } catch (error) {
    // serveLlm turns failures into answers: reaching this is our bug.
    logger.error('the LLM fast path failed', { error: String(error), stack: (error as Error)?.stack });
    write(outgoing, { status: 500, headers: { 'Content-Type': 'application/json' }, body: JSON.stringify({ error: 'internal error' }) });
  }
  if (!incoming.readableEnded) outgoing.once('finish', () => discardUnreadBody(incoming));
}

function write(outgoing: ServerResponse, answer: DirectLlmAnswer): void {
  if (answer.stream !== undefined) {
    // Already being written (started at the node's head).
    if (answer.stream.started === true) return;
    // A client gone while the node was being reached: the relay is cancelled, which aborts the node's request.
    if (outgoing.destroyed) {
      answer.stream.relay.cancel(new Error('the client closed the connection'));
      answer.recordRequest?.();
    } else relayToResponse(answer.stream.source, answer.stream.relay, outgoing, answer.headers, answer.recordRequest);
    return;
  }
  if (outgoing.headersSent || outgoing.destroyed) return;
  const body = answer.body ?? '';
  const length = typeof body === 'string' ? Buffer.byteLength(body) : body.byteLength;
  outgoing.writeHead(answer.status, { ...answer.headers, 'Content-Length': String(length) });
  outgoing.end(body);
}
