/** Building the gateway's HTTP answers: Triton-style error JSON, from any error, in one place. */
import { errorBody, httpStatusOf, TesseraError, toTesseraError } from '../../../../shared/src/errors/index.js';
import type { Logger } from '../../../../shared/src/logging/logger-interface.js';
import { AccessError } from './access-error.js';
import { answerToResponse, type HttpAnswer } from './http-answer.js';
import { PayloadTooLargeError } from './payload-too-large.js';

export function jsonAnswer(value: unknown, status = 200, headers: Record<string, string> = {}): HttpAnswer {
  return { status, headers: { 'Content-Type': 'application/json', ...headers }, body: JSON.stringify(value) };
}

export function jsonResponse(value: unknown, status = 200, headers: Record<string, string> = {}): Response {
  return answerToResponse(jsonAnswer(value, status, headers));
}

export function emptyResponse(status: number): Response {
  return new Response(null, { status });
}

/**
 * AccessError → 401/403 (+ `WWW-Authenticate` on 401); TesseraError → its mapped status (+ `Retry-After`
 * when it has `retryAfterMs`); anything else is our bug → 500, logged. Only bugs, INTERNAL errors and
 * BAD_GATEWAY (a node sent an answer we cannot use: an operator must look at that node) are logged here: caller mistakes (4xx, 501 for an unsupported encoding) are not ours, and 503/504
 * (admission rejections, a node down, a deadline) are expected under load and counted by the metrics;
 * logging each at error level would flood the log exactly when the gateway is busiest. Every request
 * still gets its access line with its status.
 */
export function errorResponse(error: unknown, logger: Logger): Response {
  return answerToResponse(errorAnswer(error, logger));
}

/** `errorResponse` as an HttpAnswer. */
export function errorAnswer(error: unknown, logger: Logger): HttpAnswer {
  if (error instanceof AccessError) {
    const headers: Record<string, string> = error.status === 401 ? { 'WWW-Authenticate': 'Bearer' } : {};
    return jsonAnswer({ error: error.message }, error.status, headers);
  }
  const wasOurs = error instanceof TesseraError;
  const tessera = toTesseraError(error);
  const status = tessera instanceof PayloadTooLargeError ? tessera.httpStatus : httpStatusOf(tessera.code);
  if (!wasOurs || tessera.code === 'INTERNAL' || tessera.code === 'BAD_GATEWAY') {
    logger.error('request failed', { code: tessera.code, error: tessera.message, ...(wasOurs ? {} : { stack: (error as Error)?.stack }) });
  }
  const headers: Record<string, string> = {};
  if (tessera.retryAfterMs !== undefined) headers['Retry-After'] = String(Math.max(1, Math.ceil(tessera.retryAfterMs / 1000)));
  return jsonAnswer(errorBody(tessera), status, headers);
}
