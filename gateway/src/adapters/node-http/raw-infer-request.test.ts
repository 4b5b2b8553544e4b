import { describe, expect, it } from 'vitest';
import type { InferRequest } from '../../../../shared/src/tensors/index.js';
import { inferPathOf, jsonExact, renderInferRequest } from './raw-infer-request.js';
import { RawRequestBytes } from './raw-request-bytes.js';

const small = new Uint8Array(64).map((_, i) => i);
const large = new Uint8Array(32 * 1024).fill(7);

const request = (inputs: Uint8Array[], extra: Partial<InferRequest> = {}): InferRequest => ({
  id: 'r1',
  modelName: 'm',
  inputs: inputs.map((data, i) => ({ name: `IN${i}`, datatype: 'UINT8', shape: [data.length], data })),
  parameters: { priority: 2, timeout: 1000, sequence_id: '77' },
  ...extra,
});

function whole(chunks: readonly Uint8Array[]): { head: string; json: Record<string, unknown>; sections: Buffer } {
  const bytes = Buffer.concat(chunks);
  const end = bytes.indexOf('\r\n\r\n');
  const head = bytes.subarray(0, end).toString('latin1');
  const jsonLength = Number(/\r\ninference-header-content-length: (\d+)/.exec(head)![1]);
  const length = Number(/\r\ncontent-length: (\d+)/.exec(head)![1]);
  const body = bytes.subarray(end + 4);
  expect(body.length).toBe(length);
  return { head, json: JSON.parse(body.subarray(0, jsonLength).toString()) as Record<string, unknown>, sections: body.subarray(jsonLength) };
}

describe('raw infer request bytes', () => {
  it('names plain paths, and none for a model or version that would need escaping', () => {
    expect(inferPathOf('simple', undefined)).toBe('/v2/models/simple/infer');
    expect(inferPathOf('simple', '')).toBe('/v2/models/simple/infer');
    expect(inferPathOf('simple', '3')).toBe('/v2/models/simple/versions/3/infer');
    expect(inferPathOf('a b', undefined)).toBeUndefined();
    expect(inferPathOf('a/b', undefined)).toBeUndefined();
    expect(inferPathOf('m', '1?x')).toBeUndefined();
  });

  it('sends over JSON only parameters its reader holds exactly (a 63-bit sequence id is not)', () => {
    expect(jsonExact(request([]))).toBe(true);
    expect(jsonExact(request([], { parameters: { sequence_id: 5n } }))).toBe(false);
    expect(jsonExact(request([], { parameters: { sequence_id: 2 ** 60 } }))).toBe(false);
    expect(jsonExact(request([], { parameters: { f: 0.5, big: 2 ** 53 - 1 } }))).toBe(true);
  });

  it('writes the head, the parameters as given, every output asked binary (classification kept), the inputs\' bytes in order', () => {
    const chunks = renderInferRequest(new RawRequestBytes(), '10.0.0.1:8000', '/v2/models/m/infer', request([small, large, small], {
      outputs: [{ name: 'A', binaryData: false }, { name: 'B', classification: 3 }],
    }), ['x-tessera-deadline-ms: 900\r\n']);
    const { head, json, sections } = whole(chunks);
    expect(head).toMatch(/^POST \/v2\/models\/m\/infer HTTP\/1\.1\r\nhost: 10\.0\.0\.1:8000\r\n/);
    expect(head).toMatch(/\r\nx-tessera-deadline-ms: 900$/);
    expect(json).toMatchObject({
      id: 'r1',
      parameters: { priority: 2, timeout: 1000, sequence_id: '77', binary_data_output: true },
      outputs: [{ name: 'A', parameters: { binary_data: true } }, { name: 'B', parameters: { binary_data: true, classification: 3 } }],
    });
    expect(sections.equals(Buffer.concat([small, large, small]))).toBe(true);
    // The large section and what follows it go as they are (no copy); the small first one rides with the head.
    expect(chunks[1]).toBe(large);
    expect(chunks[2]).toBe(small);
    expect(chunks).toHaveLength(3);
  });

  it('is one buffer when every section is small', () => {
    const chunks = renderInferRequest(new RawRequestBytes(), 'n:1', '/v2/models/m/infer', request([small, small]), []);
    expect(chunks).toHaveLength(1);
    expect(whole(chunks).sections.equals(Buffer.concat([small, small]))).toBe(true);
  });
});
