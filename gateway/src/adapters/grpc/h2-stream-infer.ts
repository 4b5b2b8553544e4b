/**
 * A request of a decoupled model sent to a node over its own upstream ModelStreamInfer call
 * (h2-stream-call.ts): the request, with the call's `priority` and `timeout` (call-parameters.ts) and
 * `triton_enable_empty_final_response: true`, so that the node always marks the end of the request
 * with a final response, even when the model ends it with the bare final flag (the gateway's front
 * door drops that empty response again when its own client did not ask for it). The stream is opened
 * with `triton_grpc_error: true`: the node then ends it with a real status on error, instead of an
 * in-band message whose code is lost. Every response is handed to `onResponse` as it arrives.
 */
import { GrpcStatus } from '../../../../shared/src/errors/index.js';
import { GRPCInferenceService } from '../../../../shared/src/gen/grpc_service_pb.js';
import { clientServiceDefinition, encodeInferRequestFramed, inferResponseFromProto } from '../../../../shared/src/grpc/index.js';
import type { InferRequest, InferResponse } from '../../../../shared/src/tensors/index.js';
import { traceHeaders } from '../../../../shared/src/tracing/index.js';
import type { UpstreamCallOptions, UpstreamInferResult } from '../../core/ports/index.js';
import { withCallParameters } from './call-parameters.js';
import { decodeNodeAnswer, upstreamError } from './grpc-errors.js';
import { streamCall } from './h2-stream-call.js';
import type { NodeConnection } from './h2-node-connection.js';

/** Triton's request parameter asking for the final flag as an empty response when the model sends it bare. */
export const EMPTY_FINAL_RESPONSE_PARAM = 'triton_enable_empty_final_response';
/** The node's (and Triton's) metadata asking for errors as the stream's status. */
const STREAM_ERROR_HEADER = 'triton_grpc_error';

const modelStreamInfer = clientServiceDefinition(GRPCInferenceService).modelStreamInfer;

export interface StreamLimits {
  readonly maxReceiveBytes: number;
  readonly maxSendBytes: number;
}

/** Resolves with the last response (the final one) once the node ended the call with OK. */
export async function streamInferCall(
  connection: NodeConnection,
  nodeId: string,
  request: InferRequest,
  opts: UpstreamCallOptions,
  limits: StreamLimits,
  onResponse: (response: InferResponse) => void,
): Promise<UpstreamInferResult> {
  const upstream = withCallParameters(request, opts);
  const encoded = encodeInferRequestFramed({ ...upstream, parameters: { ...upstream.parameters, [EMPTY_FINAL_RESPONSE_PARAM]: true } });
  if (encoded.messageBytes > limits.maxSendBytes) {
    throw upstreamError(
      { code: GrpcStatus.RESOURCE_EXHAUSTED, details: `Sent message larger than max (${encoded.messageBytes} vs. ${limits.maxSendBytes})` },
      nodeId,
      false,
      undefined,
    );
  }
  let last: InferResponse | undefined;
  await streamCall(connection, nodeId, {
    path: modelStreamInfer.path,
    body: encoded.chunks,
    deadline: opts.deadline,
    maxReceiveBytes: limits.maxReceiveBytes,
    metadata: { ...traceHeaders(opts.trace), [STREAM_ERROR_HEADER]: 'true' },
    ...(opts.signal ? { signal: opts.signal } : {}),
    onMessage: (bytes) => {
      const message = decodeNodeAnswer(nodeId, () => modelStreamInfer.responseDeserialize(bytes));
      // With triton_grpc_error the node sends errors as the status; an in-band one is still an error.
      if (message.errorMessage !== '') throw upstreamError({ code: GrpcStatus.UNKNOWN, details: message.errorMessage }, nodeId, false, undefined);
      const response = decodeNodeAnswer(nodeId, () => {
        if (message.inferResponse === undefined) throw new Error('a stream answer without infer_response');
        return inferResponseFromProto(message.inferResponse);
      });
      last = response;
      onResponse(response);
    },
  });
  return { response: last ?? { id: request.id, modelName: request.modelName, modelVersion: request.modelVersion ?? '', outputs: [] } };
}
