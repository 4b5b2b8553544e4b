/**
 * The hand-written ModelInferResponse encoder against the reference path (protobuf-es `toBinary` of
 * `inferResponseToProto`): for generated responses (every parameter type, unicode names, empty and
 * large outputs, negative dimensions) the bytes are the same, and what one refuses the other refuses.
 */
import { toBinary } from '@bufbuild/protobuf';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ModelInferResponseSchema } from '../gen/grpc_service_pb.js';
import { DATATYPES } from '../tensors/index.js';
import type { InferResponse, ParameterValue } from '../tensors/index.js';
import { GRPC_PREFIX_BYTES } from './grpc-frame.js';
import { inferResponseToProto } from './infer-codec.js';
import { encodeInferResponseFramed } from './infer-response-encoder.js';

const concat = (chunks: readonly Uint8Array[]): Buffer => Buffer.concat(chunks.map((c) => Buffer.from(c.buffer, c.byteOffset, c.byteLength)));

const parameterValue: fc.Arbitrary<ParameterValue> = fc.oneof(
  fc.boolean(),
  fc.string({ unit: 'binary' }),
  fc.integer(),
  fc.maxSafeInteger(),
  fc.double(),
  fc.bigInt({ min: -(2n ** 64n), max: 2n ** 65n }),
);
const output = fc.record({
  name: fc.string({ unit: 'binary', maxLength: 10 }),
  datatype: fc.constantFrom(...DATATYPES),
  shape: fc.array(fc.oneof(fc.nat(16), fc.maxSafeInteger(), fc.integer({ min: -3, max: -1 })), { maxLength: 4 }),
  data: fc.oneof(fc.uint8Array({ maxLength: 64 }), fc.nat(40_000).map((n) => new Uint8Array(n).fill(7))),
});
const response: fc.Arbitrary<InferResponse> = fc.record(
  {
    id: fc.string({ unit: 'binary', maxLength: 12 }),
    modelName: fc.string({ maxLength: 12 }),
    modelVersion: fc.constantFrom('', '1', '42'),
    outputs: fc.array(output, { maxLength: 3 }),
    parameters: fc.dictionary(fc.string({ unit: 'binary', maxLength: 8 }), parameterValue, { maxKeys: 3 }),
  },
  { requiredKeys: ['id', 'modelName', 'modelVersion', 'outputs'] },
);

function outcome<T>(run: () => T): { value: T } | { error: string } {
  try {
    return { value: run() };
  } catch (error) {
    return { error: (error as Error).message };
  }
}

describe('ModelInferResponse encoder', () => {
  it('writes the bytes of the protobuf-es path, framed with its length', () => {
    fc.assert(
      fc.property(response, fc.constantFrom(1, 16 * 1024, 1 << 30), (r, inlineBelow) => {
        const reference = outcome(() => toBinary(ModelInferResponseSchema, inferResponseToProto(r)));
        const ours = outcome(() => encodeInferResponseFramed(r, inlineBelow));
        if ('error' in reference || 'error' in ours) {
          expect('error' in ours).toBe('error' in reference);
          return;
        }
        const framed = concat(ours.value.chunks);
        expect(ours.value.messageBytes).toBe(reference.value.length);
        expect(framed.readUInt32BE(1)).toBe(reference.value.length);
        expect(framed[0]).toBe(0);
        expect(Buffer.compare(framed.subarray(GRPC_PREFIX_BYTES), Buffer.from(reference.value))).toBe(0);
      }),
      { numRuns: 300 },
    );
  });

  it('passes a large output as a view of its data (no copy), a small one inside the head', () => {
    const big = new Uint8Array(20_000).fill(3);
    const small = new Uint8Array(8).fill(1);
    const encoded = encodeInferResponseFramed({
      id: 'x',
      modelName: 'm',
      modelVersion: '1',
      outputs: [
        { name: 'A', datatype: 'UINT8', shape: [8], data: small },
        { name: 'B', datatype: 'UINT8', shape: [20_000], data: big },
      ],
    });
    expect(encoded.chunks).toContain(big);
    expect(encoded.chunks).not.toContain(small);
  });
});
