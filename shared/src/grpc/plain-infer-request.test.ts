import { create, toBinary, type MessageInitShape } from '@bufbuild/protobuf';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ModelInferRequestSchema } from '../gen/grpc_service_pb.js';
import { inferRequestFromProto } from './infer-codec.js';
import { decodeMessage } from './service-definition.js';
import { readPlainInferRequest } from './plain-infer-request.js';

type Init = MessageInitShape<typeof ModelInferRequestSchema>;

/** The reference: protobuf-es then inferRequestFromProto, or its error. */
function reference(bytes: Uint8Array): { ok: true; value: unknown; msg: { modelName: string; modelVersion: string; id: string } } | { ok: false; error: string } {
  try {
    const msg = decodeMessage(ModelInferRequestSchema, bytes);
    return { ok: true, value: inferRequestFromProto(msg), msg };
  } catch (error) {
    return { ok: false, error: String(error) };
  }
}

/** The reader gives the reference's request or nothing (then the reference path runs); never another answer. */
function agrees(bytes: Uint8Array): ReturnType<typeof readPlainInferRequest> {
  const read = readPlainInferRequest(bytes);
  const expected = reference(bytes);
  if (read !== undefined) {
    expect(expected.ok).toBe(true);
    if (expected.ok) {
      expect(read.request).toEqual(expected.value);
      expect({ modelName: read.modelName, modelVersion: read.modelVersion, id: read.id }).toEqual({ modelName: expected.msg.modelName, modelVersion: expected.msg.modelVersion, id: expected.msg.id });
    }
    for (const input of read.request.inputs) expect(Buffer.isBuffer(input.data)).toBe(false);
  }
  return read;
}

const sizes: Record<string, number> = { INT32: 4, FP32: 4, BOOL: 1, FP16: 2, BF16: 2, INT64: 8, BYTES: 4 };
const input = fc.record({ name: fc.constantFrom('INPUT0', 'INPUT1', 'x', 'é'), datatype: fc.constantFrom('INT32', 'FP32', 'BOOL', 'FP16', 'BF16', 'INT64', 'BYTES'), shape: fc.array(fc.bigInt({ min: 0n, max: 5n }), { maxLength: 3 }) });
const text = fc.string({ maxLength: 10 });

describe('readPlainInferRequest', () => {
  it('reads plain requests as protobuf-es and inferRequestFromProto do, and leaves every failing one to them', () => {
    fc.assert(
      fc.property(text, fc.constantFrom('', '1', '007', 'x'), text, fc.array(input, { maxLength: 3 }), fc.array(fc.constantFrom('OUTPUT0', 'OUTPUT1'), { maxLength: 2 }), fc.integer({ min: -1, max: 2 }), (modelName, modelVersion, id, inputs, outputs, skew) => {
        // Raw entries that fill each shape (BYTES: empty elements), one short or long now and then, one missing or extra.
        const raw = inputs.map(({ datatype, shape }, i) => new Uint8Array(Math.max(0, Number(shape.reduce((a, b) => a * b, 1n)) * sizes[datatype]! + (i === 0 && skew !== 0 ? skew : 0))));
        const rawOutputs = skew === 2 ? [...raw, new Uint8Array(4)] : raw;
        const init: Init = { modelName, modelVersion, id, inputs, outputs: outputs.map((name) => ({ name })), rawInputContents: rawOutputs };
        const bytes = toBinary(ModelInferRequestSchema, create(ModelInferRequestSchema, init));
        const read = agrees(Buffer.from(bytes));
        // Every plain request the reference takes is read here (names are ASCII or UTF-8, no parameters).
        if (reference(bytes).ok) expect(read).toBeDefined();
      }),
      { numRuns: 500 },
    );
  });

  it('leaves parameters, typed contents and odd layouts to the reference path', () => {
    const cases: Init[] = [
      { modelName: 'm', parameters: { priority: { parameterChoice: { case: 'uint64Param', value: 1n } } }, inputs: [{ name: 'x', datatype: 'INT32', shape: [1n] }], rawInputContents: [new Uint8Array(4)] },
      { modelName: 'm', inputs: [{ name: 'x', datatype: 'INT32', shape: [2n], contents: { intContents: [1, 2] } }] },
      { modelName: 'm', inputs: [{ name: 'x', datatype: 'INT32', shape: [1n], parameters: { shared_memory_region: { parameterChoice: { case: 'stringParam', value: 'r' } } } }], rawInputContents: [new Uint8Array(4)] },
      { modelName: 'm', inputs: [{ name: 'x', datatype: 'INT32', shape: [-1n] }], rawInputContents: [new Uint8Array(4)] },
      { modelName: 'm', outputs: [{ name: 'y', parameters: { classification: { parameterChoice: { case: 'int64Param', value: 2n } } } }] },
      { modelName: 'm', inputs: [{ name: 'x', datatype: 'INT32', shape: [1n] }, { name: 'x', datatype: 'INT32', shape: [1n] }], rawInputContents: [new Uint8Array(4), new Uint8Array(4)] },
      { modelName: 'm', inputs: [{ name: 's', datatype: 'BYTES', shape: [1n] }], rawInputContents: [Uint8Array.of(5, 0, 0, 0, 0x61)] },
      { modelName: 'm', inputs: [{ name: 'x', datatype: 'FP8', shape: [1n] }], rawInputContents: [new Uint8Array(1)] },
    ];
    for (const init of cases) {
      const bytes = toBinary(ModelInferRequestSchema, create(ModelInferRequestSchema, init));
      expect(agrees(bytes), JSON.stringify(init, (_, v: unknown) => (typeof v === 'bigint' ? String(v) : v))).toBeUndefined();
    }
  });

  it('gives the same request when the same names come again (remembered strings), and another when they change', () => {
    const init: Init = { modelName: 'simple', inputs: [{ name: 'INPUT0', datatype: 'INT32', shape: [1n, 2n] }], outputs: [{ name: 'OUTPUT0' }], rawInputContents: [new Uint8Array(8)] };
    const first = toBinary(ModelInferRequestSchema, create(ModelInferRequestSchema, init));
    const other = toBinary(ModelInferRequestSchema, create(ModelInferRequestSchema, { ...init, modelName: 'simplf', inputs: [{ name: 'INPUT1', datatype: 'INT32', shape: [1n, 2n] }], outputs: [{ name: 'OUTPUT1' }] }));
    for (const bytes of [first, first, other, first]) expect(agrees(bytes)).toBeDefined();
    expect(readPlainInferRequest(other)!.request.inputs[0]!.name).toBe('INPUT1');
    expect(readPlainInferRequest(other)!.request.outputs).toEqual([{ name: 'OUTPUT1' }]);
  });
});
