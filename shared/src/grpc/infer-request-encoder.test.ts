/**
 * The hand-written ModelInferRequest encoder against the reference path (protobuf-es `toBinary` of
 * `inferRequestToProto`): for generated requests (every parameter type and range, unicode names,
 * empty and large tensors, requested outputs) both decode to equal messages, and what one refuses the
 * other refuses with the same error.
 */
import { fromBinary, toBinary } from '@bufbuild/protobuf';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ModelInferRequestSchema } from '../gen/grpc_service_pb.js';
import { DATATYPES } from '../tensors/index.js';
import type { InferRequest, ParameterValue } from '../tensors/index.js';
import { inferRequestToProto } from './infer-codec.js';
import { encodeInferRequestFramed } from './infer-request-encoder.js';

const concat = (chunks: readonly Uint8Array[]): Buffer => Buffer.concat(chunks.map((c) => Buffer.from(c.buffer, c.byteOffset, c.byteLength)));

const parameterValue: fc.Arbitrary<ParameterValue> = fc.oneof(
  fc.boolean(),
  fc.string({ unit: 'binary' }),
  fc.integer(),
  fc.maxSafeInteger(),
  fc.double(),
  fc.bigInt({ min: -(2n ** 64n), max: 2n ** 65n }),
);
const parameters = fc.dictionary(fc.oneof(fc.constantFrom('priority', 'timeout', 'sequence_id', ''), fc.string({ unit: 'binary', maxLength: 8 })), parameterValue, {
  maxKeys: 4,
});
const tensor = fc.record({
  name: fc.string({ unit: 'binary', maxLength: 10 }),
  datatype: fc.constantFrom(...DATATYPES),
  shape: fc.array(fc.oneof(fc.nat(16), fc.maxSafeInteger(), fc.integer({ min: -3, max: -1 })), { maxLength: 4 }),
  data: fc.oneof(fc.uint8Array({ maxLength: 64 }), fc.nat(40_000).map((n) => new Uint8Array(n).fill(7))),
});
const request: fc.Arbitrary<InferRequest> = fc.record(
  {
    id: fc.string({ unit: 'binary', maxLength: 12 }),
    modelName: fc.string({ maxLength: 12 }),
    modelVersion: fc.constantFrom('', '1', '42'),
    inputs: fc.array(tensor, { maxLength: 3 }),
    parameters,
    outputs: fc.array(fc.record({ name: fc.string({ maxLength: 8 }), classification: fc.nat(10) }, { requiredKeys: ['name'] }), { maxLength: 2 }),
  },
  { requiredKeys: ['id', 'modelName', 'inputs', 'parameters'] },
);

function outcome<T>(run: () => T): { value: T } | { error: string } {
  try {
    return { value: run() };
  } catch (error) {
    return { error: (error as Error).message };
  }
}

describe('ModelInferRequest encoder', () => {
  it('decodes to the same message as the protobuf-es path, framed with its length', () => {
    fc.assert(
      fc.property(request, fc.constantFrom(1, 16 * 1024, 1 << 30), (r, inlineBelow) => {
        const reference = outcome(() => toBinary(ModelInferRequestSchema, inferRequestToProto(r)));
        const ours = outcome(() => encodeInferRequestFramed(r, inlineBelow));
        if ('error' in reference || 'error' in ours) {
          expect('error' in ours && 'error' in reference).toBe(true);
          return;
        }
        const body = concat(ours.value.chunks);
        expect(body[0]).toBe(0);
        expect(body.readUInt32BE(1)).toBe(body.length - 5);
        expect(ours.value.messageBytes).toBe(body.length - 5);
        // Re-encoded by protobuf-es, both messages must give the same bytes (NaN parameters defeat `equals`).
        const canonical = (bytes: Uint8Array) => Buffer.from(toBinary(ModelInferRequestSchema, fromBinary(ModelInferRequestSchema, bytes)));
        expect(canonical(body.subarray(5)).equals(canonical(reference.value))).toBe(true);
      }),
      { numRuns: 2000 },
    );
  });

  it('passes large tensors as views of the caller’s memory, small ones copied', () => {
    const big = new Uint8Array(32 * 1024).fill(1);
    const small = new Uint8Array([1, 2, 3, 4]);
    const { chunks } = encodeInferRequestFramed({
      id: 'x',
      modelName: 'm',
      parameters: {},
      inputs: [
        { name: 'A', datatype: 'UINT8', shape: [big.length], data: big },
        { name: 'B', datatype: 'UINT8', shape: [4], data: small },
      ],
    });
    expect(chunks).toHaveLength(3);
    expect(chunks[1]).toBe(big);
    expect(chunks.includes(small)).toBe(false);
  });

  it('refuses a parameter that fits in no 64-bit type, as the protobuf-es path does', () => {
    const r: InferRequest = { id: '', modelName: 'm', inputs: [], parameters: { huge: 2n ** 64n } };
    expect(() => encodeInferRequestFramed(r)).toThrow("parameter 'huge' value 18446744073709551616 does not fit in 64 bits");
    expect(() => inferRequestToProto(r)).toThrow("parameter 'huge' value 18446744073709551616 does not fit in 64 bits");
  });
});
