import { create, fromBinary, toBinary } from '@bufbuild/protobuf';
import { describe, expect, it } from 'vitest';
import { InferParameterSchema, ModelInferRequestSchema, ModelInferRequest_InferInputTensorSchema } from '../gen/grpc_service_pb.js';
import { checkForwardableFraming } from './forwardable-framing.js';
import { inferRequestFromProto } from './infer-codec.js';
import { encodeForwardedInferRequestFramed } from './infer-request-encoder.js';

const clientMessage = () =>
  create(ModelInferRequestSchema, {
    modelName: 'm',
    modelVersion: '3',
    id: 'client-id',
    parameters: {
      sequence_id: create(InferParameterSchema, { parameterChoice: { case: 'stringParam', value: 'mine' } }),
      custom: create(InferParameterSchema, { parameterChoice: { case: 'boolParam', value: true } }),
    },
    inputs: [create(ModelInferRequest_InferInputTensorSchema, { name: 'INPUT0', datatype: 'BYTES', shape: [2n] })],
    rawInputContents: [Uint8Array.of(1, 0, 0, 0, 0x00, 1, 0, 0, 0, 0xff)],
  });

const concat = (chunks: readonly Uint8Array[]): Uint8Array => Uint8Array.from(chunks.flatMap((c) => [...c]));

describe('encodeForwardedInferRequestFramed', () => {
  it('sends the client message untouched with the gateway\'s version, id and parameters appended, which the node reads', () => {
    const wire = toBinary(ModelInferRequestSchema, clientMessage());
    const decoded = inferRequestFromProto(fromBinary(ModelInferRequestSchema, wire));
    const routed = { ...decoded, id: '', modelVersion: '', parameters: { ...decoded.parameters, sequence_id: 42, priority: 2 } };
    const encoded = encodeForwardedInferRequestFramed(wire, routed);
    // The client's bytes go out as they came, not copied into a new buffer.
    expect(encoded.chunks[1]).toBe(wire);
    const framed = concat(encoded.chunks);
    expect(framed.length).toBe(5 + encoded.messageBytes);
    expect(new DataView(framed.buffer).getUint32(1)).toBe(encoded.messageBytes);
    const seen = fromBinary(ModelInferRequestSchema, framed.subarray(5));
    expect(seen.id).toBe('');
    expect(seen.modelVersion).toBe('');
    expect(seen.parameters.sequence_id?.parameterChoice).toEqual({ case: 'int64Param', value: 42n });
    expect(seen.parameters.priority?.parameterChoice).toEqual({ case: 'int64Param', value: 2n });
    expect(seen.parameters.custom?.parameterChoice).toEqual({ case: 'boolParam', value: true });
    expect(seen.inputs).toEqual(clientMessage().inputs);
    expect([...seen.rawInputContents[0]!]).toEqual([1, 0, 0, 0, 0x00, 1, 0, 0, 0, 0xff]);
  });
});

describe('checkForwardableFraming', () => {
  const valid = toBinary(ModelInferRequestSchema, clientMessage());

  it('accepts a whole message', () => {
    expect(() => checkForwardableFraming(valid)).not.toThrow();
    expect(() => checkForwardableFraming(new Uint8Array())).not.toThrow();
  });

  it('refuses a last field whose length runs past the end: appended fields would become its contents', () => {
    const routed = { ...inferRequestFromProto(fromBinary(ModelInferRequestSchema, valid)), parameters: { sequence_id: 42 } };
    const tailBytes = encodeForwardedInferRequestFramed(valid, routed).chunks[2]!.length;
    expect(tailBytes).toBeLessThan(128);
    // raw_input_contents (field 7) claiming exactly the bytes the gateway will append.
    const lying = Uint8Array.of(...valid, 0x3a, tailBytes);
    expect(() => checkForwardableFraming(lying)).toThrow(/claims \d+ bytes past the end/);
    // The attack it stops: forwarded anyway, the node would read the gateway's fields as tensor
    // bytes and keep the client's own sequence_id.
    const swallowed = fromBinary(ModelInferRequestSchema, concat(encodeForwardedInferRequestFramed(lying, routed).chunks).subarray(5));
    expect(swallowed.parameters.sequence_id?.parameterChoice).toEqual({ case: 'stringParam', value: 'mine' });
  });

  it('refuses groups, truncated varints and fixed fields past the end', () => {
    expect(() => checkForwardableFraming(Uint8Array.of(...valid, (99 << 3) | 3))).toThrow(/groups are not accepted/);
    expect(() => checkForwardableFraming(Uint8Array.of(...valid, (99 << 3) | 4))).toThrow(/groups are not accepted/);
    expect(() => checkForwardableFraming(Uint8Array.of(...valid, 0x08, 0x80))).toThrow(/truncated varint/);
    expect(() => checkForwardableFraming(Uint8Array.of(...valid, (9 << 3) | 1, 1, 2))).toThrow(/past the end/);
    expect(() => checkForwardableFraming(Uint8Array.of(0x00, 0x01))).toThrow(/field number 0/);
    expect(() => checkForwardableFraming(Uint8Array.of(0x08, ...new Array(11).fill(0xff)))).toThrow(/longer than 10 bytes/);
  });
});
