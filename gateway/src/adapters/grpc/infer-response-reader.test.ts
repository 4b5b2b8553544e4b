import { create, toBinary, type MessageInitShape } from '@bufbuild/protobuf';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ModelInferResponseSchema } from '../../../../shared/src/gen/grpc_service_pb.js';
import { decodeMessage, inferResponseFromProto } from '../../../../shared/src/grpc/index.js';
import { readNodeAnswer } from './infer-response-reader.js';

type Init = MessageInitShape<typeof ModelInferResponseSchema>;

const reference = (bytes: Uint8Array) => decodeMessage(ModelInferResponseSchema, bytes);

/** The answer a read gives, or its error. */
function outcome(read: () => unknown): unknown {
  try {
    return read();
  } catch (error) {
    return { error: String(error) };
  }
}

/** The reader gives what protobuf-es then inferResponseFromProto give: the same answer or the same error. */
function sameAsReference(bytes: Uint8Array): void {
  expect(outcome(() => readNodeAnswer(bytes))).toEqual(outcome(() => inferResponseFromProto(reference(bytes))));
}

const text = fc.string({ unit: 'grapheme', maxLength: 12 });
const plainOutput = fc.record({ name: text, datatype: fc.constantFrom('INT32', 'FP32', 'BYTES', 'BOOL', 'FP16', 'nope'), shape: fc.array(fc.bigInt({ min: 0n, max: 6n }), { maxLength: 3 }) });

/** Raw contents that fit `outputs`' shapes (fixed-size datatypes: zeros; BYTES: empty elements), or not. */
function rawFor(outputs: readonly { datatype: string; shape: readonly bigint[] }[], fits: boolean, extra: number): Uint8Array[] {
  const sizes: Record<string, number> = { INT32: 4, FP32: 4, BOOL: 1, FP16: 2, BYTES: 4, nope: 1 };
  return outputs.map(({ datatype, shape }) => new Uint8Array(Number(shape.reduce((a, b) => a * b, 1n)) * sizes[datatype]! + (fits ? 0 : extra)));
}

describe('readNodeAnswer', () => {
  it('reads plain answers (names, id, outputs, raw contents) and their checks as the reference does', () => {
    fc.assert(
      fc.property(text, text, text, fc.array(plainOutput, { maxLength: 3 }), fc.boolean(), fc.integer({ min: 1, max: 5 }), (modelName, modelVersion, id, outputs, fits, extra) => {
        const bytes = toBinary(ModelInferResponseSchema, create(ModelInferResponseSchema, { modelName, modelVersion, id, outputs, rawOutputContents: rawFor(outputs, fits, extra) }));
        sameAsReference(bytes);
        sameAsReference(Buffer.from(bytes));
        const read = outcome(() => readNodeAnswer(Buffer.from(bytes)));
        // The outputs are plain views of the message, never Buffers.
        if (!('error' in (read as object))) for (const output of (read as ReturnType<typeof readNodeAnswer>).outputs) expect(Buffer.isBuffer(output.data)).toBe(false);
      }),
      { numRuns: 400 },
    );
  });

  it('gives the same answer when the same names come again (remembered strings)', () => {
    const init: Init = { modelName: 'simple', modelVersion: '1', outputs: [{ name: 'OUTPUT0', datatype: 'INT32', shape: [1n, 2n] }], rawOutputContents: [new Uint8Array(8)] };
    const first = toBinary(ModelInferResponseSchema, create(ModelInferResponseSchema, init));
    const other = toBinary(ModelInferResponseSchema, create(ModelInferResponseSchema, { ...init, modelName: 'simplf', outputs: [{ name: 'OUTPUT1', datatype: 'INT32', shape: [1n, 2n] }] }));
    for (const bytes of [first, first, other, first]) sameAsReference(bytes);
    expect(readNodeAnswer(other).modelName).toBe('simplf');
    expect(readNodeAnswer(first).outputs[0]!.name).toBe('OUTPUT0');
  });

  it('reads parameters, typed contents and odd dimensions as the reference does', () => {
    const cases: Init[] = [
      { modelName: 'm', parameters: { sequence_end: { parameterChoice: { case: 'boolParam', value: true } } }, outputs: [{ name: 'y', datatype: 'INT32', shape: [1n] }], rawOutputContents: [new Uint8Array(4)] },
      { modelName: 'm', outputs: [{ name: 'y', datatype: 'INT32', shape: [2n], contents: { intContents: [1, 2] } }] },
      { modelName: 'm', outputs: [{ name: 'y', datatype: 'INT32', shape: [-1n] }], rawOutputContents: [new Uint8Array(4)] },
      { modelName: 'm', outputs: [{ name: 'y', datatype: 'INT32', shape: [1n << 60n] }], rawOutputContents: [new Uint8Array(4)] },
      { modelName: 'm', outputs: [{ name: 'y', datatype: 'INT32', shape: [1n], parameters: { binary_data: { parameterChoice: { case: 'boolParam', value: true } } } }], rawOutputContents: [new Uint8Array(4)] },
    ];
    for (const init of cases) {
      const bytes = toBinary(ModelInferResponseSchema, create(ModelInferResponseSchema, init));
      sameAsReference(bytes);
    }
  });

  it('reads what an encoder may also write: unpacked dimensions, a repeated name (last wins); leaves bytes that are not UTF-8', () => {
    // outputs { name "y" datatype "INT32" shape 2 (unpacked) shape 1 }, model_name "a" then NAME, raw 8 bytes
    const output = [0x0a, 1, 0x79, 0x12, 5, ...Buffer.from('INT32'), 0x18, 2, 0x18, 1];
    const message = (name: number[]) => new Uint8Array([0x0a, 1, 0x61, 0x2a, output.length, ...output, 0x0a, name.length, ...name, 0x32, 8, 1, 0, 0, 0, 2, 0, 0, 0]);
    const plain = message([0x62, 0xc3, 0xa9]);
    sameAsReference(plain);
    expect(readNodeAnswer(plain).outputs[0]!.shape).toEqual([2, 1]);
    expect(readNodeAnswer(plain).modelName).toBe('b\u00e9');
    sameAsReference(message([0x62, 0xff]));
  });

  it('fails as the deserializer does on truncated or malformed bytes', () => {
    const good = toBinary(ModelInferResponseSchema, create(ModelInferResponseSchema, { modelName: 'm', id: 'r', outputs: [{ name: 'y', datatype: 'INT32', shape: [1n] }], rawOutputContents: [new Uint8Array(4)] }));
    for (let cut = 1; cut < good.length; cut++) sameAsReference(good.subarray(0, cut));
    sameAsReference(new Uint8Array([0x07]));
    sameAsReference(new Uint8Array([0x0a, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01]));
    expect(() => readNodeAnswer(good.subarray(0, 2))).toThrow(/malformed inference.ModelInferResponse/);
    // Checks after the read: a raw entry one byte short, a BYTES element cut, an output with no raw entry.
    const outputs = [{ name: 'y', datatype: 'INT32', shape: [1n] }, { name: 's', datatype: 'BYTES', shape: [1n] }];
    for (const rawOutputContents of [[new Uint8Array(3), new Uint8Array([1, 0, 0, 0, 0x61])], [new Uint8Array(4), new Uint8Array([2, 0, 0, 0, 0x61])], [new Uint8Array(4)]]) {
      const bytes = toBinary(ModelInferResponseSchema, create(ModelInferResponseSchema, { modelName: 'm', outputs, rawOutputContents }));
      sameAsReference(bytes);
      expect(() => readNodeAnswer(bytes)).toThrow(/malformed ModelInferResponse from model 'm'/);
    }
  });
});
