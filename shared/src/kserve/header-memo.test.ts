import { describe, expect, it } from 'vitest';
import { tensorToTypedArray, type Tensor } from '../tensors/index.js';
import { expectTesseraError, withBinary as body } from '../tensors/test-helpers.js';
import { HEADER_MEMO_ENTRIES, HEADER_MEMO_MAX_CHARS } from './header-memo.js';
import { decodeInferRequestBody, requestHeaderMemo } from './infer-request-decode.js';

const fp32 = (...values: number[]): Uint8Array => new Uint8Array(new Float32Array(values).buffer);
const values = (t: Tensor | undefined): number[] => Array.from(tensorToTypedArray(t as Tensor), Number);
const HEADER = {
  id: 'same',
  parameters: { priority: 1 },
  inputs: [{ name: 'x', shape: [1, 2], datatype: 'FP32', parameters: { binary_data_size: 8 } }],
  outputs: [{ name: 'y', parameters: { binary_data: true } }],
};

describe('the binary header memo', () => {
  it('answers a header sent again from the memo, over the new body\'s own bytes', () => {
    const first = decodeInferRequestBody({ ...body(HEADER, fp32(1, 2)), modelName: 'm' });
    const hits = requestHeaderMemo.hits;
    const second = decodeInferRequestBody({ ...body(HEADER, fp32(3, 4)), modelName: 'other', modelVersion: '2' });
    expect(requestHeaderMemo.hits).toBe(hits + 1);
    expect(values(first.request.inputs[0])).toEqual([1, 2]);
    expect(values(second.request.inputs[0])).toEqual([3, 4]);
    // The model and version come from the URL, never from what was remembered.
    expect(second.request).toMatchObject({ id: 'same', modelName: 'other', modelVersion: '2', parameters: { priority: 1 }, outputs: [{ name: 'y', binaryData: true }] });
    expect(second.outputBinary).toEqual(new Map([['y', true]]));
  });

  it('still checks the bytes after a remembered header: too few, too many, bad BYTES elements', () => {
    decodeInferRequestBody({ ...body(HEADER, fp32(1, 2)), modelName: 'm' });
    expectTesseraError(
      () => decodeInferRequestBody({ ...body(HEADER, fp32(1)), modelName: 'm' }),
      'INVALID_ARG',
      "unexpected size for input 'x', expecting 8 bytes but only 4 remain",
    );
    expectTesseraError(() => decodeInferRequestBody({ ...body(HEADER, fp32(1, 2, 3)), modelName: 'm' }), 'INVALID_ARG', 'unexpected additional input data');
    const strings = { inputs: [{ name: 's', shape: [1], datatype: 'BYTES', parameters: { binary_data_size: 5 } }] };
    const good = new Uint8Array([1, 0, 0, 0, 0x61]);
    decodeInferRequestBody({ ...body(strings, good), modelName: 'm' });
    const hits = requestHeaderMemo.hits;
    // The element claims 200 bytes where 1 follows: refused though the header is remembered.
    expectTesseraError(() => decodeInferRequestBody({ ...body(strings, new Uint8Array([200, 0, 0, 0, 0x61])), modelName: 'm' }), 'INVALID_ARG');
    expect(requestHeaderMemo.hits).toBe(hits + 1);
  });

  it('shares only frozen parts between requests, and gives each its own shapes', () => {
    decodeInferRequestBody({ ...body(HEADER, fp32(1, 2)), modelName: 'm' });
    const again = decodeInferRequestBody({ ...body(HEADER, fp32(5, 6)), modelName: 'm' });
    expect(() => {
      (again.request.parameters as Record<string, unknown>).priority = 9;
    }).toThrow(TypeError);
    // Shapes are each request's own copy: changing one reaches neither the memo nor the next request.
    (again.request.inputs[0]!.shape as number[]).push(1);
    expect(Object.isFrozen(again.request.inputs[0]!.shape)).toBe(false);
    const next = decodeInferRequestBody({ ...body(HEADER, fp32(7, 8)), modelName: 'm' }).request;
    expect(next.parameters).toEqual({ priority: 1 });
    expect(next.inputs[0]!.shape).toEqual([1, 2]);
  });

  it('keeps neither headers with JSON data nor over-long ones, and stays bounded', () => {
    const size = requestHeaderMemo.size;
    const hits = requestHeaderMemo.hits;
    const mixed = { inputs: [{ name: 'a', shape: [1], datatype: 'FP32', data: [1] }, { name: 'b', shape: [1], datatype: 'FP32', parameters: { binary_data_size: 4 } }] };
    decodeInferRequestBody({ ...body(mixed, fp32(2)), modelName: 'm' });
    decodeInferRequestBody({ ...body(mixed, fp32(2)), modelName: 'm' });
    const long = { ...HEADER, id: 'x'.repeat(HEADER_MEMO_MAX_CHARS) };
    decodeInferRequestBody({ ...body(long, fp32(1, 2)), modelName: 'm' });
    decodeInferRequestBody({ ...body(long, fp32(1, 2)), modelName: 'm' });
    expect(requestHeaderMemo.hits).toBe(hits);
    expect(requestHeaderMemo.size).toBe(size);
    for (let i = 0; i < HEADER_MEMO_ENTRIES * 3; i++) {
      decodeInferRequestBody({ ...body({ ...HEADER, id: `stranger-${i}` }, fp32(1, 2)), modelName: 'm' });
      expect(requestHeaderMemo.size).toBeLessThanOrEqual(HEADER_MEMO_ENTRIES);
    }
  });
});
