/**
 * 413 Payload Too Large: a request (or job) body over its tier's largest size. Triton has no such
 * code, so it is the caller's mistake (INVALID_ARG) everywhere a TesseraError code is read (gRPC,
 * metrics, retries), and 413 only where the gateway answers HTTP (responses.ts reads `httpStatus`).
 * The answer is final: waiting does not make the body smaller, so there is no Retry-After.
 */
import { TesseraError } from '../../../../shared/src/errors/index.js';

export class PayloadTooLargeError extends TesseraError {
  readonly httpStatus = 413;

  constructor(message: string) {
    super('INVALID_ARG', message);
  }
}

/** A body over the limit it was read with (400 as before for the gateway-wide `maxBodyBytes`). */
export class BodyOverLimitError extends TesseraError {
  constructor(
    readonly limit: number,
    declared?: string,
  ) {
    super(
      'INVALID_ARG',
      declared === undefined
        ? `request body exceeds the gateway's limit of ${limit} bytes`
        : `request body of ${declared} bytes exceeds the gateway's limit of ${limit} bytes`,
    );
  }
}

/**
 * Reads a body with the tier's largest request size when it is below the gateway-wide limit: a body
 * over the tier's size is a 413 naming the tier; over the gateway's, the 400 it always was.
 */
export async function readTierBody(
  read: (maxBytes: number) => Promise<Uint8Array>,
  maxBodyBytes: number,
  tier: { readonly name: string; readonly maxRequestBytes?: number },
): Promise<Uint8Array> {
  const tierMax = tier.maxRequestBytes;
  if (tierMax === undefined || tierMax >= maxBodyBytes) return read(maxBodyBytes);
  try {
    return await read(tierMax);
  } catch (error) {
    if (error instanceof BodyOverLimitError && error.limit === tierMax) {
      throw new PayloadTooLargeError(`the request body is larger than ${tierMax} bytes, the largest request tier '${tier.name}' accepts`);
    }
    throw error;
  }
}
