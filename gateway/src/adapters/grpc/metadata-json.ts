/**
 * A node's ModelMetadataResponse as Triton's HTTP JSON (`GET /v2/models/{m}`): the shape a node's own
 * HTTP endpoint answers, so clients see the same document through the gateway.
 */
import type { ModelMetadataResponse, ModelMetadataResponse_TensorMetadata } from '../../../../shared/src/gen/grpc_service_pb.js';

export interface TensorMetadataJson {
  readonly name: string;
  readonly datatype: string;
  readonly shape: number[];
}

export interface ModelMetadataJson {
  readonly name: string;
  readonly versions: string[];
  readonly platform: string;
  readonly inputs: TensorMetadataJson[];
  readonly outputs: TensorMetadataJson[];
}

function tensor(t: ModelMetadataResponse_TensorMetadata): TensorMetadataJson {
  // Dimensions are small (or -1); Number() is exact for every realistic shape.
  return { name: t.name, datatype: t.datatype, shape: t.shape.map((d) => Number(d)) };
}

export function modelMetadataToTritonJson(m: ModelMetadataResponse): ModelMetadataJson {
  return { name: m.name, versions: [...m.versions], platform: m.platform, inputs: m.inputs.map(tensor), outputs: m.outputs.map(tensor) };
}
