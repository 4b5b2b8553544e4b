/**
 * The one error type of Tessera. Its codes are Triton's (TRITONSERVER_Error codes) plus
 * DEADLINE_EXCEEDED and RESOURCE_EXHAUSTED, which the gateway needs for deadlines and quotas, and
 * BAD_GATEWAY: a node answered, but with something the gateway cannot use (an undecodable message,
 * outputs that contradict their own shapes). It is neither the caller's mistake nor the gateway's bug.
 * How a code becomes an HTTP status, a gRPC status or an error body lives in `status-map.ts`, and only there.
 */
export const ERROR_CODES = [
  'INVALID_ARG',
  'NOT_FOUND',
  'UNAVAILABLE',
  'UNSUPPORTED',
  'INTERNAL',
  'ALREADY_EXISTS',
  'CANCELLED',
  'DEADLINE_EXCEEDED',
  'RESOURCE_EXHAUSTED',
  'BAD_GATEWAY',
  'UNKNOWN',
] as const;

export type ErrorCode = (typeof ERROR_CODES)[number];

export class TesseraError extends Error {
  override readonly name = 'TesseraError';

  /** When set, the caller may retry after this many ms (HTTP `Retry-After`); used by admission and rate limits. */
  readonly retryAfterMs: number | undefined;

  constructor(
    readonly code: ErrorCode,
    message: string,
    options?: { cause?: unknown; retryAfterMs?: number },
  ) {
    super(message, options?.cause === undefined ? undefined : { cause: options.cause });
    this.retryAfterMs = options?.retryAfterMs;
  }

  static invalidArg(message: string): TesseraError {
    return new TesseraError('INVALID_ARG', message);
  }
  static notFound(message: string): TesseraError {
    return new TesseraError('NOT_FOUND', message);
  }
  static unavailable(message: string): TesseraError {
    return new TesseraError('UNAVAILABLE', message);
  }
  static unsupported(message: string): TesseraError {
    return new TesseraError('UNSUPPORTED', message);
  }
  static internal(message: string, cause?: unknown): TesseraError {
    return new TesseraError('INTERNAL', message, { cause });
  }
  static alreadyExists(message: string): TesseraError {
    return new TesseraError('ALREADY_EXISTS', message);
  }
  static cancelled(message: string): TesseraError {
    return new TesseraError('CANCELLED', message);
  }
  static badGateway(message: string, cause?: unknown): TesseraError {
    return new TesseraError('BAD_GATEWAY', message, { cause });
  }
  static deadlineExceeded(message: string): TesseraError {
    return new TesseraError('DEADLINE_EXCEEDED', message);
  }
  static resourceExhausted(message: string): TesseraError {
    return new TesseraError('RESOURCE_EXHAUSTED', message);
  }
}

export function isTesseraError(value: unknown): value is TesseraError {
  return value instanceof TesseraError;
}

/**
 * Turns anything thrown into a TesseraError. Unknown throwables become INTERNAL: they are our bugs,
 * never the caller's mistake, so the message keeps the original text for the log.
 */
export function toTesseraError(value: unknown): TesseraError {
  if (value instanceof TesseraError) return value;
  if (value instanceof Error) return TesseraError.internal(value.message, value);
  return TesseraError.internal(String(value));
}
