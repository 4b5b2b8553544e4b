/**
 * 401 and 403. They are not TesseraError codes (Triton has no authentication), so they live here, in
 * the one layer that authenticates, and become Triton-style `{"error": "..."}` bodies like the rest.
 */
export class AccessError extends Error {
  override readonly name = 'AccessError';

  constructor(
    readonly status: 401 | 403,
    message: string,
  ) {
    super(message);
  }

  static unauthenticated(message: string): AccessError {
    return new AccessError(401, message);
  }

  static forbidden(message: string): AccessError {
    return new AccessError(403, message);
  }
}
