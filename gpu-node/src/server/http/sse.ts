/**
 * Server-Sent Events answers (generate_stream, the OpenAI API's `stream: true`): a Response whose body
 * is written event by event while a producer runs. The producer gets an AbortSignal that fires when
 * the client goes away (its request's signal, or the body stream being cancelled), so the work behind
 * the events stops with the connection.
 */

export const SSE_CONTENT_TYPE = 'text/event-stream; charset=utf-8';

const encoder = new TextEncoder();

export interface SseWriter {
  /** Writes `data: <text>\n\n`; ignored once the client is gone or the stream is closed. */
  data(text: string): void;
  readonly signal: AbortSignal;
}

/**
 * Starts `produce` at once and streams what it writes; the body ends when it settles. What it throws
 * is handed to `onError`, which may write a last event (after a disconnect nothing is written).
 */
export function sseResponse(
  clientSignal: AbortSignal,
  produce: (writer: SseWriter) => Promise<void>,
  onError: (error: unknown, writer: SseWriter) => void,
): Response {
  const controller = new AbortController();
  const abort = (): void => controller.abort(clientSignal.reason);
  if (clientSignal.aborted) abort();
  else clientSignal.addEventListener('abort', abort, { once: true });
  let open = true;
  const body = new ReadableStream<Uint8Array>({
    start(stream) {
      const writer: SseWriter = {
        signal: controller.signal,
        data(text) {
          if (!open || controller.signal.aborted) return;
          stream.enqueue(encoder.encode(`data: ${text}\n\n`));
        },
      };
      void produce(writer)
        .catch((error: unknown) => {
          if (!controller.signal.aborted) onError(error, writer);
        })
        .finally(() => {
          clientSignal.removeEventListener('abort', abort);
          if (open) {
            open = false;
            stream.close();
          }
        });
    },
    cancel() {
      // The client went away (the socket closed under the body): stop the producer.
      open = false;
      controller.abort();
    },
  });
  return new Response(body, {
    status: 200,
    headers: { 'Content-Type': SSE_CONTENT_TYPE, 'Cache-Control': 'no-cache', 'X-Accel-Buffering': 'no' },
  });
}
