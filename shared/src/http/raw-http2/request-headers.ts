/**
 * A decoded request header list checked as RFC 9113 §8.2-8.3 asks (a malformed request is a stream
 * error, PROTOCOL_ERROR) and turned into node:http2's headers object shape: lower-case names, pseudo
 * fields first and once each, no connection-specific fields, `te` only "trailers", field values without
 * NUL, CR or LF, and names that are tokens. A name seen twice becomes an array (node joins some; the
 * fast path then declines and the relay passes the fields on as they came).
 */
import type { IncomingHttpHeaders } from 'node:http2';
import type { HeaderField } from './hpack-decoder.js';

const PSEUDO = new Set([':method', ':path', ':scheme', ':authority']);
const CONNECTION_SPECIFIC = new Set(['connection', 'keep-alive', 'proxy-connection', 'transfer-encoding', 'upgrade']);
/** Lower-case token characters (RFC 9110 §5.6.2); upper case is malformed in HTTP/2. */
const NAME = /^[!#$%&'*+\-.^_`|~0-9a-z]+$/;
/** NUL, CR, LF, or whitespace at either end (RFC 9113 §8.2.1). */
const BAD_VALUE = /[\0\r\n]|^[ \t]|[ \t]$/;

export type RequestHeaders = IncomingHttpHeaders;

/** The headers object, or a sentence naming what is malformed. */
export function requestHeaders(fields: readonly HeaderField[]): { headers: RequestHeaders } | { problem: string } {
  const headers: Record<string, string | string[]> = Object.create(null) as Record<string, string | string[]>;
  let regularSeen = false;
  for (const [name, value] of fields) {
    if (name.startsWith(':')) {
      if (!PSEUDO.has(name)) return { problem: `pseudo-header ${name}` };
      if (regularSeen) return { problem: `${name} after a regular header` };
      if (headers[name] !== undefined) return { problem: `${name} twice` };
    } else {
      regularSeen = true;
      if (!NAME.test(name)) return { problem: 'a header name that is not a lower-case token' };
      if (CONNECTION_SPECIFIC.has(name)) return { problem: `connection-specific header ${name}` };
      if (name === 'te' && value !== 'trailers') return { problem: 'te other than trailers' };
    }
    if (BAD_VALUE.test(value)) return { problem: `a bad byte in ${name}` };
    const before = headers[name];
    headers[name] = before === undefined ? value : Array.isArray(before) ? [...before, value] : [before, value];
  }
  if (headers[':method'] === undefined || headers[':scheme'] === undefined || headers[':path'] === undefined || headers[':path'] === '') {
    return { problem: 'a request without :method, :scheme or :path' };
  }
  return { headers: headers as RequestHeaders };
}
