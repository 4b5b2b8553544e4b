/**
 * What a backend can tell about a model file on its own (ONNX: its graph inputs and outputs), used by
 * auto-complete to fill what a config.pbtxt leaves out (Triton's `--strict-model-config=false`).
 */
export interface ModelIoTensor {
  readonly name: string;
  /** Config enum name, e.g. 'TYPE_FP32' or 'TYPE_STRING'. */
  readonly dataType: string;
  /** The model file's full dims, batch dimension included; -1 for a dynamic dimension. */
  readonly dims: readonly number[];
}

export interface ModelIoMetadata {
  readonly inputs: readonly ModelIoTensor[];
  readonly outputs: readonly ModelIoTensor[];
}
