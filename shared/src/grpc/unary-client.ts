/**
 * A promise-shaped unary call on a plain grpc-js Client, with the trailing metadata the caller may need
 * (the node's load report). Works with any definition from `clientServiceDefinition`.
 */
import { Metadata } from '@grpc/grpc-js';
import type { CallOptions, Client, MethodDefinition, ServiceError } from '@grpc/grpc-js';

export interface UnaryResult<O> {
  readonly response: O;
  readonly trailer: Metadata;
}

export interface UnaryCallOptions {
  readonly metadata?: Metadata;
  readonly deadline?: Date | number;
  /** Aborting cancels the call; the promise then rejects with status CANCELLED. */
  readonly signal?: AbortSignal;
}

/** Rejects with the grpc-js ServiceError, whose `metadata` holds the trailers of a failed call. */
export function callUnary<I, O>(
  client: Client,
  method: MethodDefinition<I, O>,
  request: I,
  options: UnaryCallOptions = {},
): Promise<UnaryResult<O>> {
  return new Promise((resolve, reject) => {
    let response: O | undefined;
    let failed: ServiceError | undefined;
    let done = 0;
    const callOptions: CallOptions = options.deadline !== undefined ? { deadline: options.deadline } : {};
    const call = client.makeUnaryRequest(
      method.path,
      method.requestSerialize,
      method.responseDeserialize,
      request,
      options.metadata ?? new Metadata(),
      callOptions,
      (err, value) => {
        if (err) failed = err;
        else response = value;
        // The callback and the 'status' event arrive in either order; answer once both are in.
        if (++done === 2) settle();
      },
    );
    let trailer = new Metadata();
    call.on('status', (status) => {
      trailer = status.metadata;
      if (++done === 2) settle();
    });
    const onAbort = (): void => call.cancel();
    options.signal?.addEventListener('abort', onAbort, { once: true });
    if (options.signal?.aborted) call.cancel();
    function settle(): void {
      options.signal?.removeEventListener('abort', onAbort);
      if (failed) reject(failed);
      else resolve({ response: response as O, trailer });
    }
  });
}
