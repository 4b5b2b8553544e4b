/**
 * Server-Sent Events written straight to node's response: an HTTP/1.1 ServerResponse (chunked) or an
 * HTTP/2 stream's compat response (the h2c LLM listener). The Web path (sse.ts's sseResponse) puts a
 * ReadableStream between the producer and the socket, and @hono/node-server pumps it back into the same
 * response, a read, a promise and a Uint8Array per event; here each event is one `write` of a string.
 *
 * Same contract as sseResponse: the status and headers wait for the first event (a producer failing
 * before it makes an ordinary HTTP error: the returned promise rejects), a later failure goes to
 * `onError`, the client going away aborts the producer's signal, and a client that does not read is cut
 * once MAX_BUFFERED_EVENT_BYTES wait for it.
 */
import { DEFAULT_STREAM_INTERVAL } from '../../../../shared/src/model-config/index.js';
import { HeldEvents } from './held-events.js';
import { MAX_BUFFERED_EVENT_BYTES, SSE_HEADERS, type SseProducer, type SseWriter } from './sse.js';

/** What both node:http's ServerResponse and node:http2's Http2ServerResponse offer. */
export interface SseOutgoing {
  writeHead(status: number, headers: Record<string, string>): unknown;
  write(chunk: string): boolean;
  end(): unknown;
  destroy(error?: Error): unknown;
  readonly writableLength: number;
  readonly writableEnded: boolean;
  readonly destroyed: boolean;
}

/** The writer handed to the producer: it holds the stream's state, so there is one object per stream. */
class NativeSseWriter implements SseWriter {
  open = true;
  wrote = false;
  markStarted: () => void = () => undefined;
  private readonly events: HeldEvents;

  constructor(
    private readonly outgoing: SseOutgoing,
    private readonly controller: AbortController,
    interval = DEFAULT_STREAM_INTERVAL,
    leadingEvents = 1,
  ) {
    this.events = new HeldEvents(interval, (chunk) => this.send(chunk), leadingEvents);
  }

  get signal(): AbortSignal {
    return this.controller.signal;
  }

  data(text: string): void {
    if (!this.open || this.controller.signal.aborted) return;
    const outgoing = this.outgoing;
    if (!this.wrote) {
      this.wrote = true;
      outgoing.writeHead(200, { ...SSE_HEADERS });
      this.markStarted();
    }
    this.events.add(`data: ${text}\n\n`);
  }

  /** One write of one or more events (HeldEvents groups them); none once the stream is cut or the client gone. */
  private send(chunk: string): void {
    if (!this.open || this.controller.signal.aborted) return;
    const outgoing = this.outgoing;
    outgoing.write(chunk);
    if (outgoing.writableLength > MAX_BUFFERED_EVENT_BYTES) {
      // A reader slower than the model: cut it (as the Web path does) rather than buffer without bound.
      this.open = false;
      this.controller.abort();
      outgoing.destroy(new Error('the client does not read the event stream'));
    }
  }

  close(): void {
    if (!this.open) return;
    // Held events go before the end; after a disconnect they are dropped.
    if (this.controller.signal.aborted) this.events.discard();
    else this.events.flush();
    this.open = false;
    if (!this.outgoing.destroyed && !this.outgoing.writableEnded) this.outgoing.end();
  }
}

/**
 * Starts the producer at once; resolves when its first event is written (or it ends without one, which
 * answers an empty 200 event stream as the Web path does), rejects with its error when it fails first.
 * `clientSignal` fires when the client goes away (its connection or HTTP/2 stream closed).
 */
export function writeNativeSse(outgoing: SseOutgoing, clientSignal: AbortSignal, producer: SseProducer): Promise<void> {
  const controller = new AbortController();
  const abort = (): void => controller.abort(clientSignal.reason);
  if (clientSignal.aborted) abort();
  else clientSignal.addEventListener('abort', abort, { once: true });
  const writer = new NativeSseWriter(outgoing, controller, producer.interval, producer.leadingEvents);
  return new Promise<void>((resolve, reject) => {
    writer.markStarted = resolve;
    producer
      .produce(writer)
      .catch((error: unknown) => {
        if (!writer.wrote) {
          writer.open = false;
          reject(error);
        } else if (!controller.signal.aborted) producer.onError(error, writer);
      })
      .finally(() => {
        clientSignal.removeEventListener('abort', abort);
        if (writer.open && !writer.wrote) {
          // Nothing to send and no error: an empty stream, headers only.
          outgoing.writeHead(200, { ...SSE_HEADERS });
        }
        writer.close();
        resolve();
      });
  });
}
