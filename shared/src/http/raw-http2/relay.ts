/**
 * A raw front stream passed on unchanged to another HTTP/2 server (the node's grpc-js on loopback) over a
 * node:http2 client session: the request's header fields, DATA and END_STREAM one way; the answer's
 * headers, DATA and trailers the other way; a reset either way reset on the other side with its code.
 * Flow control is end to end: received DATA is given back to our peer only once the session has taken it
 * (the write's callback), and the answer's DATA pauses the session's stream while our peer's window is shut.
 */
import { constants, type ClientHttp2Session, type ClientHttp2Stream, type IncomingHttpHeaders, type OutgoingHttpHeaders } from 'node:http2';
import { H2Error } from './frame.js';
import type { RawH2Stream } from './raw-stream.js';
import type { RequestHeaders } from './request-headers.js';

export function relayStream(stream: RawH2Stream, headers: RequestHeaders, session: ClientHttp2Session): void {
  stream.manualCredit = true;
  let upstream: ClientHttp2Stream;
  try {
    upstream = session.request(outgoing(headers), { endStream: false });
  } catch {
    stream.close(H2Error.REFUSED_STREAM); // the session is closing or the fields do not pass node's checks
    return;
  }
  upstream.on('error', () => {});
  stream.on('data', (chunk: Buffer) => upstream.write(chunk, () => stream.credit(chunk.length)));
  stream.on('end', () => upstream.end());
  stream.on('close', () => {
    if (!upstream.closed && stream.rstCode !== H2Error.NO_ERROR) upstream.close(stream.rstCode);
  });
  let trailers: IncomingHttpHeaders | undefined;
  upstream.on('response', (fields, flags) => {
    stream.respond(outgoing(fields), { endStream: (flags & constants.NGHTTP2_FLAG_END_STREAM) !== 0, waitForTrailers: true });
  });
  upstream.on('data', (chunk: Buffer) => {
    if (!stream.write(chunk)) upstream.pause();
  });
  stream.on('drain', () => upstream.resume());
  upstream.on('trailers', (fields) => {
    trailers = fields;
  });
  stream.on('wantTrailers', () => stream.sendTrailers(trailers === undefined ? {} : outgoing(trailers)));
  upstream.on('end', () => {
    if (!stream.localEnded) stream.end();
  });
  upstream.on('close', () => {
    if (stream.closed) return;
    if (upstream.rstCode !== constants.NGHTTP2_NO_ERROR) stream.close(upstream.rstCode);
    else if (!stream.localEnded) stream.close(H2Error.INTERNAL_ERROR); // ended without an answer
  });
}

/** The string-keyed fields of a headers object (node adds symbol keys), as they came. */
function outgoing(fields: IncomingHttpHeaders): OutgoingHttpHeaders {
  const out: OutgoingHttpHeaders = {};
  for (const name of Object.keys(fields)) out[name] = fields[name];
  return out;
}
