/**
 * A node's ModelInferResponse forwarded with the client's id put in (forwarded-response.ts): for
 * generated responses the bytes are those of encoding the response with the id (protobuf-es's, via
 * the node's encoder), and for messages laid out otherwise (fields out of order, an empty id field
 * after the outputs) the id the client decodes is the one put in, everything else unchanged.
 */
import { fromBinary, toBinary } from '@bufbuild/protobuf';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ModelInferResponseSchema } from '../gen/grpc_service_pb.js';
import { DATATYPES } from '../tensors/index.js';
import type { InferResponse } from '../tensors/index.js';
import { GRPC_PREFIX_BYTES } from './grpc-frame.js';
import { inferResponseToProto } from './infer-codec.js';
import { encodeForwardedInferResponseFramed, receivedResponseOf, rememberReceivedResponse } from './forwarded-response.js';
import { encodeInferResponseFramed } from './infer-response-encoder.js';

const concat = (chunks: readonly Uint8Array[]): Buffer => Buffer.concat(chunks.map((c) => Buffer.from(c.buffer, c.byteOffset, c.byteLength)));
/** The message of a framed answer, its prefix checked against the length. */
function unframe(chunks: readonly Uint8Array[], messageBytes: number): Buffer {
  const bytes = concat(chunks);
  expect(bytes.length).toBe(GRPC_PREFIX_BYTES + messageBytes);
  expect(bytes.readUInt32BE(1)).toBe(messageBytes);
  expect(bytes[0]).toBe(0);
  return bytes.subarray(GRPC_PREFIX_BYTES);
}

const response: fc.Arbitrary<InferResponse> = fc.record(
  {
    id: fc.constant(''),
    modelName: fc.string({ maxLength: 12 }),
    modelVersion: fc.constantFrom('', '1', '42'),
    outputs: fc.array(
      fc.record({
        name: fc.string({ maxLength: 10 }),
        datatype: fc.constantFrom(...DATATYPES),
        shape: fc.array(fc.nat(16), { maxLength: 3 }),
        data: fc.uint8Array({ maxLength: 300 }),
      }),
      { maxLength: 3 },
    ),
    parameters: fc.dictionary(fc.string({ maxLength: 8 }), fc.oneof(fc.boolean(), fc.string(), fc.integer()), { maxKeys: 3 }),
  },
  { requiredKeys: ['id', 'modelName', 'modelVersion', 'outputs'] },
);
const anyId = fc.oneof(fc.constant(''), fc.string({ maxLength: 20 }), fc.string({ unit: 'grapheme', maxLength: 6 }), fc.constant('x'.repeat(300)));

describe('encodeForwardedInferResponseFramed', () => {
  it("gives the bytes of the response encoded with the id, from the node encoder's message", () => {
    fc.assert(
      fc.property(response, anyId, fc.constantFrom(0, 64, 16 * 1024), (r, id, inlineBelow) => {
        const node = encodeInferResponseFramed(r);
        const message = concat(node.chunks).subarray(GRPC_PREFIX_BYTES);
        const forwarded = encodeForwardedInferResponseFramed(message, id, inlineBelow);
        expect(forwarded.chunks.length === 1).toBe(message.length < inlineBelow);
        const expected = Buffer.from(toBinary(ModelInferResponseSchema, inferResponseToProto({ ...r, id })));
        expect(unframe(forwarded.chunks, forwarded.messageBytes).equals(expected)).toBe(true);
      }),
      { numRuns: 300 },
    );
  });

  it('passes a large message uncopied: an empty id adds nothing, the tensor bytes are the received buffer', () => {
    const message = Buffer.from(toBinary(ModelInferResponseSchema, inferResponseToProto({ id: '', modelName: 'm', modelVersion: '1', outputs: [{ name: 'o', datatype: 'UINT8', shape: [3], data: new Uint8Array([1, 2, 3]) }] })));
    const plain = encodeForwardedInferResponseFramed(message, '', 0);
    expect(plain.chunks[1]).toBe(message);
    const withId = encodeForwardedInferResponseFramed(message, 'r-7', 0);
    for (const chunk of withId.chunks.slice(1)) if (chunk.length > 8) expect(chunk.buffer).toBe(message.buffer);
  });

  it('puts the id last when fields come out of order or an empty id field follows the outputs: the client reads the id put in', () => {
    const base: InferResponse = { id: '', modelName: 'm', modelVersion: '3', outputs: [{ name: 'o', datatype: 'INT8', shape: [2], data: new Uint8Array([9, 8]) }] };
    const fields = Buffer.from(toBinary(ModelInferResponseSchema, inferResponseToProto(base)));
    const emptyId = Buffer.from([0x1a, 0x00]); // field 3, length 0
    const layouts = {
      'id field after the outputs': Buffer.concat([fields, emptyId]),
      'id field first': Buffer.concat([emptyId, fields]),
      // outputs and raw contents (fields 5 and 6) ahead of the name and version (fields 1 and 2)
      'out of order': Buffer.concat([fields.subarray(6), fields.subarray(0, 6)]),
    };
    expect(fromBinary(ModelInferResponseSchema, layouts['out of order']).modelName).toBe('m');
    for (const [layout, message] of Object.entries(layouts).flatMap(([name, m]) => [[`${name}, copied`, m] as const, [`${name}, uncopied`, m] as const])) {
      const forwarded = encodeForwardedInferResponseFramed(message, 'client-id', layout.endsWith(', copied') ? 1024 : 0);
      const decoded = fromBinary(ModelInferResponseSchema, unframe(forwarded.chunks, forwarded.messageBytes));
      expect({ layout, id: decoded.id, name: decoded.modelName, version: decoded.modelVersion, raw: [...decoded.rawOutputContents[0]!] }).toEqual({
        layout,
        id: 'client-id',
        name: 'm',
        version: '3',
        raw: [9, 8],
      });
    }
  });

  it('remembers bytes by the decoded object itself: a copy of the response has none', () => {
    const r: InferResponse = { id: '', modelName: 'm', modelVersion: '', outputs: [] };
    const bytes = new Uint8Array([0x0a, 0x01, 0x6d]);
    rememberReceivedResponse(r, bytes);
    expect(receivedResponseOf(r)).toBe(bytes);
    expect(receivedResponseOf({ ...r })).toBeUndefined();
  });

  it('keeps the record on the response itself, unseen by keys, spreads and JSON (no weak table the scavenger would promote)', () => {
    const r: InferResponse = { id: 'x', modelName: 'm', modelVersion: '', outputs: [] };
    const keys = Object.keys(r);
    const json = JSON.stringify(r);
    const bytes = new Uint8Array([0x0a, 0x01, 0x6d]);
    rememberReceivedResponse(r, bytes);
    // One own symbol-keyed property, not enumerable: the WeakMap entry it replaces kept its value alive
    // through every minor collection (a promoted copy of each answer's bytes per miss).
    const symbols = Object.getOwnPropertySymbols(r);
    expect(symbols).toHaveLength(1);
    expect(Object.getOwnPropertyDescriptor(r, symbols[0]!)?.enumerable).toBe(false);
    expect(Object.keys(r)).toEqual(keys);
    expect(JSON.stringify(r)).toBe(json);
    expect(receivedResponseOf(Object.assign({}, r))).toBeUndefined();
    expect(receivedResponseOf(Object.create(r) as InferResponse)).toBeUndefined();
    // Remembered again (a response decoded twice), the later bytes win, as a WeakMap's set did.
    const later = new Uint8Array([0x0a, 0x01, 0x6e]);
    rememberReceivedResponse(r, later);
    expect(receivedResponseOf(r)).toBe(later);
  });

  it('takes no record on a frozen response, which is then encoded from its fields', () => {
    const r: InferResponse = Object.freeze({ id: '', modelName: 'm', modelVersion: '', outputs: [] });
    rememberReceivedResponse(r, new Uint8Array([0x0a, 0x01, 0x6d]));
    expect(receivedResponseOf(r)).toBeUndefined();
  });
});
