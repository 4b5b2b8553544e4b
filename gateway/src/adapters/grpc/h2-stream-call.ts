/**
 * One server-streaming gRPC call on a node's HTTP/2 connection (h2-node-connection.ts, the same connection
 * and call lifecycle, h2-call.ts, as unary calls): the gateway's upstream ModelStreamInfer for one
 * request of a decoupled model. A POST of one framed request,
 * half-closed at once; the node answers with any number of messages, each handed to `onMessage` as soon
 * as it is complete (nothing is held back until the end), then a `grpc-status` in the trailers.
 *
 * It resolves when the node ends the call with OK, and rejects with an UpstreamError (grpc-errors.ts)
 * otherwise, with the same rules as the unary call (h2-unary-call.ts) for `notAccepted` (never true once
 * a message arrived), for the deadline (enforced here too) and for `signal` (the stream is reset with
 * CANCEL at once, so the model on the node sees its request's AbortSignal). A status the node itself
 * sent after its response headers (a model error, a refused request) comes from its handler, a working
 * node: it is marked `excused` so it does not count against the node's breaker (a stream sends no load
 * trailer, the unary call's sign of the same thing).
 */
import { GrpcStatus } from '../../../../shared/src/errors/index.js';
import { decodeGrpcMessage } from '../../../../shared/src/grpc/index.js';
import { upstreamError } from './grpc-errors.js';
import { GrpcMessageSplitter } from './grpc-message-splitter.js';
import { h2Call, headerValue } from './h2-call.js';
import type { H2Call } from './h2-call.js';
import type { NodeConnection } from './h2-node-connection.js';

export interface StreamCall extends H2Call {
  /** Each message as it arrives; a throw fails the call with that error and resets the stream. */
  onMessage(message: Buffer): void;
}

export function streamCall(connection: NodeConnection, nodeId: string, call: StreamCall): Promise<void> {
  const splitter = new GrpcMessageSplitter(call.maxReceiveBytes);
  let messagesReceived = 0;
  return h2Call<void>(connection, nodeId, call, {
    reopenClosingSession: false,
    refusedMeansNotSent: () => messagesReceived === 0,
    data(chunk, control) {
      let messages: Buffer[];
      try {
        messages = splitter.push(chunk);
      } catch (error) {
        control.fail(upstreamError({ code: GrpcStatus.RESOURCE_EXHAUSTED, details: (error as Error).message }, nodeId, false, undefined));
        return;
      }
      for (const message of messages) {
        messagesReceived++;
        try {
          call.onMessage(message);
        } catch (error) {
          control.fail(error);
          return;
        }
        if (control.settled) return;
      }
    },
    settle(status, headersReceived) {
      const code = Number(headerValue(status['grpc-status']));
      if (code === GrpcStatus.OK) {
        if (splitter.midMessage) throw upstreamError({ code: GrpcStatus.INTERNAL, details: 'the stream ended inside a message' }, nodeId, false, undefined);
        return;
      }
      const details = decodeGrpcMessage(status['grpc-message']);
      const error = upstreamError({ code: Number.isInteger(code) ? code : GrpcStatus.UNKNOWN, details }, nodeId, false, undefined);
      // The node's handler answered (headers first, then this status): a working node, whatever the error.
      throw headersReceived ? Object.assign(error, { excused: true }) : error;
    },
  });
}
