/**
 * The gRPC front door's bridge onto the gateway's HTTP pipeline: call metadata as request headers,
 * HTTP answers as gRPC statuses and metadata. The front door runs no policy of its own: every call
 * goes through the same core functions as the HTTP routes (authentication, rate limits, admission,
 * cache, dispatch), and this file only translates what goes in and comes out.
 */
import { Metadata, status as GrpcCode } from '@grpc/grpc-js';
import type { Deadline, ServerErrorResponse } from '@grpc/grpc-js';
import type { IncomingHttpHeaders } from 'node:http2';
import { TesseraError, grpcStatusOf, toTesseraError } from '../../../../shared/src/errors/index.js';
import { DEADLINE_HEADER } from '../../../../shared/src/fleet/index.js';
import type { HeaderReader, HttpAnswer } from '../../core/http/index.js';

/** Metadata a client sends that must not pass as an HTTP header (transport, gRPC's own, and async jobs). */
const DROPPED = new Set(['content-type', 'content-length', 'content-encoding', 'te', 'host', 'connection', 'transfer-encoding', 'prefer']);

function droppedKey(key: string): boolean {
  return DROPPED.has(key) || key.startsWith('grpc-') || key.startsWith(':') || key.endsWith('-bin');
}

/** Milliseconds left before the call's deadline (undefined when it has none). */
export function deadlineLeftMs(deadline: Deadline, now = Date.now()): number | undefined {
  const at = deadline instanceof Date ? deadline.getTime() : deadline;
  if (!Number.isFinite(at)) return undefined;
  return Math.max(1, Math.floor(at - now));
}

/**
 * The call's metadata as request headers (first value of each text key; repeated values joined
 * with ", " as HTTP does, so two keys are a malformed key there as here), with `overrides` on top and
 * the call's deadline as `x-tessera-deadline-ms` (never longer than one the client sent itself).
 */
export function metadataHeaders(metadata: Metadata, deadline: Deadline, overrides: Record<string, string> = {}): Map<string, string> {
  const entries: [string, string[]][] = [];
  for (const [key, value] of Object.entries(metadata.getMap())) {
    if (typeof value !== 'string') continue;
    entries.push([key.toLowerCase(), metadata.get(key).filter((v): v is string => typeof v === 'string')]);
  }
  return requestHeaders(entries, deadlineLeftMs(deadline), overrides);
}

/** What grpc-js's Metadata accepts as a text key and value; it drops (and logs) the rest. */
const LEGAL_KEY = /^[0-9a-z_.-]+$/;
const LEGAL_VALUE = /^[ -~]*$/;
/** Headers grpc-js removes from a call's metadata besides `grpc-*`, `te` and `content-type`. */
const REMOVED_BY_GRPC_JS = 'accept-encoding';

/**
 * The same headers from an HTTP/2 stream's request headers (the h2 fast path, h2-front-infer.ts), read
 * as grpc-js reads them into Metadata first: pseudo-headers and keys or values it refuses are left
 * out (of a repeated header, the values before the first refused one stay, as in grpc-js).
 */
export function h2StreamHeaders(headers: IncomingHttpHeaders, deadlineAt: number): Map<string, string> {
  // The reference the fast path's H2StreamHeaderReader is tested against; it reads them on demand.
  const out = new Map<string, string>();
  for (const key in headers) {
    const value = passedHeader(headers, key);
    if (value !== undefined) out.set(key, value);
  }
  return withDeadline(out, deadlineLeftMs(deadlineAt));
}

function requestHeaders(entries: Iterable<readonly [string, readonly string[]]>, left: number | undefined, overrides: Record<string, string> = {}): Map<string, string> {
  const headers = new Map<string, string>();
  for (const [name, values] of entries) if (!droppedKey(name)) headers.set(name, values.join(', '));
  withDeadline(headers, left);
  for (const [name, value] of Object.entries(overrides)) headers.set(name.toLowerCase(), value);
  return headers;
}

/** `headers` with the call's deadline as `x-tessera-deadline-ms` (never longer than one the client sent). */
function withDeadline(headers: Map<string, string>, left: number | undefined): Map<string, string> {
  if (left !== undefined) headers.set(DEADLINE_HEADER, deadlineWithin(headers.get(DEADLINE_HEADER), left));
  return headers;
}

/** The deadline header's value: the client's own when it is shorter than the call's time left. */
function deadlineWithin(sent: string | undefined, left: number): string {
  const sentMs = sent !== undefined && /^[0-9]{1,10}$/.test(sent.trim()) ? Number(sent.trim()) : undefined;
  return String(sentMs !== undefined && sentMs > 0 ? Math.min(sentMs, left) : left);
}

/** A request header as grpc-js passes it on (legal name and values, repeats joined), or undefined where it leaves it out. */
function passedHeader(headers: IncomingHttpHeaders, key: string): string | undefined {
  // Presence first: most names the pipeline asks for are absent, and then one lookup answers.
  if (!Object.hasOwn(headers, key) || key === REMOVED_BY_GRPC_JS || droppedKey(key) || !LEGAL_KEY.test(key)) return undefined;
  const value = headers[key];
  if (typeof value === 'string') return LEGAL_VALUE.test(value) ? value : undefined;
  if (!Array.isArray(value)) return undefined;
  let joined: string | undefined;
  for (const v of value) {
    if (!LEGAL_VALUE.test(v)) break;
    joined = joined === undefined ? v : `${joined}, ${v}`;
  }
  return joined;
}

/**
 * The h2 fast path's request headers read on demand, by the rules of `h2StreamHeaders`: the pipeline
 * asks for a handful of names (key, cache-control, deadline, traceparent), so no map of every header
 * is built per call. `h2-stream-headers.test.ts` holds it to `h2StreamHeaders` name by name.
 */
export class H2StreamHeaderReader {
  /** The call's time left, taken when the call arrived (as h2StreamHeaders takes it). */
  private readonly left: number | undefined;

  constructor(
    private readonly headers: IncomingHttpHeaders,
    deadlineAt: number,
  ) {
    this.left = deadlineLeftMs(deadlineAt);
  }

  /** `name` in lower case, as FrontRequest asks. */
  get(name: string): string | undefined {
    const value = passedHeader(this.headers, name);
    return name !== DEADLINE_HEADER || this.left === undefined ? value : deadlineWithin(value, this.left);
  }
}

export function headerReader(headers: Map<string, string>): HeaderReader {
  return { get: (name) => headers.get(name.toLowerCase()) ?? null };
}

/** gRPC's code for an HTTP status the pipeline answered (Triton's own mapping, plus 401/403/429). */
export function grpcCodeOfHttp(status: number): GrpcCode {
  switch (status) {
    case 400:
      return GrpcCode.INVALID_ARGUMENT;
    case 401:
      return GrpcCode.UNAUTHENTICATED;
    case 403:
      return GrpcCode.PERMISSION_DENIED;
    case 404:
      return GrpcCode.NOT_FOUND;
    case 409:
      return GrpcCode.ALREADY_EXISTS;
    case 413:
    case 429:
      return GrpcCode.RESOURCE_EXHAUSTED;
    case 499:
      return GrpcCode.CANCELLED;
    case 501:
      return GrpcCode.UNIMPLEMENTED;
    case 502:
    case 503:
      return GrpcCode.UNAVAILABLE;
    case 504:
      return GrpcCode.DEADLINE_EXCEEDED;
    default:
      return status >= 500 ? GrpcCode.INTERNAL : GrpcCode.UNKNOWN;
  }
}

/** Answer headers worth passing on as metadata (x-cache, age, retry-after, ratelimit-*, x-request-id). */
const PASSED = new Set(['x-cache', 'age', 'retry-after', 'ratelimit-limit', 'ratelimit-remaining', 'ratelimit-reset', 'x-request-id', 'preference-applied']);

export function answerMetadata(headers: Record<string, string> | Headers): Metadata {
  const md = new Metadata();
  for (const [name, value] of Object.entries(answerMetadataValues(headers))) md.set(name, value);
  return md;
}

/** The same as plain lower-case keys and values (the h2 fast path writes them as headers itself). */
export function answerMetadataValues(headers: Record<string, string> | Headers): Record<string, string> {
  const values: Record<string, string> = {};
  if (headers instanceof Headers) {
    for (const [name, value] of headers.entries()) if (PASSED.has(name)) values[name] = value;
    return values;
  }
  // A set lookup, not a regex per header, and no entry arrays: this runs for every answer.
  for (const name in headers) {
    const lower = name.toLowerCase();
    if (PASSED.has(lower)) values[lower] = headers[name]!;
  }
  return values;
}

/** The `error` of a KServe error body, or a fallback naming the status. */
export function errorMessageOf(body: Uint8Array | string | null, status: number): string {
  const text = body === null ? '' : typeof body === 'string' ? body : new TextDecoder().decode(body);
  try {
    const parsed = JSON.parse(text) as { error?: unknown };
    if (typeof parsed.error === 'string') return parsed.error;
  } catch {
    // not JSON: fall through
  }
  return text !== '' ? text.slice(0, 1024) : `the gateway answered HTTP ${status}`;
}

/** A grpc-js error status carrying `trailer`. */
export function statusError(code: GrpcCode, message: string, trailer: Metadata = new Metadata()): ServerErrorResponse {
  return Object.assign(new Error(message), { code, details: message, metadata: trailer });
}

/** A failed HTTP answer as a gRPC error status, its rate-limit and retry headers as trailing metadata. */
export function answerError(answer: HttpAnswer): ServerErrorResponse {
  return statusError(grpcCodeOfHttp(answer.status), errorMessageOf(answer.body, answer.status), answerMetadata(answer.headers));
}

/** Anything thrown in the front door itself (a bad request field, our bug) as a status. */
export function thrownError(error: unknown): ServerErrorResponse {
  const tessera = toTesseraError(error);
  return statusError(grpcStatusOf(tessera.code) as GrpcCode, tessera.message);
}

/** `model_version` on the wire: '' (latest) or a decimal number, the only versions routes know. */
export function versionOf(version: string): string | undefined {
  if (version === '') return undefined;
  if (!/^[0-9]{1,18}$/.test(version)) throw TesseraError.invalidArg(`invalid model version '${version}': expected a decimal number`);
  return BigInt(version).toString();
}

export function requireModelName(name: string, rpc: string): string {
  if (name === '') throw TesseraError.invalidArg(`${rpc}: 'model_name' is required`);
  return name;
}
