/**
 * How much a ModelStreamInfer server stream may hold written but not yet sent. A client that stops reading
 * leaves answers queued in the server (HTTP/2 flow control stops the bytes, not the writes): past the
 * budget the stream must end (RESOURCE_EXHAUSTED) instead of growing without bound. Used by the node and
 * by the gateway's gRPC front door; the same bound as the node's HTTP event streams.
 */
import type { ModelStreamInferResponse } from '../gen/grpc_service_pb.js';

export const MAX_UNSENT_STREAM_BYTES = 8 * 1024 * 1024;

/** What a stream can be written to: grpc-js server streams call back once a message has gone out. */
interface CallbackWritable<T> {
  write(message: T, callback: () => void): unknown;
}

/** About what an answer takes on the wire: its tensor bytes and a fixed allowance for the rest. */
export function streamAnswerBytes(answer: ModelStreamInferResponse): number {
  const raw = answer.inferResponse?.rawOutputContents ?? [];
  return raw.reduce((sum, part) => sum + part.byteLength, 256 + answer.errorMessage.length);
}

export class UnsentBudget {
  private unsent = 0;

  constructor(private readonly limit = MAX_UNSENT_STREAM_BYTES) {}

  /** Writes `answer`; false when the stream now holds more than the budget unsent (the caller ends it). */
  write(stream: CallbackWritable<ModelStreamInferResponse>, answer: ModelStreamInferResponse): boolean {
    const size = streamAnswerBytes(answer);
    this.unsent += size;
    stream.write(answer, () => {
      this.unsent -= size;
    });
    return this.unsent <= this.limit;
  }

  /** The error a stream over its budget ends with. */
  overflowMessage(): string {
    return `the client is not reading the stream: more than ${this.limit} bytes of answers are waiting to be sent`;
  }
}
