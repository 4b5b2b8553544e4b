import { describe, expect, it } from 'vitest';
import { HpackDecoder } from './hpack-decoder.js';
import { requestBlock } from './client-stream.js';

const FIXED = { 'content-type': 'application/grpc', te: 'trailers' } as const;

function decoded(block: Buffer): Array<readonly [string, string]> {
  return new HpackDecoder(64 * 1024).decode(block).fields;
}

describe('requestBlock', () => {
  it('writes the per-call field straight after the cached prefix: the fields and list size of the whole request', () => {
    for (const value of ['1m', '99999999n', '30S']) {
      const { block, listBytes } = requestBlock('10.0.0.7:8001', '/inference.GRPCInferenceService/ModelInfer', FIXED, 'grpc-timeout', value);
      const fields = decoded(block);
      expect(fields).toEqual([
        [':method', 'POST'],
        [':scheme', 'http'],
        [':authority', '10.0.0.7:8001'],
        [':path', '/inference.GRPCInferenceService/ModelInfer'],
        ['content-type', 'application/grpc'],
        ['te', 'trailers'],
        ['grpc-timeout', value],
      ]);
      // RFC 9113 §6.5.2: every field's name and value lengths plus 32.
      expect(listBytes).toBe(fields.reduce((sum, [name, text]) => sum + name.length + text.length + 32, 0));
    }
  });

  it('puts the varying fields between the prefix and the per-call field, and falls back for a long value or a static-table name', () => {
    const trace = { traceparent: '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01', tracestate: 'a=b' };
    expect(decoded(requestBlock('n:1', '/p', FIXED, 'grpc-timeout', '5S', trace).block).slice(6)).toEqual([
      ['traceparent', trace.traceparent],
      ['tracestate', 'a=b'],
      ['grpc-timeout', '5S'],
    ]);
    const long = 'x'.repeat(300);
    expect(decoded(requestBlock('n:1', '/p', FIXED, 'x-long', long).block).at(-1)).toEqual(['x-long', long]);
    expect(decoded(requestBlock('n:1', '/p', FIXED, 'user-agent', 'tessera').block).at(-1)).toEqual(['user-agent', 'tessera']);
  });
});
