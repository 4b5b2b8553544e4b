/**
 * `ModelInferRequest` / `ModelInferResponse` <-> our InferRequest / InferResponse (section 2.3).
 *
 * Server direction (the node): requests are untrusted, so every count, size and datatype is checked
 * and failures are INVALID_ARG (or UNSUPPORTED for shared memory) naming the tensor. Client direction
 * (the gateway): requests always go out raw, like Triton's clients do, and responses are checked too,
 * because a broken node must not crash the gateway.
 */
import { create } from '@bufbuild/protobuf';
import { TesseraError, isTesseraError } from '../errors/index.js';
import {
  ModelInferRequestSchema,
  ModelInferRequest_InferInputTensorSchema,
  ModelInferRequest_InferRequestedOutputTensorSchema,
  ModelInferResponseSchema,
  ModelInferResponse_InferOutputTensorSchema,
} from '../gen/grpc_service_pb.js';
import type {
  InferParameter,
  InferTensorContents,
  ModelInferRequest,
  ModelInferResponse,
} from '../gen/grpc_service_pb.js';
import { countBytesElements } from '../tensors/bytes-elements.js';
import { parseDatatype } from '../tensors/datatype.js';
import { elementCount, expectedByteSize, formatShape } from '../tensors/shape.js';
import type { Datatype, InferRequest, InferResponse, Parameters as TensorParameters, RequestedOutput, Tensor } from '../tensors/index.js';
import { parameterValueFromProto, parametersFromProto, parametersToProto, parameterValueToProto } from './parameter-codec.js';
import { namesSeenFor, repeatsEarlierName } from './repeated-names.js';
import { contentsToRaw } from './typed-contents.js';

const SHARED_MEMORY_KEY = 'shared_memory_region';
const CLASSIFICATION_KEY = 'classification';

interface WireTensor {
  readonly name: string;
  readonly datatype: string;
  readonly shape: readonly bigint[];
  readonly contents?: InferTensorContents | undefined;
}

/** The safe-integer bounds as BigInts, made once: two BigInts per dimension of every request otherwise. */
const MIN_SAFE_DIM = BigInt(Number.MIN_SAFE_INTEGER);
const MAX_SAFE_DIM = BigInt(Number.MAX_SAFE_INTEGER);

function shapeFromProto(shape: readonly bigint[], what: string): number[] {
  return shape.map((dim) => {
    if (dim < MIN_SAFE_DIM || dim > MAX_SAFE_DIM) {
      throw TesseraError.invalidArg(`invalid dimension ${dim} in shape ${formatShape(shape)} of ${what}`);
    }
    return Number(dim);
  });
}

/** Raw data must hold exactly what the shape promises: N * size bytes, or N well-formed BYTES elements. */
function checkRawSize(datatype: Datatype, shape: readonly number[], data: Uint8Array, what: string): void {
  const expected = expectedByteSize(datatype, shape, what);
  if (expected !== null) {
    if (data.length !== expected) {
      throw TesseraError.invalidArg(`unexpected total byte size ${data.length} for ${what}, expecting ${expected}`);
    }
    return;
  }
  const count = elementCount(shape, what);
  const found = countBytesElements(data, what, count);
  if (found !== count) {
    throw TesseraError.invalidArg(`unexpected number of BYTES elements in ${what}: expecting ${count}`);
  }
}

/**
 * One tensor from its wire form; `raw` is its raw entry, or undefined when it must use typed contents.
 * `missing` makes the no-data message: built only on that error, not for every tensor of every call.
 */
function tensorFromProto(wire: WireTensor, raw: Uint8Array | undefined, what: string, missing: () => string): Tensor {
  const datatype = parseDatatype(wire.datatype, what);
  const shape = shapeFromProto(wire.shape, what);
  let data: Uint8Array;
  if (raw !== undefined) {
    checkRawSize(datatype, shape, raw, what);
    data = raw;
  } else if (wire.contents !== undefined) {
    data = contentsToRaw(wire.contents, datatype, elementCount(shape, what), what);
  } else {
    throw TesseraError.invalidArg(missing());
  }
  return { name: wire.name, datatype, shape, data };
}

function rejectSharedMemory(params: { readonly [key: string]: InferParameter }, what: string): void {
  if (Object.hasOwn(params, SHARED_MEMORY_KEY)) {
    throw TesseraError.unsupported(`${what} uses '${SHARED_MEMORY_KEY}', but shared memory is not supported`);
  }
}

function requestedOutputFromProto(
  name: string,
  params: { readonly [key: string]: InferParameter },
): RequestedOutput {
  const what = `output '${name}'`;
  rejectSharedMemory(params, what);
  const param = params[CLASSIFICATION_KEY];
  if (param === undefined || !Object.hasOwn(params, CLASSIFICATION_KEY)) return { name };
  const value = parameterValueFromProto(param, CLASSIFICATION_KEY, `parameter '${CLASSIFICATION_KEY}' of ${what}`);
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < 0) {
    throw TesseraError.invalidArg(`parameter '${CLASSIFICATION_KEY}' of ${what} must be a non-negative integer`);
  }
  return { name, classification: value };
}

/** Server side: a decoded ModelInferRequest -> InferRequest, or INVALID_ARG / UNSUPPORTED. */
export function inferRequestFromProto(msg: ModelInferRequest): InferRequest {
  const useRaw = msg.rawInputContents.length > 0;
  if (useRaw && msg.rawInputContents.length !== msg.inputs.length) {
    throw TesseraError.invalidArg(
      `expected ${msg.inputs.length} raw_input_contents entries (one per input, in order), ` +
        `got ${msg.rawInputContents.length}`,
    );
  }
  // A few inputs are checked for repeats against the ones before (no Set per request); many, with a Set.
  const seen = namesSeenFor(msg.inputs.length);
  const inputs: Tensor[] = [];
  for (let i = 0; i < msg.inputs.length; i++) {
    const input = msg.inputs[i]!;
    const what = `input '${input.name}'`;
    if (repeatsEarlierName(msg.inputs, i, seen)) throw TesseraError.invalidArg(`${what} is given more than once`);
    rejectSharedMemory(input.parameters, what);
    if (useRaw && input.contents !== undefined) {
      throw TesseraError.invalidArg(
        `contents field must not be specified when using raw_input_contents for '${input.name}' ` +
          `for model '${msg.modelName}'`,
      );
    }
    const missing = (): string => `unable to find data for input tensor '${input.name}' for model '${msg.modelName}'`;
    inputs.push(tensorFromProto(input, useRaw ? msg.rawInputContents[i] : undefined, what, missing));
  }
  const outputs: RequestedOutput[] = [];
  for (const output of msg.outputs) outputs.push(requestedOutputFromProto(output.name, output.parameters));
  // The optional fields are set in place, not spread in: a spread makes an object to copy from.
  const request: { -readonly [K in keyof InferRequest]: InferRequest[K] } = {
    id: msg.id,
    modelName: msg.modelName,
    inputs,
    parameters: requestParametersFromProto(msg.parameters),
  };
  if (msg.modelVersion !== '') request.modelVersion = msg.modelVersion;
  if (outputs.length > 0) request.outputs = outputs;
  return request;
}

/** Keys starting with this prefix are the server's; a client may not set them (as over HTTP). */
const RESERVED_PREFIX = 'triton_';
/** The one reserved key Triton's gRPC frontend accepts from clients (decoupled models' empty final response). */
const ALLOWED_RESERVED = new Set(['triton_enable_empty_final_response']);

function requestParametersFromProto(map: ModelInferRequest['parameters']): TensorParameters {
  for (const key of Object.keys(map)) {
    if (key.startsWith(RESERVED_PREFIX) && !ALLOWED_RESERVED.has(key)) {
      throw TesseraError.invalidArg(
        `parameter '${key}' is not allowed: keys starting with '${RESERVED_PREFIX}' are reserved for the server`,
      );
    }
  }
  return parametersFromProto(map);
}

/** Client side: InferRequest -> ModelInferRequest, inputs always in raw_input_contents. */
export function inferRequestToProto(request: InferRequest): ModelInferRequest {
  return create(ModelInferRequestSchema, {
    id: request.id,
    modelName: request.modelName,
    modelVersion: request.modelVersion ?? '',
    parameters: parametersToProto(request.parameters),
    inputs: request.inputs.map((t) =>
      create(ModelInferRequest_InferInputTensorSchema, {
        name: t.name,
        datatype: t.datatype,
        shape: t.shape.map((d) => BigInt(d)),
      }),
    ),
    outputs: (request.outputs ?? []).map((o) =>
      create(ModelInferRequest_InferRequestedOutputTensorSchema, {
        name: o.name,
        parameters:
          o.classification !== undefined
            ? { [CLASSIFICATION_KEY]: parameterValueToProto(o.classification, CLASSIFICATION_KEY) }
            : {},
      }),
    ),
    rawInputContents: request.inputs.map((t) => t.data),
  });
}

/** Server side: InferResponse -> ModelInferResponse; outputs always in raw_output_contents, like Triton. */
export function inferResponseToProto(response: InferResponse): ModelInferResponse {
  return create(ModelInferResponseSchema, {
    id: response.id,
    modelName: response.modelName,
    modelVersion: response.modelVersion,
    parameters: parametersToProto(response.parameters),
    outputs: response.outputs.map((t) =>
      create(ModelInferResponse_InferOutputTensorSchema, {
        name: t.name,
        datatype: t.datatype,
        shape: t.shape.map((d) => BigInt(d)),
      }),
    ),
    rawOutputContents: response.outputs.map((t) => t.data),
  });
}

/**
 * Client side: ModelInferResponse -> InferResponse. Accepts raw or typed output contents. A response
 * that does not add up is the server's fault, so it surfaces as INTERNAL, not as the caller's INVALID_ARG.
 */
export function inferResponseFromProto(msg: ModelInferResponse): InferResponse {
  try {
    const useRaw = msg.rawOutputContents.length > 0;
    if (useRaw && msg.rawOutputContents.length !== msg.outputs.length) {
      throw TesseraError.invalidArg(
        `expected ${msg.outputs.length} raw_output_contents entries, got ${msg.rawOutputContents.length}`,
      );
    }
    const outputs = msg.outputs.map((output, i) =>
      tensorFromProto(
        output,
        useRaw ? msg.rawOutputContents[i] : undefined,
        `output '${output.name}'`,
        () => `no data for output tensor '${output.name}'`,
      ),
    );
    const params = parametersFromProto(msg.parameters);
    return {
      id: msg.id,
      modelName: msg.modelName,
      modelVersion: msg.modelVersion,
      outputs,
      ...(Object.keys(params).length > 0 ? { parameters: params } : {}),
    };
  } catch (err) {
    if (isTesseraError(err)) {
      throw TesseraError.internal(`malformed ModelInferResponse from model '${msg.modelName}': ${err.message}`, err);
    }
    throw err;
  }
}
