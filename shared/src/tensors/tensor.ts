/**
 * The in-memory form of tensors and inference requests that every part of Tessera shares.
 *
 * A tensor's data is always its raw little-endian, row-major bytes, exactly as Triton's binary
 * extension and gRPC `raw_input_contents` carry them; BYTES tensors hold their elements serialized as
 * 4-byte little-endian length + bytes. One representation means batching is concatenation, splitting is
 * slicing, and the codecs are the only places that ever convert to or from JSON numbers.
 */

/** KServe v2 protocol datatype names. */
export const DATATYPES = [
  'BOOL',
  'UINT8',
  'UINT16',
  'UINT32',
  'UINT64',
  'INT8',
  'INT16',
  'INT32',
  'INT64',
  'FP16',
  'FP32',
  'FP64',
  'BF16',
  'BYTES',
] as const;

export type Datatype = (typeof DATATYPES)[number];

/** A value of a request/response parameter (KServe v2 `parameters` / gRPC `InferParameter`). */
export type ParameterValue = string | number | boolean | bigint;
export type Parameters = Record<string, ParameterValue>;

export interface Tensor {
  readonly name: string;
  readonly datatype: Datatype;
  /** Full shape, including the batch dimension when the model batches. */
  readonly shape: readonly number[];
  /** Raw bytes, little-endian, row-major (BYTES: length-prefixed elements). */
  readonly data: Uint8Array;
}

export interface RequestedOutput {
  readonly name: string;
  /** HTTP only: whether this output is returned in the binary section. */
  readonly binaryData?: boolean;
  /** Classification extension: return the top-K classes instead of the tensor. */
  readonly classification?: number;
}

export interface InferRequest {
  /** Client-supplied request id, echoed in the response when non-empty. */
  readonly id: string;
  readonly modelName: string;
  /** Requested version; empty string or undefined means the latest READY version. */
  readonly modelVersion?: string;
  readonly inputs: readonly Tensor[];
  /** Outputs the client asked for; undefined or empty means every output of the model. */
  readonly outputs?: readonly RequestedOutput[];
  /** Request-level parameters, including Triton's reserved ones (priority, timeout, sequence_*). */
  readonly parameters: Parameters;
  /**
   * The ModelInferRequest message this request was read from (a gRPC client's, its framing checked),
   * so the gateway forwards it as received; only modelVersion, id and parameters may differ from it.
   */
  readonly forwardable?: Uint8Array;
}

export interface InferResponse {
  readonly id: string;
  readonly modelName: string;
  readonly modelVersion: string;
  readonly outputs: readonly Tensor[];
  readonly parameters?: Parameters;
}
