/**
 * Fuzzing of the gRPC decoders that the function-level fuzz (shared/src/grpc/infer-decoder.fuzz.test.ts,
 * requests only) does not reach:
 * - the node's gRPC server end to end over loopback (grpc-js framing, our deserializer, the handler,
 *   the status mapping): 1,000 ModelInfer calls with random, mutated and structurally random bytes
 *   (the decoder function itself gets 12,000 cases in the shared fuzz; the wire costs ~7 ms a call on a loaded 2-core box).
 *   Proves: every call ends with OK or a status that blames the caller (INVALID_ARGUMENT, NOT_FOUND,
 *   UNAVAILABLE…), never INTERNAL/UNKNOWN, never a hang, and the server still serves afterwards.
 * - the gateway's side, decoding a node's ModelInferResponse: 10,000 byte strings. Proves: a
 *   TesseraError or a self-consistent response, never a foreign exception (which would escape the
 *   transport's error mapping).
 */
import { create, toBinary } from '@bufbuild/protobuf';
import { Client, credentials, status, type ServiceError } from '@grpc/grpc-js';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TesseraError } from '../../shared/src/errors/index.js';
import { GRPCInferenceService, ModelInferRequestSchema, ModelInferResponseSchema } from '../../shared/src/gen/grpc_service_pb.js';
import { callUnary, clientServiceDefinition, decodeMessage, inferResponseFromProto } from '../../shared/src/grpc/index.js';
import { DATATYPES } from '../../shared/src/tensors/index.js';
import { FakeNodeCore, IDENTITY_MODEL } from '../../gpu-node/test/support/fake-node-core.js';
import { createGrpcServer, type GrpcServer } from '../../gpu-node/src/server/grpc/index.js';
import { withinMs } from './support/timing.js';

const svc = clientServiceDefinition(GRPCInferenceService);
/** ModelInfer with the request serializer replaced: the bytes go on the wire as they are. */
const rawModelInfer = { ...svc.modelInfer, requestSerialize: (b: Uint8Array) => Buffer.from(b) };

const dim = fc.oneof(fc.bigInt({ min: 0n, max: 4n }), fc.bigInt({ min: -(2n ** 63n), max: 2n ** 63n - 1n }));
const structured = fc
  .record({
    modelName: fc.oneof(fc.constant(IDENTITY_MODEL), fc.string({ maxLength: 8 })),
    modelVersion: fc.constantFrom('', '1', '-1', 'x'),
    inputs: fc.array(
      fc.record({
        name: fc.constantFrom('INPUT0', 'INPUT1', ''),
        datatype: fc.oneof(fc.constantFrom(...DATATYPES), fc.string({ maxLength: 5 })),
        shape: fc.array(dim, { maxLength: 4 }),
        contents: fc.option(fc.record({ fp32Contents: fc.array(fc.float(), { maxLength: 6 }), intContents: fc.array(fc.integer(), { maxLength: 6 }) }), { nil: undefined }),
      }),
      { maxLength: 3 },
    ),
    raw: fc.array(fc.uint8Array({ maxLength: 40 }), { maxLength: 3 }),
    outputs: fc.array(fc.record({ name: fc.constantFrom('OUTPUT0', 'x', '') }), { maxLength: 2 }),
  })
  .map((r) => toBinary(ModelInferRequestSchema, create(ModelInferRequestSchema, { ...r, rawInputContents: r.raw })));

const valid = toBinary(
  ModelInferRequestSchema,
  create(ModelInferRequestSchema, {
    modelName: IDENTITY_MODEL,
    inputs: [{ name: 'INPUT0', datatype: 'FP32', shape: [1n, 2n] }],
    rawInputContents: [new Uint8Array(new Float32Array([1, 2]).buffer)],
  }),
);
const mutated = fc
  .array(fc.record({ at: fc.nat(), byte: fc.integer({ min: 0, max: 255 }), cut: fc.boolean() }), { minLength: 1, maxLength: 4 })
  .map((edits) => {
    let bytes = Uint8Array.from(valid);
    for (const e of edits) {
      const at = e.at % Math.max(1, bytes.length);
      if (e.cut) bytes = bytes.slice(0, at);
      else bytes[at] = e.byte;
    }
    return bytes;
  });
const bytesArb = fc.oneof(fc.uint8Array({ maxLength: 120 }), { arbitrary: mutated, weight: 2 }, { arbitrary: structured, weight: 3 }, fc.constant(valid));

/** Statuses that say "your request" or "not now", never "our bug". */
const CALLER_STATUSES = new Set([status.OK, status.INVALID_ARGUMENT, status.NOT_FOUND, status.UNAVAILABLE, status.UNIMPLEMENTED,
  status.RESOURCE_EXHAUSTED, status.DEADLINE_EXCEEDED, status.FAILED_PRECONDITION, status.OUT_OF_RANGE]);

let server: GrpcServer;
let client: Client;
beforeAll(async () => {
  server = createGrpcServer(new FakeNodeCore());
  const { port } = await server.listen(0, '127.0.0.1');
  client = new Client(`127.0.0.1:${port}`, credentials.createInsecure());
});
afterAll(async () => {
  client.close();
  await server.close(1000);
});

describe("gRPC decoder fuzz: the node's server over loopback", () => {
  it('answers OK or a caller-blaming status to 1,000 ModelInfer byte strings, and keeps serving', async () => {
    const seen = new Map<number, number>();
    const cases = fc.sample(bytesArb, { numRuns: 1_000, seed: 42 });
    // 64 calls at a time, as a busy client would; each call must end well within 5 s.
    for (let i = 0; i < cases.length; i += 64) {
      await Promise.all(
        cases.slice(i, i + 64).map(async (bytes) => {
          const code = await withinMs(
            callUnary(client, rawModelInfer as never, bytes).then(() => status.OK, (e: ServiceError) => e.code),
            5000,
            `ModelInfer(${Buffer.from(bytes).toString('hex').slice(0, 80)})`,
          );
          seen.set(code, (seen.get(code) ?? 0) + 1);
          expect(CALLER_STATUSES.has(code), `status ${code} for ${Buffer.from(bytes).toString('hex').slice(0, 200)}`).toBe(true);
        }),
      );
    }
    expect(seen.get(status.OK) ?? 0).toBeGreaterThan(20);
    expect(seen.get(status.INVALID_ARGUMENT) ?? 0).toBeGreaterThan(100);
    expect(await callUnary(client, rawModelInfer as never, valid).then(() => 'ok')).toBe('ok');
  });
});

describe("gRPC decoder fuzz: the gateway's reading of a node's ModelInferResponse", () => {
  const response = toBinary(
    ModelInferResponseSchema,
    create(ModelInferResponseSchema, { modelName: 'm', id: 'x', outputs: [{ name: 'O', datatype: 'INT32', shape: [2n] }], rawOutputContents: [new Uint8Array(8)] }),
  );
  const responseBytes = fc.oneof(
    fc.uint8Array({ maxLength: 120 }),
    fc.array(fc.record({ at: fc.nat(), byte: fc.integer({ min: 0, max: 255 }) }), { minLength: 1, maxLength: 4 }).map((edits) => {
      const bytes = Uint8Array.from(response);
      for (const e of edits) bytes[e.at % bytes.length] = e.byte;
      return bytes;
    }),
  );
  it('yields a consistent response or a TesseraError for 10,000 byte strings, never a foreign exception', () => {
    const outcome = { ok: 0, rejected: 0 };
    fc.assert(
      fc.property(responseBytes, (bytes) => {
        try {
          const decoded = inferResponseFromProto(decodeMessage(ModelInferResponseSchema, bytes));
          for (const t of decoded.outputs) expect(t.data).toBeInstanceOf(Uint8Array);
          outcome.ok++;
        } catch (error) {
          if (!(error instanceof TesseraError)) throw error;
          outcome.rejected++;
        }
      }),
      { numRuns: 10_000 },
    );
    expect(outcome.ok).toBeGreaterThan(100);
    expect(outcome.rejected).toBeGreaterThan(100);
  });
});
