/**
 * W3C Trace Context (https://www.w3.org/TR/trace-context/): the `traceparent` and `tracestate`
 * headers that carry a trace across processes, over HTTP headers and gRPC metadata alike. Pure
 * parsing and formatting, no SDK, so the gateway core, the Workers build and the node can all use it.
 *
 * Parsing is strict where the spec says a receiver MUST ignore the header (wrong lengths, upper-case
 * or non-hex digits, all-zero ids, version ff) and lenient where it allows it (surrounding spaces,
 * future versions with extra fields). An ignored header simply starts a new trace: never an error.
 */

export interface TraceContext {
  /** 32 lower-case hex digits, not all zero. */
  readonly traceId: string;
  /** The sender's span: 16 lower-case hex digits, not all zero. */
  readonly spanId: string;
  /** Trace flags; bit 0 (`SAMPLED_FLAG`) says the caller records this trace. */
  readonly traceFlags: number;
  /** The validated `tracestate` list, passed on unchanged; absent when there is none. */
  readonly traceState?: string;
}

export const TRACEPARENT_HEADER = 'traceparent';
export const TRACESTATE_HEADER = 'tracestate';
export const SAMPLED_FLAG = 0x01;

const VERSION_00_LENGTH = 55;
const HEX2 = /^[0-9a-f]{2}$/;
const TRACE_ID = /^[0-9a-f]{32}$/;
const SPAN_ID = /^[0-9a-f]{16}$/;
const ALL_ZERO = /^0+$/;
/** tracestate: at most 32 members (spec 3.3.1.1); keys and values as in its ABNF. */
const MAX_TRACESTATE_MEMBERS = 32;
const MAX_TRACESTATE_LENGTH = 512;
const TRACESTATE_KEY = /^(?:[a-z][_0-9a-z\-*/]{0,255}|[a-z0-9][_0-9a-z\-*/]{0,240}@[a-z][_0-9a-z\-*/]{0,13})$/;
const TRACESTATE_VALUE = /^[\x20-\x2b\x2d-\x3c\x3e-\x7e]{0,255}[\x21-\x2b\x2d-\x3c\x3e-\x7e]$/;

export function isValidTraceId(id: string): boolean {
  return TRACE_ID.test(id) && !ALL_ZERO.test(id);
}

export function isValidSpanId(id: string): boolean {
  return SPAN_ID.test(id) && !ALL_ZERO.test(id);
}

export function isSampled(context: TraceContext): boolean {
  return (context.traceFlags & SAMPLED_FLAG) === SAMPLED_FLAG;
}

/**
 * `traceparent` (and optionally `tracestate`) → a TraceContext, or undefined when the header is
 * absent or invalid. A `tracestate` without a valid `traceparent` is ignored, as the spec requires.
 */
export function parseTraceparent(traceparent: string | null | undefined, tracestate?: string | null): TraceContext | undefined {
  if (traceparent === null || traceparent === undefined) return undefined;
  const header = traceparent.trim();
  if (header.length < VERSION_00_LENGTH) return undefined;
  const version = header.slice(0, 2);
  if (!HEX2.test(version) || version === 'ff') return undefined;
  // Version 00 is exactly 55 characters; a later version may append fields after a '-'.
  if (version === '00' ? header.length !== VERSION_00_LENGTH : header.length > VERSION_00_LENGTH && header[VERSION_00_LENGTH] !== '-') {
    return undefined;
  }
  if (header[2] !== '-' || header[35] !== '-' || header[52] !== '-') return undefined;
  const traceId = header.slice(3, 35);
  const spanId = header.slice(36, 52);
  const flags = header.slice(53, 55);
  if (!isValidTraceId(traceId) || !isValidSpanId(spanId) || !HEX2.test(flags)) return undefined;
  const state = parseTracestate(tracestate);
  return { traceId, spanId, traceFlags: Number.parseInt(flags, 16), ...(state === undefined ? {} : { traceState: state }) };
}

/** The version-00 `traceparent` value of a context. */
export function formatTraceparent(context: TraceContext): string {
  const flags = (context.traceFlags & 0xff).toString(16).padStart(2, '0');
  return `00-${context.traceId}-${context.spanId}-${flags}`;
}

/**
 * Keeps the valid members of a `tracestate` list (at most 32, first ones win; duplicates keep the
 * first), joined with ','. Undefined when nothing valid is left or the header is too long to be a
 * list a conforming sender would send.
 */
export function parseTracestate(tracestate: string | null | undefined): string | undefined {
  if (tracestate === null || tracestate === undefined) return undefined;
  if (tracestate.length > MAX_TRACESTATE_LENGTH * 2) return undefined;
  const seen = new Set<string>();
  const members: string[] = [];
  for (const raw of tracestate.split(',')) {
    const member = raw.trim();
    if (member === '') continue;
    const eq = member.indexOf('=');
    if (eq <= 0) continue;
    const key = member.slice(0, eq);
    const value = member.slice(eq + 1);
    if (!TRACESTATE_KEY.test(key) || !TRACESTATE_VALUE.test(value) || seen.has(key)) continue;
    seen.add(key);
    members.push(`${key}=${value}`);
    if (members.length === MAX_TRACESTATE_MEMBERS) break;
  }
  const joined = members.join(',');
  return joined === '' || joined.length > MAX_TRACESTATE_LENGTH ? undefined : joined;
}

/** Reads the context from anything with a `get(name)`: Web `Headers`, a header map, gRPC metadata glue. */
export function extractTraceContext(get: (name: string) => string | null | undefined): TraceContext | undefined {
  return parseTraceparent(get(TRACEPARENT_HEADER), get(TRACESTATE_HEADER));
}

/** The headers (or gRPC metadata entries) that carry `context` to the next process. */
export function traceHeaders(context: TraceContext | undefined): Record<string, string> {
  if (context === undefined || !isValidTraceId(context.traceId) || !isValidSpanId(context.spanId)) return {};
  return {
    [TRACEPARENT_HEADER]: formatTraceparent(context),
    ...(context.traceState === undefined ? {} : { [TRACESTATE_HEADER]: context.traceState }),
  };
}
