/**
 * Server-Sent Events answers (generate_stream, the OpenAI API's `stream: true`): a Response whose body
 * is written event by event while a producer runs. The producer gets an AbortSignal that fires when
 * the client goes away (its request's signal, or the body stream being cancelled), so the work behind
 * the events stops with the connection.
 */

import { DEFAULT_STREAM_INTERVAL, type StreamInterval } from '../../../../shared/src/model-config/index.js';
import { HeldEvents } from './held-events.js';

export const SSE_CONTENT_TYPE = 'text/event-stream; charset=utf-8';

/**
 * The answer's headers, named and ordered as @hono/node-server writes the Web path's (a Headers object
 * iterates lower case and sorted), so the native path (native-sse.ts) sends the very same ones.
 */
export const SSE_HEADERS: Readonly<Record<string, string>> = {
  'cache-control': 'no-cache',
  'content-type': SSE_CONTENT_TYPE,
  'x-accel-buffering': 'no',
};

/**
 * Most bytes of events waiting for a client that does not read: past it the request is cancelled as if
 * the client had gone (a model streaming faster than its reader must not fill the node's memory).
 */
export const MAX_BUFFERED_EVENT_BYTES = 8 * 1024 * 1024;

const encoder = new TextEncoder();

export interface SseWriter {
  /** Writes `data: <text>\n\n`; ignored once the client is gone or the stream is closed. */
  data(text: string): void;
  readonly signal: AbortSignal;
}

/**
 * What a streaming route produces, apart from how it reaches the client: `produce` writes the events
 * (its failure before the first event is an ordinary HTTP error), `onError` the last event after a
 * failure once streaming has begun. sseResponse serves it as a Web Response (Hono), native-sse.ts
 * straight on node:http / node:http2.
 */
export interface SseProducer {
  produce(writer: SseWriter): Promise<void>;
  onError(error: unknown, writer: SseWriter): void;
  /** How events are grouped into writes (the model's stream interval); default one write per event. */
  readonly interval?: StreamInterval;
  /** Events written at once before grouping starts: those of the first token (default 1). */
  readonly leadingEvents?: number;
}

/**
 * Starts `produce` at once and streams what it writes; the body ends when it settles. The answer's
 * status and headers wait for the first event: a producer that fails before writing anything (a request
 * the model refuses on validation) rejects, so the caller answers an ordinary HTTP error. What it
 * throws later is handed to `onError`, which may write a last event (after a disconnect nothing is).
 */
export async function sseResponse(
  clientSignal: AbortSignal,
  produce: (writer: SseWriter) => Promise<void>,
  onError: (error: unknown, writer: SseWriter) => void,
  interval: StreamInterval = DEFAULT_STREAM_INTERVAL,
  leadingEvents = 1,
): Promise<Response> {
  const controller = new AbortController();
  const abort = (): void => controller.abort(clientSignal.reason);
  if (clientSignal.aborted) abort();
  else clientSignal.addEventListener('abort', abort, { once: true });
  let open = true;
  let wrote = false;
  let held: HeldEvents | undefined;
  let markStarted: (early: { error: unknown } | undefined) => void = () => undefined;
  const started = new Promise<{ error: unknown } | undefined>((resolve) => (markStarted = resolve));
  const body = new ReadableStream<Uint8Array>(
    {
      start(stream) {
        const emit = (chunk: string): void => {
          if (!open || controller.signal.aborted) return;
          stream.enqueue(encoder.encode(chunk));
          if ((stream.desiredSize ?? 0) < -MAX_BUFFERED_EVENT_BYTES) {
            open = false;
            controller.abort();
            stream.error(new Error('the client does not read the event stream'));
          }
        };
        const events = (held = new HeldEvents(interval, emit, leadingEvents));
        const writer: SseWriter = {
          signal: controller.signal,
          data(text) {
            if (!open || controller.signal.aborted) return;
            wrote = true;
            markStarted(undefined);
            events.add(`data: ${text}\n\n`);
          },
        };
        void produce(writer)
          .catch((error: unknown) => {
            if (!wrote) markStarted({ error });
            else if (!controller.signal.aborted) onError(error, writer);
          })
          .finally(() => {
            clientSignal.removeEventListener('abort', abort);
            markStarted(undefined);
            // Held events go before the end; after a disconnect they are dropped.
            if (controller.signal.aborted) events.discard();
            else events.flush();
            if (open) {
              open = false;
              stream.close();
            }
          });
      },
      cancel() {
        // The client went away (the socket closed under the body): stop the producer.
        held?.discard();
        open = false;
        controller.abort();
      },
    },
    new ByteLengthQueuingStrategy({ highWaterMark: 64 * 1024 }),
  );
  const early = await started;
  if (early !== undefined) {
    open = false;
    await body.cancel().catch(() => undefined);
    throw early.error;
  }
  return new Response(body, {
    status: 200,
    headers: SSE_HEADERS,
  });
}
