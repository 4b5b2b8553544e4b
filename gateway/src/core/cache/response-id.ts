/**
 * Re-stamping the request id on a replayed response.
 *
 * A KServe v2 response echoes the request's `id` (when non-empty), but the id is not part of the
 * cache key (else clients that number their requests would never hit). So the cached body is
 * encoded WITHOUT an id, and each replay writes the current request's id into the JSON header. Only
 * the JSON header is touched; binary tensor sections are copied as they are. `encodeInferResponse`
 * writes compact JSON that starts with `{"id":"…",` when it has an id, which is all this relies on.
 */
import { INFER_HEADER_LENGTH } from '../../../../shared/src/kserve/index.js';

const utf8 = new TextEncoder();
const ID_FIELD = utf8.encode('{"id":"');

export interface ReplayableBody {
  readonly body: Uint8Array;
  readonly headers: Readonly<Record<string, string>>;
}

/**
 * The body and headers with `id` as the response id ('' removes it), and Inference-Header-Content-Length
 * adjusted. A body that is not a KServe JSON header (does not start with `{`) comes back unchanged.
 */
export function withResponseId(entry: ReplayableBody, id: string): ReplayableBody {
  const { body } = entry;
  if (body[0] !== 0x7b /* { */) return entry;
  const headerName = headerNamed(entry.headers, INFER_HEADER_LENGTH);
  const jsonLength = headerName === undefined ? body.length : Number(entry.headers[headerName]);
  if (!Number.isSafeInteger(jsonLength) || jsonLength < 1 || jsonLength > body.length) return entry;

  // Where the fields after `{` start: past an existing `"id":"…",` when there is one.
  let rest = 1;
  if (startsWith(body, ID_FIELD)) {
    const end = endOfJsonString(body, ID_FIELD.length, jsonLength);
    if (end < 0) return entry;
    rest = body[end + 1] === 0x2c /* , */ ? end + 2 : end + 1;
  }
  if (id === '' && rest === 1) return entry;
  const idPart = id === '' ? new Uint8Array(0) : utf8.encode(`"id":${JSON.stringify(id)},`);
  const out = new Uint8Array(1 + idPart.length + (body.length - rest));
  out[0] = 0x7b;
  out.set(idPart, 1);
  out.set(body.subarray(rest), 1 + idPart.length);
  const headers = { ...entry.headers };
  if (headerName !== undefined) headers[headerName] = String(jsonLength - rest + 1 + idPart.length);
  return { body: out, headers };
}

function startsWith(body: Uint8Array, prefix: Uint8Array): boolean {
  if (body.length < prefix.length) return false;
  for (let i = 0; i < prefix.length; i++) if (body[i] !== prefix[i]) return false;
  return true;
}

/** Index of the closing quote of a JSON string whose content starts at `from`, or -1. */
function endOfJsonString(body: Uint8Array, from: number, limit: number): number {
  for (let i = from; i < limit; i++) {
    const byte = body[i];
    if (byte === 0x5c /* \ */) i++;
    else if (byte === 0x22 /* " */) return i;
  }
  return -1;
}

/** The spelling `headers` uses for `lowerCaseName`; undefined when absent. A loop: no key array per call. */
function headerNamed(headers: Readonly<Record<string, string>>, lowerCaseName: string): string | undefined {
  for (const name in headers) if (name.toLowerCase() === lowerCaseName) return name;
  return undefined;
}
