/**
 * A ModelInferRequest with very many inputs, read before authentication by the gateway's gRPC front door and
 * by the node's ModelInfer (shared/src/grpc/plain-infer-request.ts, then inferRequestFromProto). Finding a
 * name given twice must stay linear in the inputs: a loop over the earlier names took 2.4 s of the event loop
 * for 40,000 inputs in an 0.9 MB message, and minutes within the default 64 MB bound. Here 120,000 inputs
 * must be read, and a repeat at the very end found, in under 12 s: a bound against a hang, not a speed target
 * (linear: ~0.3 s per read; the loop: ~20 s per read). The read is synchronous, so vitest's own timeout could
 * not stop it: the test times itself.
 */
import { create, toBinary } from '@bufbuild/protobuf';
import { describe, expect, it } from 'vitest';
import { ModelInferRequestSchema } from '../../shared/src/gen/grpc_service_pb.js';
import { decodeMessage, inferRequestFromProto, readPlainInferRequest } from '../../shared/src/grpc/index.js';

const COUNT = 120_000;

function manyInputs(lastName: string): Uint8Array {
  const names = Array.from({ length: COUNT }, (_, i) => (i === COUNT - 1 ? lastName : `i${i}`));
  return toBinary(
    ModelInferRequestSchema,
    create(ModelInferRequestSchema, {
      modelName: 'm',
      inputs: names.map((name) => ({ name, datatype: 'INT8', shape: [1n] })),
      rawInputContents: names.map(() => new Uint8Array(1)),
    }),
  );
}

describe('a request with 120,000 inputs (names checked for repeats in linear time)', () => {
  it('is read in one pass, and one name given twice at the end is found by both readers', () => {
    const distinctBytes = manyInputs(`i${COUNT - 1}`);
    const repeated = manyInputs('i0');
    const started = performance.now();
    const distinct = readPlainInferRequest(distinctBytes);
    expect(distinct?.request.inputs).toHaveLength(COUNT);
    // The one-pass reader declines it, and the reference path names the problem.
    expect(readPlainInferRequest(repeated)).toBeUndefined();
    expect(() => inferRequestFromProto(decodeMessage(ModelInferRequestSchema, repeated))).toThrow(/input 'i0' is given more than once/);
    expect(performance.now() - started).toBeLessThan(12_000);
  }, 60_000);
});
