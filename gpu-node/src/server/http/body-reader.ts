/**
 * Bounded reading of request bodies. A body is never buffered past its limit: a declared
 * Content-Length over the limit is refused before a byte is read, and a chunked body is read chunk by
 * chunk and abandoned (stream cancelled) the moment it crosses the limit. Compressed bodies
 * (gzip/deflate, as Triton accepts on /infer) are inflated with the same bound on their output, so a
 * small "zip bomb" cannot blow up memory either.
 */
import type { IncomingMessage } from 'node:http';
import { promisify } from 'node:util';
import { gunzip, inflate, inflateRaw } from 'node:zlib';
import { TesseraError } from '../../../../shared/src/errors/index.js';
import { collectIncomingBody, incomingHeader, joinChunks } from '../../../../shared/src/http/index.js';

const gunzipAsync = promisify(gunzip);
const inflateAsync = promisify(inflate);
const inflateRawAsync = promisify(inflateRaw);

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
  /** Most bytes accepted, after decompression. */
  readonly limit: number;
  /** Names the limit in the error message, e.g. "--http-max-input-size". */
  readonly limitName: string;
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
export async function readIncomingBody(incoming: IncomingMessage, options: ReadBodyOptions): Promise<Uint8Array> {
  const coding = requestContentCoding(incomingHeader(incoming, 'content-encoding'));
  const declared = declaredLength(incomingHeader(incoming, 'content-length'));
  if (declared !== undefined && declared > options.limit) throw tooLarge(declared, options);
  const raw = await readIncoming(incoming, options);
  if (coding === 'identity') return raw;
  return decompress(raw, coding, options);
}

function readIncoming(incoming: IncomingMessage, options: ReadBodyOptions): Promise<Uint8Array> {
  return collectIncomingBody(incoming, options.limit, {
    overLimit: () => tooLarge(options.limit, options, true),
    // The client went away or sent a broken chunked encoding: its mistake, not ours.
    failed: (error) => TesseraError.invalidArg(`failed to read the request body: ${describe(error)}`),
    closedEarly: () => TesseraError.cancelled('the client closed the connection before sending the whole body'),
  });
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

async function decompress(
  raw: Uint8Array,
  coding: 'gzip' | 'deflate',
  options: ReadBodyOptions,
): Promise<Uint8Array> {
  // maxOutputLength makes zlib stop (RangeError) instead of inflating past the limit.
  const zlibOptions = { maxOutputLength: Math.max(1, options.limit) };
  try {
    const out = coding === 'gzip' ? await gunzipAsync(raw, zlibOptions) : await inflateDeflate(raw, zlibOptions);
    return new Uint8Array(out.buffer, out.byteOffset, out.byteLength);
  } catch (error) {
    if (error instanceof RangeError || (error as { code?: string }).code === 'ERR_BUFFER_TOO_LARGE') {
      throw TesseraError.invalidArg(
        `decompressed request body exceeds the maximum allowed value of ${options.limit} bytes. ` +
          `Use ${options.limitName} to increase the limit.`,
      );
    }
    throw TesseraError.invalidArg(`failed to decompress the request body (${coding}): ${describe(error)}`);
  }
}

/** HTTP "deflate" is zlib-wrapped, but some clients send raw DEFLATE; accept both like browsers do. */
async function inflateDeflate(raw: Uint8Array, zlibOptions: { maxOutputLength: number }): Promise<Buffer> {
  try {
    return await inflateAsync(raw, zlibOptions);
  } catch (error) {
    if (error instanceof RangeError || (error as { code?: string }).code === 'ERR_BUFFER_TOO_LARGE') throw error;
    return inflateRawAsync(raw, zlibOptions);
  }
}

function tooLarge(size: number, options: ReadBodyOptions, atLeast = false): TesseraError {
  return TesseraError.invalidArg(
    `Request body size of ${atLeast ? 'more than ' : ''}${atLeast ? options.limit : size} bytes exceeds the maximum ` +
      `allowed value of ${options.limit} bytes. Use ${options.limitName} to increase the limit.`,
  );
}

function describe(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
