/**
 * Building HTTP answers: JSON bodies, Triton's empty health bodies, and the mapping of anything thrown
 * to a status. TesseraErrors go through `httpStatusOf` / `errorBody` (shared/src/errors, the one place
 * for that mapping); anything else is a bug of ours, so it is logged with its stack and becomes a 500.
 */
import type { Logger } from '../../../../shared/src/logging/index.js';
import { InflatedBodyTooLargeError, SUPPORTED_REQUEST_ENCODINGS, UNSUPPORTED_COMPRESSION } from './body-reader.js';
import { errorBody, httpStatusOf, isTesseraError, TesseraError } from '../../../../shared/src/errors/index.js';

/** The slice of the shared Logger the server uses, so tests can pass a recorder. */
export type HttpLogger = Pick<Logger, 'error' | 'warn'>;

const JSON_TYPE = 'application/json';

export function jsonResponse(body: unknown, status = 200, headers: Record<string, string> = {}): Response {
  return new Response(JSON.stringify(body), { status, headers: { 'Content-Type': JSON_TYPE, ...headers } });
}

/** Health and readiness answers: Triton sends 200 or 400 with no body at all. */
export function emptyResponse(status: number, headers: Record<string, string> = {}): Response {
  return new Response(null, { status, headers });
}

/** An error answer as plain parts, for writers that are not Web Responses (native-infer.ts). */
export interface ErrorAnswer {
  readonly status: number;
  readonly headers: Record<string, string>;
  readonly body: string;
}

/** Triton's `{"error": "..."}` body with the status its code maps to. */
export function tesseraErrorAnswer(error: TesseraError, headers: Record<string, string> = {}): ErrorAnswer {
  const extra: Record<string, string> = { 'Content-Type': JSON_TYPE, ...headers };
  // A 501 for an unknown Content-Encoding tells the client what would have worked (Triton does this too).
  if (error.code === 'UNSUPPORTED' && error.message === UNSUPPORTED_COMPRESSION) {
    extra['Accept-Encoding'] = SUPPORTED_REQUEST_ENCODINGS;
  }
  // A compressed body that inflates past --http-max-input-size is 413 (Payload Too Large), not the code's 400.
  const status = error instanceof InflatedBodyTooLargeError ? error.httpStatus : httpStatusOf(error.code);
  return { status, headers: extra, body: JSON.stringify(errorBody(error)) };
}

export function tesseraErrorResponse(error: TesseraError, headers: Record<string, string> = {}): Response {
  const answer = tesseraErrorAnswer(error, headers);
  return new Response(answer.body, { status: answer.status, headers: answer.headers });
}

/**
 * The catch-all for a route: a TesseraError keeps its status; anything else is a bug of ours (500).
 * INTERNAL errors and bugs are logged with `where` (method and URL), so a 500 can be traced back to
 * the call that triggered it.
 */
export function errorAnswer(error: unknown, logger: HttpLogger, where?: { method: string; url: string }): ErrorAnswer {
  if (isTesseraError(error)) {
    if (error.code === 'INTERNAL') {
      logger.error('internal error while serving an HTTP request', logDetails(error, where));
    }
    return tesseraErrorAnswer(error);
  }
  logger.error('unexpected exception while serving an HTTP request', logDetails(error, where));
  const message = error instanceof Error ? error.message : String(error);
  return tesseraErrorAnswer(TesseraError.internal(message || 'internal error'));
}

export function errorResponse(error: unknown, logger: HttpLogger, request?: Request): Response {
  const answer = errorAnswer(error, logger, request === undefined ? undefined : { method: request.method, url: request.url });
  return new Response(answer.body, { status: answer.status, headers: answer.headers });
}

function logDetails(error: unknown, where: { method: string; url: string } | undefined): Record<string, unknown> {
  const details: Record<string, unknown> = {
    error: error instanceof Error ? (error.stack ?? error.message) : String(error),
  };
  if (where !== undefined) {
    details['method'] = where.method;
    details['url'] = where.url;
  }
  return details;
}

export const NOT_FOUND_BODY = { error: 'Not Found' } as const;
export const METHOD_NOT_ALLOWED_BODY = { error: 'Method Not Allowed' } as const;
