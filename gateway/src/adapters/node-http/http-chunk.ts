/**
 * HTTP/1.1 chunked framing built in one buffer: `<hex length>\r\n<bytes>\r\n`, optionally followed by
 * the last chunk (`0\r\n\r\n`). node:http frames each `write` as four socket writes (length, CRLF,
 * bytes, CRLF) gathered into a writev; a relay that writes an event per token pays that per token
 * (docs/benchmarks.md, issue 20), so it frames its events itself (relay-to-response.ts), with the raw
 * front door's framing (shared/src/http/raw-http1/stream-writer.ts).
 */
import { frameStreamChunk } from '../../../../shared/src/http/raw-http1/index.js';

/** `bytes` as one chunk (must not be empty: an empty chunk is the end of the body); `last` appends the end. */
export function frameChunk(bytes: Uint8Array, last = false): Buffer {
  return frameStreamChunk(bytes, last);
}

/** The end of a chunked body alone. */
export function lastChunk(): Buffer {
  return Buffer.from('0\r\n\r\n', 'latin1');
}
