import { describe, expect, it } from 'vitest';
import { readModelConfig } from '../../../shared/src/model-config/index.js';
import { encodeBytesElements } from '../../../shared/src/tensors/index.js';
import type { InferRequest, Tensor } from '../../../shared/src/tensors/index.js';
import { validateInferRequest } from './request-validator.js';
import { int32Input } from '../../test/support/models/test-repository.js';

function config(text: string) {
  return readModelConfig({ text: `backend: "fake"\n${text}`, fileName: '/r/m/config.pbtxt', strict: true, modelName: 'm' });
}

const batching = config(`max_batch_size: 8
input [ { name: "A" data_type: TYPE_INT32 dims: [ -1, 4 ] }, { name: "B" data_type: TYPE_INT32 dims: [ 4 ] optional: false } ]
output [ { name: "OUT" data_type: TYPE_INT32 dims: [ 4 ] } ]`);
const plain = config(`max_batch_size: 0
input [ { name: "S" data_type: TYPE_STRING dims: [ 2 ] }, { name: "R" data_type: TYPE_FP32 dims: [ 4 ] reshape: { shape: [ 2, 2 ] } } ]
output [ { name: "OUT" data_type: TYPE_STRING dims: [ 2 ] } ]`);

function req(inputs: Tensor[], extra: Partial<InferRequest> = {}): InferRequest {
  return { id: 'r1', modelName: 'm', inputs, parameters: {}, ...extra };
}
const fp32 = (name: string, shape: number[]): Tensor => ({
  name,
  datatype: 'FP32',
  shape,
  data: new Uint8Array(4 * shape.reduce((a, b) => a * b, 1)),
});

function message(request: InferRequest, cfg = batching): string {
  try {
    validateInferRequest(request, cfg, 'm');
  } catch (error) {
    expect(error).toMatchObject({ code: 'INVALID_ARG' });
    return (error as Error).message;
  }
  throw new Error('expected a validation error');
}

describe('validateInferRequest', () => {
  const a = int32Input('A', [1, 2, 3, 4, 5, 6, 7, 8], [1, 2, 4]);
  const b = int32Input('B', [1, 2, 3, 4], [1, 4]);

  it('accepts a good request and reports its batch size and full shapes', () => {
    const ok = validateInferRequest(req([a, b], { outputs: [{ name: 'OUT' }] }), batching, 'm');
    expect(ok.batchSize).toBe(1);
    expect(ok.execution.requestedOutputs).toEqual(['OUT']);
    expect(ok.execution.inputs.map((t) => t.shape)).toEqual([
      [1, 2, 4],
      [1, 4],
    ]);
  });

  it('names missing required inputs', () => {
    expect(message(req([a]))).toBe(
      "[request id: r1] expected 2 inputs but got 1 inputs for model 'm'. Got input(s) ['A'], but missing required input(s) ['B']. Please provide all required input(s).",
    );
  });

  it('rejects unknown inputs and outputs without the request prefix, as Triton does', () => {
    expect(message(req([a, int32Input('C', [1, 2, 3, 4], [1, 4])]))).toBe("unexpected inference input 'C' for model 'm'");
    expect(message(req([a, b], { outputs: [{ name: 'NOPE' }] }))).toBe("unexpected inference output 'NOPE' for model 'm'");
  });

  it('rejects a wrong datatype', () => {
    expect(message(req([a, fp32('B', [1, 4])]))).toBe(
      "[request id: r1] inference input 'B' data-type is 'FP32', but model 'm' expects 'INT32'",
    );
  });

  it('rejects a wrong shape with the expected dims and the implicit-batch note', () => {
    const msg = message(req([a, int32Input('B', [1, 2, 3], [1, 3])]));
    expect(msg).toMatch(/^\[request id: r1\] unexpected shape for input 'B' for model 'm'\. Expected \[-1,4\], got \[1,3\]\. NOTE: Setting a non-zero max_batch_size/);
  });

  it('rejects a batch larger than max_batch_size and mismatched batch sizes', () => {
    const big = int32Input('A', new Array(9 * 4).fill(0), [9, 1, 4]);
    const bigB = int32Input('B', new Array(9 * 4).fill(0), [9, 4]);
    expect(message(req([big, bigB]))).toBe("[request id: r1] inference request batch-size must be <= 8 for 'm'");
    expect(message(req([a, int32Input('B', new Array(8).fill(0), [2, 4])]))).toBe(
      "[request id: r1] input 'B' batch size does not match other inputs for 'm'",
    );
  });

  it('rejects -1 in a request shape', () => {
    expect(message(req([int32Input('A', [1, 2, 3, 4], [1, -1, 4]), b]))).toBe(
      "[request id: r1] All input dimensions should be specified for input 'A' for model 'm', got [1,-1,4]",
    );
  });

  it('checks byte sizes, fixed and BYTES', () => {
    const short = { ...b, data: b.data.subarray(0, 12) };
    expect(message(req([a, short]))).toBe(
      "[request id: r1] input byte size mismatch for input 'B' for model 'm'. Expected 16, got 12",
    );
    const strings = { name: 'S', datatype: 'BYTES' as const, shape: [2], data: encodeBytesElements(['x']) };
    expect(message(req([strings, fp32('R', [4])], { id: '' }), plain)).toBe(
      "[request id: <id_unknown>] expected 2 string elements for inference input 'S' for model 'm', got 1",
    );
  });

  it('applies reshape and keeps non-batching shapes', () => {
    const strings = { name: 'S', datatype: 'BYTES' as const, shape: [2], data: encodeBytesElements(['x', 'yz']) };
    const ok = validateInferRequest(req([strings, fp32('R', [4])]), plain, 'm');
    expect(ok.batchSize).toBe(1);
    expect(ok.execution.inputs.map((t) => t.shape)).toEqual([[2], [2, 2]]);
    expect(message(req([strings, fp32('R', [1, 4])]), plain)).toBe(
      "[request id: r1] unexpected shape for input 'R' for model 'm'. Expected [4], got [1,4]. ",
    );
  });

  it('names a repeated input in a short list and in a long one (scanned pairwise, then with a set)', () => {
    expect(message(req([fp32('X', [1]), fp32('Y', [1]), fp32('X', [1])]))).toBe("[request id: r1] input 'X' already exists in request");
    const many = Array.from({ length: 5000 }, (_, i) => fp32(`I${i}`, [1]));
    many.push(fp32('I4321', [1]));
    expect(message(req(many))).toBe("[request id: r1] input 'I4321' already exists in request");
  });

  it('passes an input whose shape stands on as the same tensor, and gives a reshaped one a new shape', () => {
    const strings: Tensor = { name: 'S', datatype: 'BYTES', shape: [2], data: encodeBytesElements(['a', 'b']) };
    const reshaped = fp32('R', [4]);
    const ok = validateInferRequest(req([strings, reshaped]), plain, 'm');
    expect(ok.execution.inputs[0]).toBe(strings);
    expect(ok.execution.inputs[1]).toMatchObject({ name: 'R', shape: [2, 2], data: reshaped.data });
    expect(reshaped.shape).toEqual([4]);
  });
});

