import { describe, expect, it } from 'vitest';
import { UnaryMessageReader, frameGrpcMessage } from './grpc-frame.js';

const read = (chunks: readonly Buffer[], max = 1024): Buffer => {
  const reader = new UnaryMessageReader(max);
  for (const chunk of chunks) reader.push(chunk);
  return reader.message();
};

describe('gRPC message framing', () => {
  it('prefixes a message with flag 0 and its big-endian length', () => {
    expect([...frameGrpcMessage(new Uint8Array([7, 8, 9]))]).toEqual([0, 0, 0, 0, 3, 7, 8, 9]);
    expect([...frameGrpcMessage(new Uint8Array(0))]).toEqual([0, 0, 0, 0, 0]);
  });

  it('reassembles a message cut at every point, prefix included', () => {
    const framed = frameGrpcMessage(Buffer.from('hello world'));
    for (let cut = 1; cut < framed.length; cut++) {
      expect(read([framed.subarray(0, cut), framed.subarray(cut)]).toString()).toBe('hello world');
    }
    expect(read([...framed].map((byte) => Buffer.from([byte]))).toString()).toBe('hello world');
  });

  it('accepts an empty message (a protobuf with every field at its default)', () => {
    expect(read([frameGrpcMessage(new Uint8Array(0))]).length).toBe(0);
  });

  it('rejects what is not exactly one uncompressed message', () => {
    const framed = frameGrpcMessage(Buffer.from('abc'));
    expect(() => read([])).toThrow('the response carries no message');
    expect(() => read([framed.subarray(0, 3)])).toThrow('the response ends inside a message prefix (3 bytes)');
    expect(() => read([framed.subarray(0, 6)])).toThrow('the response message is truncated: 1 of 3 bytes');
    expect(() => read([framed, framed])).toThrow('the response carries more than one message for a unary call');
    const compressed = Buffer.from(framed);
    compressed[0] = 1;
    expect(() => read([compressed])).toThrow('the response message is compressed (flag 1), which was not asked for');
  });

  it('fails as soon as more than the limit arrives', () => {
    const reader = new UnaryMessageReader(4);
    reader.push(frameGrpcMessage(Buffer.from('abcd')));
    expect(() => reader.push(Buffer.from('x'))).toThrow('the response is larger than the 4-byte message limit');
  });
});
