import { describe, expect, it } from 'vitest';
import { frameGrpcMessage } from '../../../../shared/src/grpc/index.js';
import { GrpcMessageSplitter } from './grpc-message-splitter.js';

const text = (messages: Buffer[]): string[] => messages.map((m) => m.toString('utf8'));

describe('GrpcMessageSplitter', () => {
  it('cuts messages out of chunks that split them anywhere, prefix included', () => {
    const wire = Buffer.concat([frameGrpcMessage(Buffer.from('first')), frameGrpcMessage(Buffer.from('')), frameGrpcMessage(Buffer.from('the third one'))]);
    for (let size = 1; size <= wire.length; size++) {
      const splitter = new GrpcMessageSplitter(1024);
      const out: Buffer[] = [];
      for (let at = 0; at < wire.length; at += size) out.push(...splitter.push(wire.subarray(at, at + size)));
      expect(text(out), `chunks of ${size}`).toEqual(['first', '', 'the third one']);
      expect(splitter.midMessage).toBe(false);
    }
  });

  it('says when the bytes end inside a message', () => {
    const splitter = new GrpcMessageSplitter(1024);
    expect(splitter.push(frameGrpcMessage(Buffer.from('cut short')).subarray(0, 8))).toEqual([]);
    expect(splitter.midMessage).toBe(true);
  });

  it('refuses a message over the limit as soon as its prefix arrives, and a compressed one', () => {
    const big = new GrpcMessageSplitter(10);
    expect(() => big.push(frameGrpcMessage(Buffer.alloc(11)).subarray(0, 5))).toThrow(/larger than max \(11 vs\. 10\)/);
    const compressed = frameGrpcMessage(Buffer.from('zip'));
    compressed[0] = 1;
    expect(() => new GrpcMessageSplitter(1024).push(compressed)).toThrow(/compressed/);
  });
});
