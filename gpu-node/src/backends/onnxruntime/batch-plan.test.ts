/**
 * The batch plan's safety net after issue 16's "validate once": requests the validator did not see
 * get every check; requests it did (their input list is marked) skip only what it checked, and still
 * meet the checks against the session itself (onnxruntime's datatypes, names, batch rows).
 */
import { describe, expect, it } from 'vitest';
import type { Tensor } from '../../../../shared/src/tensors/index.js';
import { markValidatedInputs } from '../validated-inputs.js';
import type { WireTensor } from '../worker/protocol.js';
import { forThread } from '../worker/wire-tensor.js';
import { planBatch, splitRunOutputs, type ModelIo } from './batch-plan.js';

const io: ModelIo = {
  modelName: 'm',
  batching: true,
  inputs: [{ name: 'INPUT0', type: 'float32', dims: [-1, 4] }],
  outputs: [{ name: 'OUTPUT0', type: 'float32', dims: [-1, 4] }],
};

const fp32 = (rows: number, bytes = rows * 16): Tensor => ({ name: 'INPUT0', datatype: 'FP32', shape: [rows, 4], data: new Uint8Array(bytes) });
const request = (inputs: Tensor[], validated: boolean) => {
  if (validated) markValidatedInputs(inputs);
  return { inputs, requestedOutputs: [], parameters: {} };
};

describe('planBatch', () => {
  it('refuses bytes that do not match the shape in a request the validator did not see', () => {
    const plan = planBatch([request([fp32(1, 12)], false), request([fp32(2)], false)], io);
    expect(plan.rejected.get(0)?.message).toMatch(/INPUT0/);
    expect(plan.runs[0]?.batchSizes).toEqual([2]);
  });

  it('refuses a duplicated input in a request the validator did not see', () => {
    const plan = planBatch([request([fp32(1), fp32(1)], false)], io);
    expect(plan.rejected.get(0)?.message).toBe("input 'INPUT0' appears twice in a request for model 'm'");
  });

  it('still checks a validated request against the session: datatype, unknown name, missing input', () => {
    const int32: Tensor = { name: 'INPUT0', datatype: 'INT32', shape: [1, 4], data: new Uint8Array(16) };
    const unknown: Tensor = { name: 'OTHER', datatype: 'FP32', shape: [1, 4], data: new Uint8Array(16) };
    const plan = planBatch([request([int32], true), request([unknown], true), request([], true), request([fp32(3)], true)], io);
    expect(plan.rejected.get(0)?.message).toBe("input 'INPUT0' for model 'm' has datatype INT32, the model expects FP32");
    expect(plan.rejected.get(1)?.message).toBe("unexpected inference input 'OTHER' for model 'm'");
    expect(plan.rejected.get(2)?.message).toBe("model 'm' needs input 'INPUT0', which the request does not have");
    expect(plan.runs[0]?.batchSizes).toEqual([3]);
  });

  it('a batch of one lends its tensor as it is; a thread gets a copy, never the caller\'s buffer', () => {
    const input = fp32(2);
    input.data.set([1, 2, 3], 5);
    const plan = planBatch([request([input], true)], io);
    const lent = plan.runs[0]?.body.inputs[0];
    // No copy on the plan: the main thread's session reads the request's bytes in place.
    expect(lent).toBe(input);
    const wire = forThread(lent!);
    expect(wire.shape).toEqual([2, 4]);
    expect(new Uint8Array(wire.data)).toEqual(input.data);
    expect(wire.data).not.toBe(input.data.buffer);
    // A concatenated batch is this code's own buffer: it crosses as it is.
    const batch = planBatch([request([fp32(1)], true), request([fp32(1)], true)], io).runs[0]!.body.inputs[0]!;
    expect(forThread(batch)).toBe(batch);
  });

  it('gathers a ragged batch of views into one buffer of exactly their rows, in order, leaving the callers\' bytes alone', () => {
    // Three requests' tensors as views into one received body, at odd offsets, of 1, 3 and 2 rows.
    const body = new Uint8Array(7 + 6 * 16);
    for (let i = 0; i < body.length; i++) body[i] = i % 251;
    const view = (offset: number, rows: number): Tensor => ({ name: 'INPUT0', datatype: 'FP32', shape: [rows, 4], data: body.subarray(offset, offset + rows * 16) });
    const parts = [view(7, 1), view(7 + 16, 3), view(7 + 64, 2)];
    const run = planBatch(parts.map((p) => request([p], true)), io).runs[0]!;
    expect(run.batchSizes).toEqual([1, 3, 2]);
    const wire = run.body.inputs[0] as WireTensor;
    expect(wire.shape).toEqual([6, 4]);
    expect(wire.data).toBeInstanceOf(ArrayBuffer);
    expect(wire.data).not.toBe(body.buffer);
    expect(new Uint8Array(wire.data)).toEqual(body.subarray(7));
    structuredClone(wire.data, { transfer: [wire.data] });
    expect(body[7]).toBe(7);
  });
});

describe('splitRunOutputs', () => {
  const output = (rows: number) => ({ name: 'OUTPUT0', datatype: 'FP32' as const, shape: [rows, 4], data: new Uint8Array(rows * 16).buffer });

  it('gives a run of one request the whole output, and refuses one whose rows are not the batch\'s', () => {
    const requests = [request([fp32(2)], true)];
    const plan = planBatch(requests, io);
    const run = plan.runs[0]!;
    const [ok] = splitRunOutputs(run, [output(2)], requests, io);
    expect(ok && 'outputs' in ok ? ok.outputs[0]?.shape : undefined).toEqual([2, 4]);
    const [bad] = splitRunOutputs(run, [output(3)], requests, io);
    expect(bad && 'error' in bad ? bad.error.code : undefined).toBe('INTERNAL');
  });

  it('refuses a one-request output whose bytes do not match its shape', () => {
    const requests = [request([fp32(1)], true)];
    const run = planBatch(requests, io).runs[0]!;
    const short = { ...output(1), data: new Uint8Array(12).buffer };
    const [bad] = splitRunOutputs(run, [short], requests, io);
    expect(bad && 'error' in bad ? bad.error.code : undefined).toBe('INTERNAL');
  });
});

describe('a batch of one (planned without the batch machinery) against a batch of two', () => {
  const two: ModelIo = {
    modelName: 'm2',
    batching: true,
    inputs: [
      { name: 'A', type: 'int32', dims: [-1, 2] },
      { name: 'B', type: 'int32', dims: [-1, 2] },
    ],
    outputs: [
      { name: 'X', type: 'int32', dims: [-1, 2] },
      { name: 'Y', type: 'int32', dims: [-1, 2] },
    ],
  };
  const int32 = (name: string, rows: number): Tensor => ({ name, datatype: 'INT32', shape: [rows, 2], data: new Uint8Array(rows * 8) });
  // Inputs in the other order than the model's, and one output asked for.
  const asking = (rows: number) => {
    const inputs = [int32('B', rows), int32('A', rows)];
    markValidatedInputs(inputs);
    return { inputs, requestedOutputs: ['Y'], parameters: {} };
  };

  it('feeds the inputs in the model order and fetches only the outputs asked for, as a batch does', () => {
    const one = planBatch([asking(1)], two).runs[0]!;
    const many = planBatch([asking(1), asking(2)], two).runs[0]!;
    expect(one.body.inputs.map((t) => t.name)).toEqual(['A', 'B']);
    expect(one.body.inputs.map((t) => t.name)).toEqual(many.body.inputs.map((t) => t.name));
    expect(one.body.outputNames).toEqual(['Y']);
    expect(one.body.outputNames).toEqual(many.body.outputNames);
    expect(one.batchSizes).toEqual([1]);
  });

  it('keeps a non-batching request\'s own input order and refuses a bad request alone', () => {
    const flat: ModelIo = { ...two, modelName: 'flat', batching: false };
    const plan = planBatch([asking(1)], flat);
    expect(plan.runs[0]?.body.inputs.map((t) => t.name)).toEqual(['B', 'A']);
    expect(plan.runs[0]?.batchSizes).toEqual([]);
    const refused = planBatch([{ inputs: [int32('A', 1)], requestedOutputs: [], parameters: {} }], two);
    expect(refused.runs).toEqual([]);
    expect(refused.rejected.get(0)?.message).toBe("model 'm2' needs input 'B', which the request does not have");
  });

  it('answers a one-request run with the outputs asked for, in the order asked', () => {
    const request = { ...asking(1), requestedOutputs: ['Y', 'X'] };
    const run = planBatch([request], two).runs[0]!;
    const wire = (name: string) => ({ name, datatype: 'INT32' as const, shape: [1, 2], data: new Uint8Array(8).buffer });
    const [result] = splitRunOutputs(run, [wire('X'), wire('Y')], [request], two);
    expect(result && 'outputs' in result ? result.outputs.map((o) => o.name) : undefined).toEqual(['Y', 'X']);
  });
});
