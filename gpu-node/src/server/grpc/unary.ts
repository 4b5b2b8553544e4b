/**
 * The one wrapper every unary handler goes through: undecodable requests become INVALID_ARGUMENT,
 * anything thrown becomes its mapped status, and nothing escapes to crash the process.
 */
import type { Metadata, ServerUnaryCall, handleUnaryCall } from '@grpc/grpc-js';
import type { Incoming } from '../../../../shared/src/grpc/index.js';
import { requireMessage, toServiceError } from './call-status.js';

/** A unary RPC's logic that reads only its request: what grpc-js's handler and the raw front's in-place call share. */
export type PlainLogic<I, O> = (request: I) => O | Promise<O>;

export type UnaryLogic<I, O> = (request: I, call: ServerUnaryCall<Incoming<I>, O>) => O | Promise<O>;

export interface UnaryOptions<I, O> {
  /** Trailing metadata sent with the answer, success or error; `request` is undefined when undecodable. */
  readonly trailer?: (request: I | undefined, call: ServerUnaryCall<Incoming<I>, O>) => Metadata;
}

export function unary<I, O>(logic: UnaryLogic<I, O>, options: UnaryOptions<I, O> = {}): handleUnaryCall<Incoming<I>, O> {
  return (call, callback) => {
    let request: I | undefined;
    const trailer = (): Metadata | undefined => {
      try {
        return options.trailer?.(request, call);
      } catch {
        return undefined; // trailing metadata is advisory; never let it turn an answer into a crash
      }
    };
    void (async () => {
      try {
        request = requireMessage(call.request);
        const response = await logic(request, call);
        callback(null, response, trailer());
      } catch (err) {
        callback(toServiceError(err, trailer()));
      }
    })();
  };
}
