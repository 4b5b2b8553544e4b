/**
 * gRPC's length-prefixed message framing over HTTP/2 DATA frames: 1 byte compressed flag, 4 bytes
 * big-endian length, then the protobuf bytes. A unary call carries exactly one message each way. Our
 * clients (the load generator's and the gateway's) never send `grpc-accept-encoding`, so a compressed
 * answer is a server bug, not something to decompress.
 */

/** The flag byte and the 4-byte length before every message. */
export const GRPC_PREFIX_BYTES = 5;

/** Writes the prefix of an uncompressed message of `length` bytes at the start of `target`. */
export function writeGrpcMessagePrefix(target: Buffer, length: number): void {
  target[0] = 0;
  target.writeUInt32BE(length, 1);
}

/** One uncompressed message, ready to send as a request body. */
export function frameGrpcMessage(message: Uint8Array): Buffer {
  const framed = Buffer.allocUnsafe(GRPC_PREFIX_BYTES + message.length);
  writeGrpcMessagePrefix(framed, message.length);
  framed.set(message, GRPC_PREFIX_BYTES);
  return framed;
}

/** The prefix alone, for a large message sent after it as is (no copy of the message). */
export function grpcMessagePrefix(length: number): Buffer {
  const prefix = Buffer.allocUnsafe(GRPC_PREFIX_BYTES);
  writeGrpcMessagePrefix(prefix, length);
  return prefix;
}

/** Why a unary body is not exactly one uncompressed message. */
export type UnaryFramingProblem =
  | { readonly kind: 'no-message' }
  | { readonly kind: 'short-prefix'; readonly bytes: number }
  | { readonly kind: 'compressed'; readonly flag: number }
  | { readonly kind: 'truncated'; readonly received: number; readonly declared: number }
  | { readonly kind: 'extra-message' };

/**
 * The one message of a unary body (a view into it), or what is wrong with the body. Each side words
 * the problem its own way: the node answers a status, the clients throw.
 */
export function cutUnaryMessage(body: Buffer): { readonly message: Buffer } | { readonly problem: UnaryFramingProblem } {
  if (body.length === 0) return { problem: { kind: 'no-message' } };
  if (body.length < GRPC_PREFIX_BYTES) return { problem: { kind: 'short-prefix', bytes: body.length } };
  if (body[0] !== 0) return { problem: { kind: 'compressed', flag: body[0]! } };
  const end = GRPC_PREFIX_BYTES + body.readUInt32BE(1);
  if (end > body.length) return { problem: { kind: 'truncated', received: body.length - GRPC_PREFIX_BYTES, declared: end - GRPC_PREFIX_BYTES } };
  if (end < body.length) return { problem: { kind: 'extra-message' } };
  return { message: body.subarray(GRPC_PREFIX_BYTES, end) };
}

/** An answer's framing problem as the clients report it. */
function answerProblemText(problem: UnaryFramingProblem): string {
  switch (problem.kind) {
    case 'no-message':
      return 'the response carries no message';
    case 'short-prefix':
      return `the response ends inside a message prefix (${problem.bytes} bytes)`;
    case 'compressed':
      return `the response message is compressed (flag ${problem.flag}), which was not asked for`;
    case 'truncated':
      return `the response message is truncated: ${problem.received} of ${problem.declared} bytes`;
    case 'extra-message':
      return 'the response carries more than one message for a unary call';
  }
}

/**
 * Collects a unary answer's DATA chunks (a large message arrives split over many) and cuts the one
 * message out of them at the end. Bytes beyond `maxMessageBytes` fail at once, before they pile up.
 */
export class UnaryMessageReader {
  private readonly chunks: Buffer[] = [];
  private received = 0;

  constructor(private readonly maxMessageBytes: number) {}

  /** Nothing arrived (a unary answer with no message, which `message()` rejects). */
  get empty(): boolean {
    return this.received === 0;
  }

  push(chunk: Buffer): void {
    const before = this.received;
    this.chunks.push(chunk);
    this.received += chunk.length;
    if (this.received > this.maxMessageBytes + GRPC_PREFIX_BYTES) {
      throw new Error(`the response is larger than the ${this.maxMessageBytes}-byte message limit`);
    }
    // Refused on the declared length once the prefix is whole, before a peer sends the bytes it announced.
    if (before < GRPC_PREFIX_BYTES && this.received >= GRPC_PREFIX_BYTES && this.bytes().readUInt32BE(1) > this.maxMessageBytes) {
      throw new Error(`the response declares more than the ${this.maxMessageBytes}-byte message limit`);
    }
  }

  /** The one message of the answer (a view into the received bytes); throws when there is not exactly one. */
  message(): Buffer {
    const cut = cutUnaryMessage(this.bytes());
    if ('problem' in cut) throw new Error(answerProblemText(cut.problem));
    return cut.message;
  }

  private bytes(): Buffer {
    const chunks = this.chunks;
    return chunks.length === 1 ? (chunks[0] as Buffer) : Buffer.concat(chunks, this.received);
  }
}
