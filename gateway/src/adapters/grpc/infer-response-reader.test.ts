import { create, toBinary, type MessageInitShape } from '@bufbuild/protobuf';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ModelInferResponseSchema } from '../../../../shared/src/gen/grpc_service_pb.js';
import { decodeMessage, inferResponseFromProto } from '../../../../shared/src/grpc/index.js';
import { readInferResponse } from './infer-response-reader.js';

type Init = MessageInitShape<typeof ModelInferResponseSchema>;

const reference = (bytes: Uint8Array) => decodeMessage(ModelInferResponseSchema, bytes);

/** What inferResponseFromProto reads, or the error either path throws. */
function outcome(read: () => unknown): unknown {
  try {
    return inferResponseFromProto(read() as ReturnType<typeof reference>);
  } catch (error) {
    return { error: String(error) };
  }
}

function sameAsReference(bytes: Uint8Array): void {
  let expected: unknown;
  try {
    expected = outcome(() => reference(bytes));
  } catch (error) {
    expected = { error: String(error) };
  }
  let actual: unknown;
  try {
    actual = outcome(() => readInferResponse(bytes));
  } catch (error) {
    actual = { error: String(error) };
  }
  expect(actual).toEqual(expected);
}

const text = fc.string({ unit: 'grapheme', maxLength: 12 });
const plainOutput = fc.record({ name: text, datatype: fc.constantFrom('INT32', 'FP32', 'BYTES', 'BOOL', 'FP16', 'nope'), shape: fc.array(fc.bigInt({ min: 0n, max: 6n }), { maxLength: 3 }) });

describe('readInferResponse', () => {
  it('reads plain answers (names, id, outputs, raw contents) itself, as the deserializer does', () => {
    fc.assert(
      fc.property(text, text, text, fc.array(plainOutput, { maxLength: 3 }), fc.array(fc.uint8Array({ maxLength: 40 }), { maxLength: 3 }), (modelName, modelVersion, id, outputs, raw) => {
        const bytes = toBinary(ModelInferResponseSchema, create(ModelInferResponseSchema, { modelName, modelVersion, id, outputs, rawOutputContents: raw }));
        const read = readInferResponse(Buffer.from(bytes));
        // Read here, not by protobuf-es (whose messages carry $typeName).
        expect('$typeName' in read).toBe(false);
        sameAsReference(bytes);
        for (const entry of read.rawOutputContents) expect(Buffer.isBuffer(entry)).toBe(false);
      }),
      { numRuns: 300 },
    );
  });

  it('leaves parameters, typed contents and odd dimensions to protobuf-es, with the same result', () => {
    const cases: Init[] = [
      { modelName: 'm', parameters: { sequence_end: { parameterChoice: { case: 'boolParam', value: true } } }, outputs: [{ name: 'y', datatype: 'INT32', shape: [1n] }], rawOutputContents: [new Uint8Array(4)] },
      { modelName: 'm', outputs: [{ name: 'y', datatype: 'INT32', shape: [2n], contents: { intContents: [1, 2] } }] },
      { modelName: 'm', outputs: [{ name: 'y', datatype: 'INT32', shape: [-1n] }], rawOutputContents: [new Uint8Array(4)] },
      { modelName: 'm', outputs: [{ name: 'y', datatype: 'INT32', shape: [1n << 60n] }], rawOutputContents: [new Uint8Array(4)] },
      { modelName: 'm', outputs: [{ name: 'y', datatype: 'INT32', shape: [1n], parameters: { binary_data: { parameterChoice: { case: 'boolParam', value: true } } } }], rawOutputContents: [new Uint8Array(4)] },
    ];
    for (const init of cases) {
      const bytes = toBinary(ModelInferResponseSchema, create(ModelInferResponseSchema, init));
      expect('$typeName' in readInferResponse(bytes)).toBe(true);
      sameAsReference(bytes);
    }
  });

  it('reads what an encoder may also write: unpacked dimensions, a repeated name (last wins); leaves bytes that are not UTF-8', () => {
    // outputs { name "y" datatype "INT32" shape 2 (unpacked) shape 1 }, model_name "a" then NAME, raw 8 bytes
    const output = [0x0a, 1, 0x79, 0x12, 5, ...Buffer.from('INT32'), 0x18, 2, 0x18, 1];
    const message = (name: number[]) => new Uint8Array([0x0a, 1, 0x61, 0x2a, output.length, ...output, 0x0a, name.length, ...name, 0x32, 8, 1, 0, 0, 0, 2, 0, 0, 0]);
    const plain = message([0x62, 0xc3, 0xa9]);
    expect('$typeName' in readInferResponse(plain)).toBe(false);
    sameAsReference(plain);
    expect(readInferResponse(plain).outputs[0]!.shape).toEqual([2n, 1n]);
    expect(readInferResponse(plain).modelName).toBe('b\u00e9');
    sameAsReference(message([0x62, 0xff]));
  });

  it('fails as the deserializer does on truncated or malformed bytes', () => {
    const good = toBinary(ModelInferResponseSchema, create(ModelInferResponseSchema, { modelName: 'm', id: 'r', outputs: [{ name: 'y', datatype: 'INT32', shape: [1n] }], rawOutputContents: [new Uint8Array(4)] }));
    for (let cut = 1; cut < good.length; cut++) sameAsReference(good.subarray(0, cut));
    sameAsReference(new Uint8Array([0x07]));
    sameAsReference(new Uint8Array([0x0a, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01]));
    expect(() => readInferResponse(good.subarray(0, 2))).toThrow(/malformed inference.ModelInferResponse/);
  });
});
