/**
 * The `Inference-Header-Content-Length` header of the binary tensor extension: how many leading bytes
 * of the body are the JSON header. Absent means the whole body is JSON; 0 means the whole body is the
 * raw bytes of the model's single input.
 */
import { TesseraError } from '../errors/index.js';

export const INFERENCE_HEADER_CONTENT_LENGTH = 'Inference-Header-Content-Length';
/** The same name in lower case, the form node:http's header objects and our HeaderReaders are keyed by. */
export const INFER_HEADER_LENGTH = INFERENCE_HEADER_CONTENT_LENGTH.toLowerCase();

const INT32_MAX = 0x7fff_ffff;

/** Parses the header value against the body length; null/undefined → null (no binary sections). */
export function parseHeaderLength(value: string | null | undefined, bodyLength: number): number | null {
  if (value === undefined || value === null) return null;
  const text = value.trim();
  const parsed = /^\d{1,10}$/.test(text) ? Number(text) : NaN;
  if (!(parsed <= INT32_MAX) || parsed > bodyLength) {
    throw TesseraError.invalidArg(
      `${INFERENCE_HEADER_CONTENT_LENGTH} must be an integer in [0, ${Math.min(bodyLength, INT32_MAX)}] ` +
        `(the body length), got '${value.length > 40 ? `${value.slice(0, 37)}...` : value}'`,
    );
  }
  return parsed;
}
