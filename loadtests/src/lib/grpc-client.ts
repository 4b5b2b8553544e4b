/**
 * KServe v2 gRPC client (`ModelInfer`, inputs and outputs in raw_*_contents) over one grpc-js channel:
 * HTTP/2 multiplexes the concurrent calls, as Triton's own gRPC client does with a shared channel.
 *
 * Client send is the InferRequest → protobuf message conversion and client recv the reverse (codec time
 * in this process; grpc-js's own (de)serialization is inside the call and counts as network).
 */
import { Client, Metadata, credentials } from '@grpc/grpc-js';
import { GRPCInferenceService } from '../../../shared/src/gen/grpc_service_pb.js';
import {
  callUnary,
  clientServiceDefinition,
  inferRequestToProto,
  inferResponseFromProto,
} from '../../../shared/src/grpc/index.js';
import type { InferRequest } from '../../../shared/src/tensors/index.js';
import type { InferClient, InferResult } from './infer-client.js';

const service = clientServiceDefinition(GRPCInferenceService);
const elapsedUs = (since: number): number => (performance.now() - since) * 1000;

/** `metadata` goes on every call (an API key, as `authorization` or `x-api-key`). */
export function createGrpcInferClient(host: string, port: number, metadata: Readonly<Record<string, string>> = {}): InferClient {
  const client = new Client(`${host}:${port}`, credentials.createInsecure(), {
    'grpc.max_receive_message_length': 64 * 1024 * 1024,
    'grpc.max_send_message_length': 64 * 1024 * 1024,
  });
  const callMetadata = new Metadata();
  for (const [key, value] of Object.entries(metadata)) callMetadata.set(key.toLowerCase(), value);
  return {
    protocol: 'grpc',
    async infer(request: InferRequest): Promise<InferResult> {
      const t0 = performance.now();
      const message = inferRequestToProto(request);
      const sendUs = elapsedUs(t0);
      const { response } = await callUnary(client, service.modelInfer, message, { metadata: callMetadata.clone() });
      const t1 = performance.now();
      const decoded = inferResponseFromProto(response);
      return { response: decoded, sendUs, recvUs: elapsedUs(t1) };
    },
    async close() {
      client.close();
    },
  };
}
