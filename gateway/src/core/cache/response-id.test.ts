import { describe, expect, it } from 'vitest';
import { decodeInferResponseBody, encodeInferResponse, INFERENCE_HEADER_CONTENT_LENGTH } from '../../../../shared/src/kserve/index.js';
import type { InferResponse } from '../../../../shared/src/tensors/index.js';
import { withResponseId } from './response-id.js';

const response: InferResponse = {
  id: '',
  modelName: 'simple',
  modelVersion: '1',
  outputs: [
    { name: 'OUTPUT0', datatype: 'INT32', shape: [1, 2], data: new Uint8Array([1, 0, 0, 0, 2, 0, 0, 0]) },
    { name: 'OUTPUT1', datatype: 'INT32', shape: [1, 2], data: new Uint8Array([3, 0, 0, 0, 4, 0, 0, 0]) },
  ],
};

function decode(entry: { body: Uint8Array; headers: Readonly<Record<string, string>> }) {
  return decodeInferResponseBody(entry.body, entry.headers[INFERENCE_HEADER_CONTENT_LENGTH] ?? null);
}

describe('withResponseId', () => {
  for (const binaryOutputDefault of [false, true]) {
    it(`stamps, replaces and removes the id (${binaryOutputDefault ? 'binary' : 'JSON'} outputs)`, () => {
      const cached = encodeInferResponse(response, { binaryOutputDefault });
      const stamped = withResponseId(cached, 'req "7" \u00e9');
      const decoded = decode(stamped);
      expect(decoded.id).toBe('req "7" \u00e9');
      expect(decoded.outputs.map((o) => Array.from(o.data))).toEqual(response.outputs.map((o) => Array.from(o.data)));
      // identical to what encoding with the id would have produced
      expect(stamped).toEqual(encodeInferResponse({ ...response, id: 'req "7" \u00e9' }, { binaryOutputDefault }));
      expect(decode(withResponseId(stamped, 'other')).id).toBe('other');
      expect(withResponseId(stamped, '')).toEqual(cached);
      expect(withResponseId(cached, '')).toBe(cached);
    });
  }

  it('leaves a body that is not a KServe JSON header alone', () => {
    const raw = { body: new Uint8Array([1, 2, 3]), headers: {} };
    expect(withResponseId(raw, 'x')).toBe(raw);
  });
});
