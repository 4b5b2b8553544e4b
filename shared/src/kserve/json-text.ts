/**
 * JSON helpers for the KServe codec. Writing: JSON.stringify cannot print bigint, and 64-bit integer
 * outputs must reach clients exactly (Triton prints them exactly), so we write JSON ourselves; NaN and
 * ±Infinity have no JSON literal and become null. Reading: small typed accessors over parsed JSON that
 * only look at own properties (a key like "constructor" must never reach Object.prototype).
 */
import { TesseraError } from '../errors/index.js';

export type JsonObject = Record<string, unknown>;

/** Serializes plain objects, arrays, strings, booleans, null, numbers and bigints; skips undefined fields. */
export function writeJson(value: unknown): string {
  switch (typeof value) {
    case 'string':
      return JSON.stringify(value);
    case 'number':
      // String(-0) is "0"; JSON can carry the sign and float outputs should keep it.
      if (Object.is(value, -0)) return '-0';
      return Number.isFinite(value) ? String(value) : 'null';
    case 'bigint':
      return value.toString();
    case 'boolean':
      return value ? 'true' : 'false';
    case 'object': {
      if (value === null) return 'null';
      if (Array.isArray(value)) return `[${value.map((v) => writeJson(v)).join(',')}]`;
      const parts: string[] = [];
      for (const [k, v] of Object.entries(value)) {
        if (v !== undefined) parts.push(`${JSON.stringify(k)}:${writeJson(v)}`);
      }
      return `{${parts.join(',')}}`;
    }
    default:
      return 'null';
  }
}

export function isJsonObject(value: unknown): value is JsonObject {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** An own property of a parsed JSON object, or undefined. */
export function own(obj: JsonObject, key: string): unknown {
  return Object.hasOwn(obj, key) ? obj[key] : undefined;
}

/** Short rendering of a JSON value for error messages. */
export function describeJson(value: unknown): string {
  if (value === undefined) return 'nothing';
  let text: string;
  try {
    text = writeJson(value);
  } catch {
    text = typeof value;
  }
  return text.length > 40 ? `${text.slice(0, 37)}...` : text;
}

const utf8Strict = new TextDecoder('utf-8', { fatal: true });

/** UTF-8 bytes → parsed JSON; INVALID_ARG naming the problem when they are not valid UTF-8 or JSON. */
export function parseJsonBytes(bytes: Uint8Array, what: string): unknown {
  return parseJsonText(jsonTextOf(bytes, what), what);
}

/** UTF-8 bytes → text; INVALID_ARG when they are not valid UTF-8. */
export function jsonTextOf(bytes: Uint8Array, what: string): string {
  try {
    return utf8Strict.decode(bytes);
  } catch {
    throw TesseraError.invalidArg(`failed to parse the ${what} JSON buffer: it is not valid UTF-8`);
  }
}

/** Text → parsed JSON; INVALID_ARG naming the problem when it is not JSON. */
export function parseJsonText(text: string, what: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch (err) {
    const reason = err instanceof Error ? err.message : String(err);
    throw TesseraError.invalidArg(`failed to parse the ${what} JSON buffer: ${reason}`);
  }
}
