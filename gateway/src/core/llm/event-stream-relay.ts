/**
 * A relayed stream (sse-relay.ts) as a Web ReadableStream, for the Hono routes (Workers, and Node
 * requests the native relay leaves to Hono): each pull reads the node's answer until whole events are
 * ready, cancelling the body cancels the relay (the node's request is aborted).
 */
import { SseRelay, type SseRelayOptions } from './sse-relay.js';

export { errorEvent, MAX_PARTIAL_EVENT_BYTES, SseRelay, type RelayOutcome, type StreamFormat } from './sse-relay.js';

export interface RelayOptions extends SseRelayOptions {
  readonly source: AsyncIterable<Uint8Array>;
}

export function relayEventStream(options: RelayOptions): ReadableStream<Uint8Array> {
  return relayToReadable(options.source, new SseRelay(options));
}

export function relayToReadable(source: AsyncIterable<Uint8Array>, relay: SseRelay): ReadableStream<Uint8Array> {
  const iterator = source[Symbol.asyncIterator]();
  return new ReadableStream<Uint8Array>(
    {
      async pull(controller) {
        for (;;) {
          if (relay.over) return;
          let next: IteratorResult<Uint8Array>;
          try {
            next = await iterator.next();
          } catch (error) {
            const last = relay.fail(undefined, error);
            if (last !== undefined) {
              controller.enqueue(last);
              controller.close();
            }
            return;
          }
          if (relay.over) return;
          const out = next.done ? relay.end() : relay.push(next.value);
          if (out !== undefined) controller.enqueue(out);
          relay.meterSent();
          if (relay.over) {
            controller.close();
            return;
          }
          if (out !== undefined) return;
        }
      },
      cancel(reason) {
        relay.cancel(reason);
        void iterator.return?.().catch(() => undefined);
      },
    },
    { highWaterMark: 0 },
  );
}
