/**
 * Issue 17: the gateway's gRPC front door reads a client's plain ModelInferRequest itself, in one pass
 * (shared/src/grpc/plain-infer-request.ts), before authentication. Whatever bytes a
 * client sends, the reader must give the request protobuf-es and inferRequestFromProto give, or
 * nothing (the reference path then answers, with its own error): never another request, a crash of
 * another kind, a hang, or an input's data past the message's end.
 */
import { create, toBinary } from '@bufbuild/protobuf';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { readPlainInferRequest } from '../../shared/src/grpc/plain-infer-request.js';
import { ModelInferRequestSchema } from '../../shared/src/gen/grpc_service_pb.js';
import { decodeMessage, inferRequestFromProto } from '../../shared/src/grpc/index.js';

const valid = toBinary(
  ModelInferRequestSchema,
  create(ModelInferRequestSchema, {
    modelName: 'simple',
    modelVersion: '1',
    id: 'r',
    inputs: [
      { name: 'INPUT0', datatype: 'INT32', shape: [1n, 4n] },
      { name: 'NAMES', datatype: 'BYTES', shape: [2n] },
    ],
    outputs: [{ name: 'OUTPUT0' }],
    rawInputContents: [new Uint8Array(16), new Uint8Array([1, 0, 0, 0, 0x61, 0, 0, 0, 0])],
  }),
);

function check(bytes: Uint8Array): void {
  const read = readPlainInferRequest(bytes);
  if (read === undefined) return;
  // Read here: the reference takes the same bytes and gives the same request.
  expect(read.request).toEqual(inferRequestFromProto(decodeMessage(ModelInferRequestSchema, bytes)));
  for (const input of read.request.inputs) expect(input.data.byteOffset + input.data.byteLength).toBeLessThanOrEqual(bytes.byteOffset + bytes.byteLength);
}

describe('a client request read by the gateway front door in one pass', () => {
  it('agrees with the reference on random bytes and on every one-byte change of a real request', () => {
    fc.assert(fc.property(fc.uint8Array({ maxLength: 64 }), (bytes) => check(bytes)), { numRuns: 2000 });
    fc.assert(
      fc.property(fc.nat({ max: valid.length - 1 }), fc.integer({ min: 0, max: 255 }), (at, value) => {
        const bytes = valid.slice();
        bytes[at] = value;
        check(bytes);
      }),
      { numRuns: 3000 },
    );
    // Cut anywhere: a whole message or nothing.
    for (let cut = 0; cut < valid.length; cut++) check(valid.subarray(0, cut));
    expect(readPlainInferRequest(valid)).toBeDefined();
  });
});
