/**
 * The LLM POST routes (`/v1/completions`, `/v1/chat/completions`, `/v2/models/{m}[/versions/{v}]/generate[_stream]`)
 * on the raw HTTP/1.1 front door (shared/src/http/raw-http1), as native-llm.ts serves them on node:http: the same
 * core `DirectLlm`, so the same answers, metrics and log line. This file translates protocol and nothing else: the
 * body is the reader's whole body (within RAW_MAX_BODY_BYTES; a larger one goes to node:http), the client's going
 * away is the connection's watch (socket end or close → the request's signal, and the relay's cancellation), and a
 * stream is written as a chunked answer, one chunk per read of the node's answer (llm-raw-relay.ts).
 *
 * Why: node:http's parse, ServerResponse, writeHead and per-response teardown sat between the node's first event
 * and the client, and under every streamed token (docs/benchmarks.md, issue 20).
 */
import type { Logger } from '../../../../shared/src/logging/index.js';
import { rememberLastTarget, type RawAnswer, type RawHttp1Handler, type RawRequest } from '../../../../shared/src/http/raw-http1/index.js';
import { BodyOverLimitError } from '../../core/http/index.js';
import { matchLlmPostPath, type DirectLlm, type DirectLlmAnswer, type LlmPostTarget } from '../../core/llm/index.js';
import { ClientGone } from './client-gone.js';
import { relayToRawStream } from './llm-raw-relay.js';

const INTERNAL_ERROR: DirectLlmAnswer = { status: 500, headers: { 'Content-Type': 'application/json' }, body: JSON.stringify({ error: 'internal error' }) };
const CLIENT_GONE = 'the client closed the connection';

export function createRawLlmHandler(serveLlm: DirectLlm, logger: Logger): RawHttp1Handler {
  const match = rememberLastTarget(matchLlmPostPath);
  return {
    accepts: (head) => match(head.target) !== undefined,
    serve(request, reply) {
      void serve(serveLlm, logger, request, reply, match(request.head.target) as LlmPostTarget);
    },
  };
}

async function serve(serveLlm: DirectLlm, logger: Logger, request: RawRequest, reply: RawAnswer, target: LlmPostTarget): Promise<void> {
  const { head, body } = request;
  const client = new ClientGone();
  // Replaced by the relay's own hook once a stream is being written.
  let relayGone: (() => void) | undefined;
  reply.watchClient(() => {
    client.abort();
    relayGone?.();
  });
  const query = head.target.indexOf('?');
  let answer: DirectLlmAnswer;
  try {
    answer = await serveLlm(
      {
        path: query < 0 ? head.target : head.target.slice(0, query),
        headers: { get: (name) => head.headers.get(name) ?? null },
        // The whole body is here (within the front door's bound); a tier's smaller bound is checked as on node:http.
        readBody: (maxBytes) => (body.byteLength > maxBytes ? Promise.reject(new BodyOverLimitError(maxBytes, String(head.contentLength))) : Promise.resolve(body)),
        signal: client,
        abort: () => client.abort(),
        // An admitted stream starts in the turn the node's head comes: head and first event in one write.
        startStream: (stream, headers, recordRequest) => {
          const writer = reply.startStream(200, headers);
          if (writer === undefined) return false;
          relayGone = relayToRawStream(stream.source, stream.relay, writer, recordRequest);
          return true;
        },
      },
      target,
    );
  } catch (error) {
    // serveLlm turns failures into answers: reaching this is our bug.
    logger.error('the LLM raw path failed', { error: String(error), stack: (error as Error)?.stack });
    answer = INTERNAL_ERROR;
  }
  write(reply, answer, (hook) => void (relayGone = hook));
}

function write(reply: RawAnswer, answer: DirectLlmAnswer, setGone: (hook: () => void) => void): void {
  const stream = answer.stream;
  if (stream !== undefined) {
    if (stream.started === true) return;
    const writer = reply.startStream(200, answer.headers);
    if (writer === undefined) {
      // The client left while the node was being reached: the relay is cancelled, which aborts the node's request.
      stream.relay.cancel(new Error(CLIENT_GONE));
      answer.recordRequest?.();
      return;
    }
    setGone(relayToRawStream(stream.source, stream.relay, writer, answer.recordRequest));
    return;
  }
  const text = answer.body ?? '';
  const bytes = typeof text === 'string' ? Buffer.from(text, 'utf8') : text;
  reply.answer(answer.status, answer.headers, [bytes], bytes.byteLength);
}
