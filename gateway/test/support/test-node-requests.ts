/**
 * Test support: requests for the models of the test node (test-node-process.ts), as InferRequests
 * (for the gateway's transports and dispatcher) and as KServe JSON bodies (for its HTTP front), so the
 * suites that drive that node all send the same shapes.
 */
import type { InferRequest } from '../../../shared/src/tensors/index.js';

const SIMPLE_ELEMENTS = 16;
const int32 = (values: readonly number[]) => new Uint8Array(Int32Array.from(values).buffer);
const fp32 = (values: readonly number[]) => new Uint8Array(Float32Array.from(values).buffer);
/** `simple`'s INPUT0 = offset..offset+15 (distinct offsets, distinct requests: cache misses), INPUT1 = 1s. */
const simpleInputs = (offset: number) => ({
  input0: Array.from({ length: SIMPLE_ELEMENTS }, (_, i) => i + offset),
  input1: Array.from({ length: SIMPLE_ELEMENTS }, () => 1),
});

/** A `simple` request: OUTPUT0 = INPUT0 + 1, OUTPUT1 = INPUT0 - 1. */
export function simpleRequest(offset: number): InferRequest {
  const { input0, input1 } = simpleInputs(offset);
  return {
    id: '',
    modelName: 'simple',
    inputs: [
      { name: 'INPUT0', datatype: 'INT32', shape: [1, SIMPLE_ELEMENTS], data: int32(input0) },
      { name: 'INPUT1', datatype: 'INT32', shape: [1, SIMPLE_ELEMENTS], data: int32(input1) },
    ],
    parameters: {},
  };
}

/** The same `simple` request as a KServe JSON body (with `id` when given). */
export function simpleBody(offset: number, id?: string): string {
  const { input0, input1 } = simpleInputs(offset);
  return JSON.stringify({
    ...(id === undefined ? {} : { id }),
    inputs: [
      { name: 'INPUT0', datatype: 'INT32', shape: [1, SIMPLE_ELEMENTS], data: input0 },
      { name: 'INPUT1', datatype: 'INT32', shape: [1, SIMPLE_ELEMENTS], data: input1 },
    ],
  });
}

/** A `sleepy` request: the node holds it `ms` milliseconds, then echoes INPUT0 (= [ms]) as OUTPUT0. */
export function sleepyRequest(ms: number, id = ''): InferRequest {
  return { id, modelName: 'sleepy', inputs: [{ name: 'INPUT0', datatype: 'FP32', shape: [1, 1], data: fp32([ms]) }], parameters: {} };
}

/** The same `sleepy` request as a KServe JSON body. */
export function sleepyBody(ms: number): string {
  return JSON.stringify({ inputs: [{ name: 'INPUT0', datatype: 'FP32', shape: [1, 1], data: [ms] }] });
}
