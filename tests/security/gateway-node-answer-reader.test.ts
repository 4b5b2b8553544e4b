/**
 * Issue 17: the gateway now reads a node's ModelInferResponse itself (infer-response-reader.ts). A
 * node is a stranger too (a bug, a wrong peer, a truncated frame): whatever bytes it sends, the reader
 * must give what protobuf-es's deserializer and inferResponseFromProto's checks give, the same answer or the same error, and never a
 * crash of another kind, a hang, or a view past the message's end.
 */
import { create, toBinary } from '@bufbuild/protobuf';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { readNodeAnswer } from '../../gateway/src/adapters/grpc/infer-response-reader.js';
import { ModelInferResponseSchema } from '../../shared/src/gen/grpc_service_pb.js';
import { decodeMessage, inferResponseFromProto } from '../../shared/src/grpc/index.js';

function settle(read: () => unknown): unknown {
  try {
    return read();
  } catch (error) {
    return { error: String(error) };
  }
}

const valid = toBinary(
  ModelInferResponseSchema,
  create(ModelInferResponseSchema, {
    modelName: 'simple',
    modelVersion: '1',
    id: 'r',
    outputs: [
      { name: 'OUTPUT0', datatype: 'INT32', shape: [1n, 4n] },
      { name: 'OUTPUT1', datatype: 'BYTES', shape: [2n] },
    ],
    rawOutputContents: [new Uint8Array(16), new Uint8Array([1, 0, 0, 0, 0x61, 0, 0, 0, 0])],
  }),
);

describe('a node answer read by the gateway', () => {
  it('agrees with the deserializer on random bytes and on every one-byte change of a real answer', () => {
    const check = (bytes: Uint8Array): void => {
      const ours = settle(() => readNodeAnswer(bytes));
      expect(ours).toEqual(settle(() => inferResponseFromProto(decodeMessage(ModelInferResponseSchema, bytes))));
      // Outputs are views inside the message, never past it.
      if (!('error' in (ours as object))) {
        for (const output of readNodeAnswer(bytes).outputs) expect(output.data.byteOffset + output.data.byteLength).toBeLessThanOrEqual(bytes.byteOffset + bytes.byteLength);
      }
    };
    fc.assert(fc.property(fc.uint8Array({ maxLength: 64 }), (bytes) => check(bytes)), { numRuns: 2000 });
    fc.assert(
      fc.property(fc.nat({ max: valid.length - 1 }), fc.integer({ min: 0, max: 255 }), (at, value) => {
        const bytes = valid.slice();
        bytes[at] = value;
        check(bytes);
      }),
      { numRuns: 2000 },
    );
  });
});
