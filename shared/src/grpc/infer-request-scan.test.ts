/**
 * The plain ModelInferRequest scan against protobuf-es: whenever the scan accepts bytes, fromBinary
 * accepts them too and yields an equal message; decodeModelInferRequest always answers what
 * decodeMessage answers (the same message, or the same error). Bytes: plain messages (what the scan
 * is for), messages with every field, random bytes, and mutated or truncated plain messages.
 */
import { create, toBinary } from '@bufbuild/protobuf';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ModelInferRequestSchema } from '../gen/grpc_service_pb.js';
import { DATATYPES } from '../tensors/index.js';
import { decodeModelInferRequest, scanPlainInferRequest } from './infer-request-scan.js';
import { decodeMessage } from './service-definition.js';

const text = fc.oneof(fc.string({ maxLength: 6 }), fc.string({ unit: 'binary', maxLength: 4 }));
const plain = fc.record({
  modelName: text,
  modelVersion: fc.constantFrom('', '1', '7'),
  id: text,
  inputs: fc.array(
    fc.record({
      name: text,
      datatype: fc.oneof(fc.constantFrom(...DATATYPES), text),
      shape: fc.array(fc.oneof(fc.bigInt({ min: 0n, max: 70_000n }), fc.bigInt({ min: -(2n ** 63n), max: 2n ** 63n - 1n })), { maxLength: 3 }),
    }),
    { maxLength: 3 },
  ),
  outputs: fc.array(fc.record({ name: text }), { maxLength: 2 }),
  rawInputContents: fc.array(fc.uint8Array({ maxLength: 300 }), { maxLength: 3 }),
});
const withExtras = fc.record({
  modelName: text,
  parameters: fc.dictionary(fc.string({ maxLength: 3 }), fc.constant({ parameterChoice: { case: 'boolParam' as const, value: true } }), { maxKeys: 1 }),
  inputs: fc.array(fc.record({ name: text, datatype: text, contents: fc.record({ intContents: fc.array(fc.integer(), { maxLength: 3 }) }) }), { maxLength: 2 }),
});
const encode = (init: object): Uint8Array => toBinary(ModelInferRequestSchema, create(ModelInferRequestSchema, init));
const messages = fc.oneof(plain.map(encode), withExtras.map(encode));
const mutated = fc
  .tuple(plain.map(encode), fc.array(fc.tuple(fc.nat(), fc.integer({ min: 0, max: 255 })), { maxLength: 3 }), fc.nat(12))
  .map(([bytes, flips, cut]) => {
    const copy = bytes.slice();
    for (const [pos, value] of flips) if (copy.length > 0) copy[pos % copy.length] = value;
    return copy.subarray(0, Math.max(0, copy.length - cut));
  });
// What clients send on the hot path: ASCII text, dimensions >= 0.
const typical = fc
  .record({
    modelName: fc.string({ maxLength: 6 }),
    id: fc.string({ maxLength: 6 }),
    inputs: fc.array(fc.record({ name: fc.string({ maxLength: 4 }), datatype: fc.constantFrom(...DATATYPES), shape: fc.array(fc.bigInt({ min: 0n, max: 2n ** 52n }), { maxLength: 3 }) }), { maxLength: 3 }),
    outputs: fc.array(fc.record({ name: fc.string({ maxLength: 4 }) }), { maxLength: 2 }),
    rawInputContents: fc.array(fc.uint8Array({ maxLength: 64 }), { maxLength: 3 }),
  })
  .map(encode);
const anyBytes = fc.oneof(typical, messages, mutated, fc.uint8Array({ maxLength: 120 }));

function outcome(run: () => unknown): { value: unknown } | { error: string } {
  try {
    return { value: run() };
  } catch (error) {
    return { error: (error as Error).message };
  }
}

describe('plain ModelInferRequest scan', () => {
  it('accepts only what protobuf-es accepts, and decodes it to an equal message', () => {
    let scanned = 0;
    fc.assert(
      fc.property(anyBytes, (bytes) => {
        const fast = scanPlainInferRequest(bytes);
        if (fast === undefined) return;
        scanned++;
        expect(fast).toEqual(decodeMessage(ModelInferRequestSchema, bytes));
      }),
      { numRuns: 5000 },
    );
    // The generators must reach the scan's success path often, or the property says little.
    expect(scanned).toBeGreaterThan(1000);
  });

  it('gives up on what it does not handle, leaving it to protobuf-es', () => {
    expect(scanPlainInferRequest(encode({ modelName: 'm', parameters: { p: { parameterChoice: { case: 'boolParam', value: true } } } }))).toBeUndefined();
    expect(scanPlainInferRequest(encode({ modelName: 'mé' }))).toBeUndefined();
    expect(scanPlainInferRequest(encode({ inputs: [{ name: 'a', shape: [-1n] }] }))).toBeUndefined();
    expect(scanPlainInferRequest(encode({ modelName: 'm', inputs: [{ name: 'a', shape: [2n] }] }))).toBeDefined();
  });

  it('decodeModelInferRequest answers exactly what decodeMessage answers', () => {
    fc.assert(
      fc.property(anyBytes, (bytes) => {
        const ours = outcome(() => decodeModelInferRequest(Buffer.from(bytes)));
        const reference = outcome(() => decodeMessage(ModelInferRequestSchema, bytes));
        expect(ours).toEqual(reference);
      }),
      { numRuns: 3000 },
    );
  });
});
