/**
 * A relayed stream (core/llm/sse-relay.ts) written into a raw front-door stream
 * (shared/src/http/raw-http1/stream-writer.ts) by the shared driver (relay-driver.ts): each read of the
 * node's answer gives whole events, written as one chunk in one socket write. The client going away
 * (`clientGone`, from the connection's watch) cancels the relay, which aborts the node's request.
 */
import type { RawStreamWriter } from '../../../../shared/src/http/raw-http1/index.js';
import type { SseRelay } from '../../core/llm/sse-relay.js';
import { driveRelay } from './relay-driver.js';

/** `onStarted`: called once, after the first events are written (or at the end, when none were). Returns the client-gone hook. */
export function relayToRawStream(source: AsyncIterable<Uint8Array>, relay: SseRelay, writer: RawStreamWriter, onStarted?: () => void): () => void {
  const socket = writer.socket;
  return driveRelay(
    source,
    relay,
    (resume) => {
      socket.on('drain', resume);
      return {
        write: (out) => writer.write(out),
        end: (last) => writer.end(last),
        release: () => void socket.off('drain', resume),
      };
    },
    onStarted,
  );
}
