/**
 * An infer request as the node's HTTP/1.1 port reads it, for the raw infer upstream
 * (raw-infer-upstream.ts): the KServe binary extension, every input a binary section that is the
 * request's own tensor bytes (a slice of the client's body, or a JSON client's tensor encoded once on
 * the way in), every output asked binary so the node's bytes come back as they were produced. The
 * gateway's additions: the node-level sequence id is in the parameters already (sequence-dispatch.ts),
 * priority and timeout µs come as `call` (raw-infer-json.ts writes them), as the gRPC upstream sends them.
 *
 * Small sections are copied behind the head (one buffer); large ones go as they are, the socket corked
 * around the writes so the whole request still leaves in one writev.
 */
import type { InferRequest } from '../../../../shared/src/tensors/index.js';
import { inferRequestJson, type CallParameters } from './raw-infer-json.js';
import type { RawRequestBytes } from './raw-request-bytes.js';

/** Sections below this size are copied into the head's buffer: a copy costs less than another write. */
const INLINE_BELOW_BYTES = 16 * 1024;
/** Model names and versions sent as they are: anything else would need escaping, and goes over gRPC. */
const PLAIN_SEGMENT = /^[A-Za-z0-9._~-]+$/;

/** `/v2/models/{m}[/versions/{v}]/infer`, or undefined when a name needs escaping (the caller uses gRPC then). */
export function inferPathOf(model: string, version: string | undefined): string | undefined {
  if (!PLAIN_SEGMENT.test(model)) return undefined;
  if (version === undefined || version === '') return `/v2/models/${model}/infer`;
  return PLAIN_SEGMENT.test(version) ? `/v2/models/${model}/versions/${version}/infer` : undefined;
}

/** Whether every parameter survives the node's JSON reader exactly (a 63-bit node sequence id does not: gRPC then). */
export function jsonExact(request: InferRequest): boolean {
  for (const key in request.parameters) {
    const value = request.parameters[key];
    if (typeof value === 'bigint') return false;
    if (typeof value === 'number' && Number.isInteger(value) && !Number.isSafeInteger(value)) return false;
  }
  return true;
}

/** The request's buffers, in order; throws what encoding or the head's checks throw (INVALID_ARG, UnsafeRequest). */
export function renderInferRequest(
  heads: RawRequestBytes,
  address: string,
  path: string,
  request: InferRequest,
  extraHeaders: readonly string[],
  call: CallParameters = {},
): Uint8Array[] {
  const { json, sections } = inferRequestJson(request, call);
  const jsonBytes = Buffer.byteLength(json, 'utf8');
  let bodyBytes = jsonBytes;
  let inlineBytes = 0;
  for (const section of sections) {
    bodyBytes += section.length;
    if (section.length < INLINE_BELOW_BYTES) inlineBytes += section.length;
  }
  let lines = `content-type: application/octet-stream\r\ninference-header-content-length: ${jsonBytes}\r\ncontent-length: ${bodyBytes}\r\n`;
  for (const line of extraHeaders) lines += line;
  lines += '\r\n';
  const head = heads.head('POST', address, path, undefined);
  const first = Buffer.allocUnsafe(head.length + lines.length + jsonBytes + inlineBytes);
  head.copy(first, 0);
  let at = head.length + first.write(lines, head.length, 'latin1');
  at += first.write(json, at, 'utf8');
  const apart: Uint8Array[] = [];
  let inlining = true;
  for (const section of sections) {
    // Copied only while every section before it was: the bytes must stay in order.
    if (inlining && section.length < INLINE_BELOW_BYTES) {
      first.set(section, at);
      at += section.length;
    } else {
      inlining = false;
      apart.push(section);
    }
  }
  return [at === first.length ? first : first.subarray(0, at), ...apart];
}
