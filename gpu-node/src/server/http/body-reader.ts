/**
 * Bounded reading of request bodies. A body is never buffered past its limit: a declared
 * Content-Length over the limit is refused before a byte is read, and a chunked body is read chunk by
 * chunk and abandoned (stream cancelled) the moment it crosses the limit. Compressed bodies
 * (gzip/deflate, as Triton accepts on /infer) are inflated as a stream whose output is counted, and
 * inflation stops the moment it passes `--http-max-input-size` (413), so a small "zip bomb" costs at
 * most that much memory, and is refused before the body reaches any route logic (model lookup included).
 */
import type { IncomingMessage } from 'node:http';
import type { Transform } from 'node:stream';
import { createGunzip, createInflate, createInflateRaw } from 'node:zlib';
import { TesseraError } from '../../../../shared/src/errors/index.js';
import { collectIncomingBody, incomingHeader, joinChunks, type IncomingBodyErrors } from '../../../../shared/src/http/index.js';

/** The node's two body bounds (server-options.ts HttpLimits), declared here so this file needs no import of it. */
interface HttpLimits {
  readonly maxInputSize: number;
  readonly maxBodySize: number;
}

/** Triton's flag for the largest request input; it also bounds what a compressed body may inflate to. */
export const MAX_INPUT_SIZE_FLAG = '--http-max-input-size';

/** zlib's output chunk size while inflating: large chunks are few allocations, returned to the OS when freed. */
const INFLATE_CHUNK_BYTES = 256 * 1024;

/**
 * A body that inflates past the limit: HTTP 413 (Payload Too Large). Its code stays INVALID_ARG (the
 * caller's mistake) for everything that is not an HTTP status.
 */
export class InflatedBodyTooLargeError extends TesseraError {
  readonly httpStatus = 413;
  constructor(limit: number) {
    super(
      'INVALID_ARG',
      `decompressed request body exceeds the maximum allowed value of ${limit} bytes. ` +
        `Use ${MAX_INPUT_SIZE_FLAG} to increase the limit.`,
    );
  }
}

export type ContentCoding = 'identity' | 'gzip' | 'deflate';

/** A Content-Encoding we cannot decode is a 501 with this message, plus `Accept-Encoding` listing these. */
export const UNSUPPORTED_COMPRESSION = 'Unsupported compression type';
export const SUPPORTED_REQUEST_ENCODINGS = 'gzip, deflate';

/**
 * Parses the request's Content-Encoding. Only one coding is accepted: stacked codings
 * ("gzip, deflate") are legal HTTP but no Triton client sends them, so they are refused as unsupported.
 */
export function requestContentCoding(header: string | null): ContentCoding {
  const value = (header ?? '').trim().toLowerCase();
  if (value === '' || value === 'identity') return 'identity';
  if (value === 'gzip' || value === 'x-gzip') return 'gzip';
  if (value === 'deflate') return 'deflate';
  throw TesseraError.unsupported(UNSUPPORTED_COMPRESSION);
}

export interface ReadBodyOptions {
  /** Most bytes read off the connection. */
  readonly limit: number;
  /** The flag that sets `limit`, named in the error; absent for the node's own bound, which has no flag. */
  readonly limitName?: string;
  /** Most bytes a gzip/deflate body may inflate to: `--http-max-input-size`. */
  readonly inflatedLimit: number;
}

/** Control bodies (repository index and unload, logging, trace): `--http-max-input-size` either way. */
export function controlBodyLimits(limits: HttpLimits): ReadBodyOptions {
  return { limit: limits.maxInputSize, limitName: MAX_INPUT_SIZE_FLAG, inflatedLimit: limits.maxInputSize };
}

/**
 * Bodies that carry data (infer tensors, load files in base64): the node's whole-body bound as sent,
 * and `--http-max-input-size` once inflated.
 */
export function payloadBodyLimits(limits: HttpLimits): ReadBodyOptions {
  return { limit: limits.maxBodySize, inflatedLimit: limits.maxInputSize };
}

/** Reads the whole body of `request` (decompressing it) or throws INVALID_ARG naming the limit. */
export async function readBody(request: Request, options: ReadBodyOptions): Promise<Uint8Array> {
  const coding = requestContentCoding(request.headers.get('content-encoding'));
  const declared = declaredLength(request.headers.get('content-length'));
  if (declared !== undefined && declared > options.limit) throw tooLarge(declared, options);
  const raw = await readStream(request.body, options);
  if (coding === 'identity') return raw;
  return decompress(raw, coding, options);
}

/**
 * The same for a node:http request, read with plain 'data' events: the infer fast path
 * (native-infer.ts) uses it so that no Web stream is built per request. On a refusal the request is
 * paused, not drained; the caller closes the connection after answering.
 */
export function readIncomingBody(incoming: IncomingMessage, options: ReadBodyOptions): Promise<Uint8Array> {
  // Not async: an uncompressed body (the usual case) is the collector's own promise, not a wrapper around it.
  let coding: ContentCoding;
  try {
    coding = requestContentCoding(incomingHeader(incoming, 'content-encoding'));
    const declared = declaredLength(incomingHeader(incoming, 'content-length'));
    if (declared !== undefined && declared > options.limit) throw tooLarge(declared, options);
  } catch (error) {
    return Promise.reject(error as Error);
  }
  const raw = readIncoming(incoming, options);
  if (coding === 'identity') return raw;
  const compressed = coding;
  return raw.then((bytes) => decompress(bytes, compressed, options));
}

const incomingErrors = new WeakMap<ReadBodyOptions, IncomingBodyErrors>();

/** The read errors for `options`, made once per set of limits rather than three closures per request. */
function incomingErrorsOf(options: ReadBodyOptions): IncomingBodyErrors {
  let errors = incomingErrors.get(options);
  if (errors === undefined) {
    errors = {
      overLimit: () => tooLarge(options.limit, options, true),
      // The client went away or sent a broken chunked encoding: its mistake, not ours.
      failed: (error) => TesseraError.invalidArg(`failed to read the request body: ${describe(error)}`),
      closedEarly: () => TesseraError.cancelled('the client closed the connection before sending the whole body'),
    };
    incomingErrors.set(options, errors);
  }
  return errors;
}

function readIncoming(incoming: IncomingMessage, options: ReadBodyOptions): Promise<Uint8Array> {
  return collectIncomingBody(incoming, options.limit, incomingErrorsOf(options));
}

function declaredLength(header: string | null): number | undefined {
  if (header === null || !/^\d+$/.test(header.trim())) return undefined;
  return Number(header.trim());
}

async function readStream(
  body: ReadableStream<Uint8Array> | null,
  options: ReadBodyOptions,
): Promise<Uint8Array> {
  if (body === null) return new Uint8Array(0);
  const reader = body.getReader();
  const chunks: Uint8Array[] = [];
  let total = 0;
  for (;;) {
    let chunk: Uint8Array | undefined;
    try {
      const step = await reader.read();
      chunk = step.done ? undefined : step.value;
    } catch (error) {
      // The client went away or sent a broken chunked encoding: its mistake, not ours.
      throw TesseraError.invalidArg(`failed to read the request body: ${describe(error)}`);
    }
    if (chunk === undefined) break;
    total += chunk.byteLength;
    if (total > options.limit) {
      // Stop reading now; what is still in flight is drained (bounded) or dropped by the adapter.
      reader.cancel().catch(() => undefined);
      throw tooLarge(total, options, true);
    }
    chunks.push(chunk);
  }
  return joinChunks(chunks, total);
}

/**
 * Inflates `raw` as a stream, counting the output: past `options.inflatedLimit` the stream is destroyed
 * at once and the request refused (413), so memory never holds more than the limit plus one chunk.
 */
async function decompress(raw: Uint8Array, coding: 'gzip' | 'deflate', options: ReadBodyOptions): Promise<Uint8Array> {
  if (coding === 'gzip') return inflateCounted(createGunzip({ chunkSize: INFLATE_CHUNK_BYTES }), raw, options.inflatedLimit);
  // HTTP "deflate" is zlib-wrapped, but some clients send raw DEFLATE; accept both like browsers do.
  try {
    return await inflateCounted(createInflate({ chunkSize: INFLATE_CHUNK_BYTES }), raw, options.inflatedLimit);
  } catch (error) {
    if (error instanceof InflatedBodyTooLargeError) throw error;
    return inflateCounted(createInflateRaw({ chunkSize: INFLATE_CHUNK_BYTES }), raw, options.inflatedLimit);
  }
}

function inflateCounted(inflater: Transform, raw: Uint8Array, limit: number): Promise<Uint8Array> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let total = 0;
    let settled = false;
    const fail = (error: TesseraError): void => {
      if (settled) return;
      settled = true;
      chunks.length = 0;
      inflater.destroy();
      reject(error);
    };
    inflater.on('data', (chunk: Buffer) => {
      if (settled) return;
      total += chunk.byteLength;
      if (total > limit) {
        fail(new InflatedBodyTooLargeError(limit));
        return;
      }
      chunks.push(chunk);
    });
    inflater.on('error', (error) => fail(TesseraError.invalidArg(`failed to decompress the request body: ${describe(error)}`)));
    inflater.on('end', () => {
      if (settled) return;
      settled = true;
      resolve(joinChunks(chunks, total));
    });
    inflater.end(raw);
  });
}

function tooLarge(size: number, options: ReadBodyOptions, atLeast = false): TesseraError {
  const advice =
    options.limitName === undefined ? 'This is the largest request body this node accepts.' : `Use ${options.limitName} to increase the limit.`;
  return TesseraError.invalidArg(
    `Request body size of ${atLeast ? 'more than ' : ''}${atLeast ? options.limit : size} bytes exceeds the maximum ` +
      `allowed value of ${options.limit} bytes. ${advice}`,
  );
}

function describe(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
