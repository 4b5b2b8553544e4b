/**
 * The bytes each ModelInferRequest arrived as, kept beside the decoded message so the gateway can
 * forward the client's request as received (issue 17: bytes, not tensors) instead of encoding it
 * again. The deserializer of ModelInfer and ModelStreamInfer records them; front-infer.ts reads them.
 */
import type { MethodDefinition } from '@grpc/grpc-js';
import { MalformedMessage } from '../../../../shared/src/grpc/index.js';

const received = new WeakMap<object, Uint8Array>();

/** The message's bytes as received, or undefined for a message this module did not see arrive. */
export function receivedBytesOf(message: object): Uint8Array | undefined {
  return received.get(message);
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
        if (typeof message === 'object' && message !== null && !(message instanceof MalformedMessage)) received.set(message, bytes);
        return message;
      },
    };
  }
  return out as unknown as D;
}
