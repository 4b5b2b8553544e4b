/**
 * One unary gRPC call on a node's HTTP/2 connection (h2-node-connection.ts): a POST of one framed
 * message with `te: trailers` and `grpc-timeout`, answered by one message and a `grpc-status` in the
 * trailers, or by a status alone in the response headers (trailers-only: how servers answer errors
 * before any message).
 *
 * It resolves with the answer's message bytes and the node's load from the trailers, or rejects with
 * an UpstreamError (grpc-errors.ts) whose `notAccepted` says exactly whether the node can have seen
 * the call: true when the connection never came up or is in backoff, when the stream was never sent,
 * and when the node refused the stream (RST_STREAM REFUSED_STREAM, or a stream id above a GOAWAY's
 * last stream id). Everything else (a dropped connection mid-call, a reset, any status the node sent)
 * is false: the node may have run the request.
 *
 * The deadline is enforced here too (the node may be hung or unreachable): when it passes, the stream
 * is reset with CANCEL and the call fails DEADLINE_EXCEEDED. Aborting `signal` does the same with
 * CANCELLED, so the node stops working for a client that left.
 */
import type { IncomingHttpHeaders } from 'node:http2';
import { GrpcStatus } from '../../../../shared/src/errors/index.js';
import { UnaryMessageReader, decodeGrpcMessage } from '../../../../shared/src/grpc/index.js';
import { decodeNodeAnswer, looksNotAccepted, upstreamError } from './grpc-errors.js';
import type { CallStatus, NodeLoad } from './grpc-errors.js';
import { h2Call, headerValue } from './h2-call.js';
import type { AnswerHandling, H2Call } from './h2-call.js';
import type { NodeConnection } from './h2-node-connection.js';
import { INFLIGHT_TRAILER, QUEUE_DEPTH_TRAILER, loadFromTrailer } from './load-trailer.js';

export type UnaryCall = H2Call;

export interface UnaryAnswer {
  readonly message: Buffer;
  readonly load: NodeLoad | undefined;
}

function loadOf(headers: IncomingHttpHeaders): NodeLoad | undefined {
  return loadFromTrailer(headerValue(headers[QUEUE_DEPTH_TRAILER]), headerValue(headers[INFLIGHT_TRAILER]));
}

export function unaryCall(connection: NodeConnection, nodeId: string, call: UnaryCall): Promise<UnaryAnswer> {
  const reader = new UnaryMessageReader(call.maxReceiveBytes);
  const handling: AnswerHandling<UnaryAnswer> = {
    reopenClosingSession: true,
    refusedMeansNotSent: () => true,
    data(chunk, control) {
      try {
        reader.push(chunk);
      } catch {
        const details = `Received message larger than max (${call.maxReceiveBytes} bytes)`;
        control.fail(upstreamError({ code: GrpcStatus.RESOURCE_EXHAUSTED, details }, nodeId, false, undefined));
      }
    },
    settle(status, headersReceived) {
      const code = Number(headerValue(status['grpc-status']));
      const load = loadOf(status);
      if (code !== GrpcStatus.OK) {
        const callStatus: CallStatus = { code: Number.isInteger(code) ? code : GrpcStatus.UNKNOWN, details: decodeGrpcMessage(status['grpc-message']) };
        throw upstreamError(callStatus, nodeId, looksNotAccepted(callStatus, headersReceived), load);
      }
      if (reader.empty) throw upstreamError({ code: GrpcStatus.UNIMPLEMENTED, details: 'No message received' }, nodeId, false, load);
      return { message: decodeNodeAnswer(nodeId, () => reader.message()), load };
    },
  };
  return h2Call(connection, nodeId, call, handling);
}
