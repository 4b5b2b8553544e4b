import { describe, expect, it } from 'vitest';
import { buildRequests, parseModelMetadata, resolveShape, type ModelSpec } from './model-inputs.js';

const simple: ModelSpec = parseModelMetadata({
  name: 'simple',
  versions: ['1'],
  platform: 'onnxruntime_onnx',
  inputs: [
    { name: 'INPUT0', datatype: 'INT32', shape: [-1, 16] },
    { name: 'INPUT1', datatype: 'INT32', shape: [-1, 16] },
  ],
  outputs: [{ name: 'OUTPUT0', datatype: 'INT32', shape: [-1, 16] }],
});

const int32s = (data: Uint8Array): number[] => Array.from(new Int32Array(data.buffer, data.byteOffset, data.length / 4));

describe('model inputs', () => {
  it('makes -1 dimensions 1 unless --shape says otherwise, and checks --shape fits', () => {
    expect(resolveShape(simple.inputs[0]!, undefined)).toEqual([1, 16]);
    expect(resolveShape(simple.inputs[0]!, [4, 16])).toEqual([4, 16]);
    expect(() => resolveShape(simple.inputs[0]!, [4, 8])).toThrow(/does not fit/);
    expect(() => resolveShape(simple.inputs[0]!, [16])).toThrow(/does not fit/);
  });

  it('builds zero and seeded random requests', () => {
    const [zero] = buildRequests({ model: simple, shapes: {}, inputData: { kind: 'zero' }, seed: 1 });
    expect(zero?.inputs.map((t) => t.shape)).toEqual([[1, 16], [1, 16]]);
    expect(int32s(zero!.inputs[0]!.data)).toEqual(new Array(16).fill(0));
    const a = buildRequests({ model: simple, shapes: { INPUT1: [2, 16] }, inputData: { kind: 'random' }, seed: 5 });
    const b = buildRequests({ model: simple, shapes: { INPUT1: [2, 16] }, inputData: { kind: 'random' }, seed: 5 });
    expect(a[0]!.inputs[1]!.data.length).toBe(2 * 16 * 4);
    expect(int32s(a[0]!.inputs[0]!.data)).toEqual(int32s(b[0]!.inputs[0]!.data));
    expect(int32s(a[0]!.inputs[0]!.data).every((v) => v >= 0 && v < 100)).toBe(true);
  });

  it('covers other datatypes', () => {
    const model = parseModelMetadata({
      name: 'm',
      inputs: [
        { name: 'F', datatype: 'FP16', shape: [2] },
        { name: 'S', datatype: 'BYTES', shape: [3] },
        { name: 'B', datatype: 'BOOL', shape: [4] },
      ],
    });
    const [random] = buildRequests({ model, shapes: {}, inputData: { kind: 'random' }, seed: 1 });
    expect(random!.inputs.map((t) => t.data.length)).toEqual([4, 3 * (4 + 16), 4]);
    const [zero] = buildRequests({ model, shapes: {}, inputData: { kind: 'zero' }, seed: 1 });
    expect(zero!.inputs[1]!.data).toEqual(new Uint8Array(12));
  });

  it('reads perf_analyzer data files: flat, nested, content+shape, b64; one request per entry', () => {
    const b64 = Buffer.from(new Int32Array(16).fill(7).buffer).toString('base64');
    const requests = buildRequests({
      model: simple,
      shapes: {},
      inputData: { kind: 'file', path: 'd.json' },
      fileJson: {
        data: [
          { INPUT0: Array.from({ length: 16 }, (_, i) => i), INPUT1: { b64 } },
          { INPUT0: [[...new Array(16).fill(1)], [...new Array(16).fill(2)]].slice(0, 1), INPUT1: { content: new Array(32).fill(3), shape: [2, 16] } },
        ],
      },
      seed: 1,
    });
    expect(requests).toHaveLength(2);
    expect(int32s(requests[0]!.inputs[0]!.data)[15]).toBe(15);
    expect(int32s(requests[0]!.inputs[1]!.data)[0]).toBe(7);
    expect(requests[1]!.inputs[1]!.shape).toEqual([2, 16]);
  });

  it('explains bad data files and metadata', () => {
    const build = (fileJson: unknown) => () =>
      buildRequests({ model: simple, shapes: {}, inputData: { kind: 'file', path: 'd.json' }, fileJson, seed: 1 });
    expect(build({})).toThrow(/"data"/);
    expect(build({ data: [{ INPUT0: [1] }] })).toThrow(/data\[0\].INPUT0: 1 values/);
    expect(build({ data: [{ INPUT0: new Array(16).fill(0) }] })).toThrow(/INPUT1 is missing/);
    expect(() => buildRequests({ model: simple, shapes: { NOPE: [1] }, inputData: { kind: 'zero' }, seed: 1 })).toThrow(/NOPE/);
    expect(() => parseModelMetadata({ name: 'x', inputs: [{ name: 'a', datatype: 'FLOAT', shape: [1] }] })).toThrow();
  });
});
