/**
 * A node whose ModelInfer answers a test sets byte by byte: a real node:http2 server on loopback that
 * answers ModelInfer with the message `answer()` returns at that moment, framed as gRPC with status OK,
 * and every other method UNIMPLEMENTED. For the hostile-node tests (tests/security/*hostile-node-answer*).
 */
import { create, toBinary } from '@bufbuild/protobuf';
import { createServer } from 'node:http2';
import type { AddressInfo } from 'node:net';
import { ModelInferResponseSchema } from '../../../shared/src/gen/grpc_service_pb.js';

const MODEL_INFER = '/inference.GRPCInferenceService/ModelInfer';

export interface ScriptedGrpcNode {
  /** host:port of the server. */
  readonly address: string;
  close(): Promise<void>;
}

export async function startScriptedGrpcNode(answer: () => Uint8Array): Promise<ScriptedGrpcNode> {
  const server = createServer();
  server.on('stream', (stream, headers) => {
    stream.respond({ ':status': 200, 'content-type': 'application/grpc' }, { waitForTrailers: true });
    if (headers[':path'] === MODEL_INFER) {
      const message = answer();
      const frame = Buffer.alloc(5 + message.length);
      frame.writeUInt32BE(message.length, 1);
      frame.set(message, 5);
      stream.on('wantTrailers', () => stream.sendTrailers({ 'grpc-status': '0' }));
      stream.resume();
      stream.end(frame);
      return;
    }
    stream.on('wantTrailers', () => stream.sendTrailers({ 'grpc-status': '12' }));
    stream.resume();
    stream.end();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    address: `127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

/** An output's head as a node declares it (any of it may be wrong on purpose). */
export type DeclaredOutput = { name: string; datatype: string; shape: bigint[] };

/** A ModelInferResponse of `simple` version 1 with these outputs and raw contents. */
export const answerOf = (outputs: DeclaredOutput[], raw: Uint8Array[]): Uint8Array =>
  toBinary(ModelInferResponseSchema, create(ModelInferResponseSchema, { modelName: 'simple', modelVersion: '1', outputs, rawOutputContents: raw }));

export const int32 = (name: string, dims: bigint[]): DeclaredOutput => ({ name, datatype: 'INT32', shape: dims });
