/**
 * The `grpc-message` header of a status: percent-encoded on the wire (gRPC over HTTP/2 spec), so any
 * text survives HTTP/2 header rules. Clients decode it for people to read.
 */

/** The status text as the server meant it; left as sent when it is not valid percent-encoding. */
export function decodeGrpcMessage(value: string | string[] | undefined): string {
  const text = Array.isArray(value) ? value.join(',') : (value ?? '');
  // Most messages have nothing encoded: skip decodeURIComponent's work and its exception path.
  if (!text.includes('%')) return text;
  try {
    return decodeURIComponent(text);
  } catch {
    return text;
  }
}
