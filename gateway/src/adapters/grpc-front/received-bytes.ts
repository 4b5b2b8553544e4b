/**
 * The bytes each ModelInferRequest arrived as, kept beside the decoded message so the gateway can
 * forward the client's request as received (issue 17: bytes, not tensors) instead of encoding it
 * again. The deserializer of ModelInfer and ModelStreamInfer records them; front-infer.ts reads them.
 */
import type { MethodDefinition } from '@grpc/grpc-js';
import { MalformedMessage } from '../../../../shared/src/grpc/index.js';

/**
 * A non-enumerable own property of the message, not a WeakMap entry: V8's scavenger keeps a WeakMap's values
 * alive until a full collection, so an entry per request promoted every request's bytes to the old space (as
 * the node's answers were: shared/src/grpc/forwarded-response.ts, docs/benchmarks.md issue 17, 2026-11-28b).
 * Non-enumerable: spreads, Object.assign and JSON skip it, so a changed copy of the message has no record.
 */
const RECEIVED = Symbol('tessera.receivedRequestBytes');

function record(message: object, bytes: Uint8Array): void {
  if (Object.isExtensible(message)) Object.defineProperty(message, RECEIVED, { value: bytes, configurable: true });
}

/** The message's bytes as received, or undefined for a message this module did not see arrive. */
export function receivedBytesOf(message: object): Uint8Array | undefined {
  return Object.hasOwn(message, RECEIVED) ? (message as { [RECEIVED]?: Uint8Array })[RECEIVED] : undefined;
}

/** `definition` with ModelInfer's and ModelStreamInfer's request deserializers recording the bytes. */
export function recordingReceivedBytes<D extends object>(definition: D): D {
  const methods = definition as unknown as Record<string, MethodDefinition<unknown, unknown>>;
  const out: Record<string, MethodDefinition<unknown, unknown>> = { ...methods };
  for (const name of ['modelInfer', 'modelStreamInfer']) {
    const method = methods[name];
    if (method === undefined) continue;
    const decode = method.requestDeserialize;
    out[name] = {
      ...method,
      requestDeserialize: (bytes: Buffer) => {
        const message = decode(bytes);
        if (typeof message === 'object' && message !== null && !(message instanceof MalformedMessage)) record(message, bytes);
        return message;
      },
    };
  }
  return out as unknown as D;
}
