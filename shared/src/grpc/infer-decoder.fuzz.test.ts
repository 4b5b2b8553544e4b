/**
 * Property: whatever bytes arrive, decoding a ModelInferRequest either yields a request whose tensors
 * hold exactly what their shapes promise, or throws a TesseraError that blames the caller (never
 * INTERNAL, never a foreign exception). 12,000 cases: random bytes, mutated valid messages and
 * structurally random messages.
 */
import { create, toBinary } from '@bufbuild/protobuf';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { TesseraError } from '../errors/index.js';
import { ModelInferRequestSchema } from '../gen/grpc_service_pb.js';
import { DATATYPES } from '../tensors/index.js';
import { decodeMessage, inferRequestFromProto } from './index.js';

function decodeOutcome(bytes: Uint8Array): 'ok' | 'rejected' {
  try {
    const request = inferRequestFromProto(decodeMessage(ModelInferRequestSchema, bytes));
    for (const t of request.inputs) {
      expect(t.shape.every((d) => Number.isSafeInteger(d) && d >= 0)).toBe(true);
      expect(t.data).toBeInstanceOf(Uint8Array);
    }
    return 'ok';
  } catch (err) {
    if (!(err instanceof TesseraError)) throw err;
    expect(err.code).not.toBe('INTERNAL');
    return 'rejected';
  }
}

const datatype = fc.oneof(fc.constantFrom(...DATATYPES), fc.string({ maxLength: 6 }));
const dim = fc.oneof(fc.bigInt({ min: 0n, max: 4n }), fc.bigInt({ min: -(2n ** 63n), max: 2n ** 63n - 1n }));
const param = fc.oneof(
  fc.record({ case: fc.constant('boolParam' as const), value: fc.boolean() }),
  fc.record({ case: fc.constant('int64Param' as const), value: fc.bigInt({ min: -(2n ** 63n), max: 2n ** 63n - 1n }) }),
  fc.record({ case: fc.constant('uint64Param' as const), value: fc.bigInt({ min: 0n, max: 2n ** 64n - 1n }) }),
  fc.record({ case: fc.constant('doubleParam' as const), value: fc.double() }),
  fc.record({ case: fc.constant('stringParam' as const), value: fc.string() }),
  fc.constant({ case: undefined }),
);
const params = fc.dictionary(fc.constantFrom('priority', 'timeout', 'classification', 'shared_memory_region', 'x', '__proto__'), param.map((parameterChoice) => ({ parameterChoice })), { maxKeys: 3 });
const contents = fc.record(
  {
    boolContents: fc.array(fc.boolean(), { maxLength: 6 }),
    intContents: fc.array(fc.integer(), { maxLength: 6 }),
    int64Contents: fc.array(fc.bigInt({ min: -(2n ** 63n), max: 2n ** 63n - 1n }), { maxLength: 6 }),
    uintContents: fc.array(fc.nat({ max: 2 ** 32 - 1 }), { maxLength: 6 }),
    uint64Contents: fc.array(fc.bigInt({ min: 0n, max: 2n ** 64n - 1n }), { maxLength: 6 }),
    fp32Contents: fc.array(fc.float(), { maxLength: 6 }),
    fp64Contents: fc.array(fc.double(), { maxLength: 6 }),
    bytesContents: fc.array(fc.uint8Array({ maxLength: 5 }), { maxLength: 6 }),
  },
  { requiredKeys: [] },
);
const input = fc.record(
  {
    name: fc.constantFrom('a', 'b', ''),
    datatype,
    shape: fc.array(dim, { maxLength: 3 }),
    parameters: params,
    contents,
  },
  { requiredKeys: ['name', 'datatype', 'shape'] },
);
const request = fc.record({
  modelName: fc.string({ maxLength: 5 }),
  id: fc.string({ maxLength: 5 }),
  parameters: params,
  inputs: fc.array(input, { maxLength: 3 }),
  outputs: fc.array(fc.record({ name: fc.string({ maxLength: 3 }), parameters: params }), { maxLength: 2 }),
  rawInputContents: fc.array(fc.uint8Array({ maxLength: 40 }), { maxLength: 3 }),
});
// Well-formed requests (raw data sized to the shape), so the success path is exercised as much as the errors.
const fixedTypes = DATATYPES.filter((d) => d !== 'BYTES');
const sizeOf = (d: string): number => (d === 'BOOL' || d.endsWith('INT8') ? 1 : d.endsWith('16') ? 2 : d.endsWith('64') ? 8 : 4);
const consistent = fc
  .array(fc.tuple(fc.constantFrom(...fixedTypes), fc.array(fc.integer({ min: 0, max: 3 }), { maxLength: 3 })), { maxLength: 3 })
  .map((tensors) => ({
    modelName: 'm',
    inputs: tensors.map(([datatype, shape], i) => ({ name: `in${i}`, datatype, shape: shape.map(BigInt) })),
    rawInputContents: tensors.map(([datatype, shape]) => new Uint8Array(shape.reduce((a, b) => a * b, 1) * sizeOf(datatype))),
  }));
const encoded = fc
  .oneof(request, consistent)
  .map((init) => toBinary(ModelInferRequestSchema, create(ModelInferRequestSchema, init)));

describe('ModelInferRequest decoder fuzz', () => {
  it('never fails with INTERNAL on random bytes', () => {
    fc.assert(fc.property(fc.uint8Array({ maxLength: 200 }), (b) => void decodeOutcome(b)), { numRuns: 4000 });
  });

  it('never fails with INTERNAL on structurally random messages', () => {
    let accepted = 0;
    fc.assert(
      fc.property(encoded, (b) => {
        if (decodeOutcome(b) === 'ok') accepted++;
      }),
      { numRuns: 4000 },
    );
    // The generator must also reach the success path, or the property says little.
    expect(accepted).toBeGreaterThan(1000);
  });

  it('never fails with INTERNAL on mutated valid messages', () => {
    const mutated = fc
      .tuple(encoded, fc.array(fc.tuple(fc.nat(), fc.integer({ min: 0, max: 255 })), { minLength: 1, maxLength: 4 }), fc.nat())
      .map(([bytes, flips, cut]) => {
        const copy = bytes.slice();
        for (const [pos, value] of flips) if (copy.length > 0) copy[pos % copy.length] = value;
        return copy.subarray(0, copy.length === 0 ? 0 : copy.length - (cut % Math.min(copy.length, 8)));
      });
    fc.assert(fc.property(mutated, (b) => void decodeOutcome(b)), { numRuns: 4000 });
  });
});
