/**
 * Builds grpc-js service definitions straight from protobuf-es service descriptors, so neither the node
 * nor the gateway needs @grpc/proto-loader: the generated `*_pb.ts` files are the only schema source.
 *
 * Keys are the methods' protobuf-es local names (`modelInfer`), paths are the wire paths
 * (`/inference.GRPCInferenceService/ModelInfer`), so Triton's own clients and ours hit the same routes.
 */
import { fromBinary, toBinary } from '@bufbuild/protobuf';
import type { DescMessage, DescMethod, MessageShape } from '@bufbuild/protobuf';
import type { GenService, GenServiceMethods } from '@bufbuild/protobuf/codegenv2';
import type { MethodDefinition } from '@grpc/grpc-js';
import { TesseraError } from '../errors/index.js';

/**
 * What a server-side deserializer hands to a handler when the bytes are not a valid message.
 * grpc-js answers a throwing deserializer with INTERNAL, which blames the server for the client's bad
 * bytes; passing this marker through lets the handler answer INVALID_ARGUMENT instead.
 */
export class MalformedMessage {
  constructor(readonly error: TesseraError) {}
}

/** A request as a server handler receives it: the decoded message, or the marker for undecodable bytes. */
export type Incoming<T> = T | MalformedMessage;

type Shape<M> = M extends DescMessage ? MessageShape<M> : never;

/** Client view: messages in both directions are the generated types. */
export type ClientServiceDefinition<T extends GenServiceMethods> = {
  readonly [K in keyof T]: MethodDefinition<Shape<T[K]['input']>, Shape<T[K]['output']>>;
};

/** Server view: requests may be `MalformedMessage`; see `Incoming`. */
export type ServerServiceDefinition<T extends GenServiceMethods> = {
  readonly [K in keyof T]: MethodDefinition<Incoming<Shape<T[K]['input']>>, Shape<T[K]['output']>>;
};

/** Decodes one message; malformed bytes become INVALID_ARG naming the message type. */
export function decodeMessage<M extends DescMessage>(schema: M, bytes: Uint8Array): MessageShape<M> {
  // grpc-js hands over Buffers; decoded `bytes` fields are views into the input, and a Buffer's
  // `slice` does not copy as Uint8Array's does, so consumers get plain Uint8Array views instead.
  const plain = Buffer.isBuffer(bytes) ? new Uint8Array(bytes.buffer, bytes.byteOffset, bytes.byteLength) : bytes;
  try {
    return fromBinary(schema, plain);
  } catch (err) {
    const detail = err instanceof Error ? err.message : String(err);
    throw TesseraError.invalidArg(`malformed ${schema.typeName} message: ${detail}`);
  }
}

function methodPath(method: DescMethod): string {
  return `/${method.parent.typeName}/${method.name}`;
}

function isRequestStream(method: DescMethod): boolean {
  return method.methodKind === 'client_streaming' || method.methodKind === 'bidi_streaming';
}

function isResponseStream(method: DescMethod): boolean {
  return method.methodKind === 'server_streaming' || method.methodKind === 'bidi_streaming';
}

function toBuffer(bytes: Uint8Array): Buffer {
  // Share the memory instead of copying: responses can carry tens of MiB of tensor data.
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
}

function buildMethod(method: DescMethod, lenientRequests: boolean): MethodDefinition<unknown, unknown> {
  const decode = (schema: DescMessage) => (bytes: Buffer) => decodeMessage(schema, bytes);
  const requestDecode = decode(method.input);
  return {
    path: methodPath(method),
    originalName: method.localName,
    requestStream: isRequestStream(method),
    responseStream: isResponseStream(method),
    requestSerialize: (value: unknown) => toBuffer(toBinary(method.input, value as MessageShape<DescMessage>)),
    requestDeserialize: lenientRequests
      ? (bytes: Buffer) => {
          try {
            return requestDecode(bytes);
          } catch (err) {
            return new MalformedMessage(err as TesseraError);
          }
        }
      : requestDecode,
    responseSerialize: (value: unknown) => toBuffer(toBinary(method.output, value as MessageShape<DescMessage>)),
    responseDeserialize: decode(method.output),
  };
}

function build(service: GenService<GenServiceMethods>, lenient: boolean): Record<string, MethodDefinition<unknown, unknown>> {
  const definition: Record<string, MethodDefinition<unknown, unknown>> = {};
  for (const method of service.methods) definition[method.localName] = buildMethod(method, lenient);
  return definition;
}

/** The definition a grpc-js client (`makeClientConstructor`) needs. */
export function clientServiceDefinition<T extends GenServiceMethods>(service: GenService<T>): ClientServiceDefinition<T> {
  return build(service as unknown as GenService<GenServiceMethods>, false) as ClientServiceDefinition<T>;
}

/** The definition a grpc-js `Server.addService` needs; undecodable requests arrive as `MalformedMessage`. */
export function serverServiceDefinition<T extends GenServiceMethods>(service: GenService<T>): ServerServiceDefinition<T> {
  return build(service as unknown as GenService<GenServiceMethods>, true) as ServerServiceDefinition<T>;
}
