import { describe, expect, it } from 'vitest';
import {
  configTypeToDatatype,
  datatypeByteSize,
  datatypeToConfigType,
  isDatatype,
  parseDatatype,
  typedArrayKindOf,
} from './datatype.js';
import { elementCount, expectedByteSize } from './shape.js';
import { DATATYPES } from './tensor.js';
import { expectTesseraError } from './test-helpers.js';

describe('datatype facts', () => {
  it('knows element sizes, BYTES being variable', () => {
    expect(datatypeByteSize('BOOL')).toBe(1);
    expect(datatypeByteSize('UINT16')).toBe(2);
    expect(datatypeByteSize('FP16')).toBe(2);
    expect(datatypeByteSize('BF16')).toBe(2);
    expect(datatypeByteSize('INT32')).toBe(4);
    expect(datatypeByteSize('UINT64')).toBe(8);
    expect(datatypeByteSize('FP64')).toBe(8);
    expect(datatypeByteSize('BYTES')).toBeNull();
  });

  it('maps protocol names to config enum names and back for every datatype', () => {
    expect(datatypeToConfigType('FP32')).toBe('TYPE_FP32');
    expect(datatypeToConfigType('BYTES')).toBe('TYPE_STRING');
    expect(configTypeToDatatype('TYPE_STRING')).toBe('BYTES');
    expect(configTypeToDatatype('TYPE_INVALID')).toBeNull();
    expect(configTypeToDatatype('FP32')).toBeNull();
    for (const dt of DATATYPES) expect(configTypeToDatatype(datatypeToConfigType(dt))).toBe(dt);
  });

  it('names the typed array that views each datatype', () => {
    expect(typedArrayKindOf('FP32')).toBe('Float32Array');
    expect(typedArrayKindOf('INT64')).toBe('BigInt64Array');
    expect(typedArrayKindOf('FP16')).toBe('Uint16Array');
    expect(typedArrayKindOf('BOOL')).toBe('Uint8Array');
    expect(typedArrayKindOf('BYTES')).toBeNull();
  });

  it('parses datatype names strictly', () => {
    expect(isDatatype('INT8')).toBe(true);
    expect(isDatatype('int8')).toBe(false);
    expect(isDatatype(3)).toBe(false);
    expect(parseDatatype('BF16')).toBe('BF16');
    expectTesseraError(() => parseDatatype('STRING', "input 'x'"), 'INVALID_ARG', /invalid datatype "STRING" for input 'x'/);
    expectTesseraError(() => parseDatatype(undefined), 'INVALID_ARG', /invalid datatype undefined/);
  });
});

describe('elementCount and expectedByteSize', () => {
  it('multiplies dimensions; a scalar has one element; a zero dimension wins', () => {
    expect(elementCount([])).toBe(1);
    expect(elementCount([2, 3, 4])).toBe(24);
    expect(elementCount([0, 2 ** 52, 2 ** 52])).toBe(0);
    expect(expectedByteSize('FP32', [2, 3])).toBe(24);
    expect(expectedByteSize('BYTES', [2, 3])).toBeNull();
  });

  it('rejects negative, fractional and non-numeric dimensions, naming the tensor', () => {
    expectTesseraError(() => elementCount([-1, 3], "input 'x'"), 'INVALID_ARG', /specified.*input 'x'.*\[-1,3\]/);
    expectTesseraError(() => elementCount([1.5]), 'INVALID_ARG', /invalid dimension 1.5/);
    expectTesseraError(() => elementCount(['3' as unknown as number]), 'INVALID_ARG', /invalid dimension/);
    expectTesseraError(() => elementCount([Number.NaN]), 'INVALID_ARG', /invalid dimension/);
  });

  it('rejects products that overflow instead of wrapping', () => {
    expectTesseraError(() => elementCount([2 ** 30, 2 ** 30, 2 ** 30]), 'INVALID_ARG', /too many elements/);
    expectTesseraError(() => expectedByteSize('FP64', [2 ** 51]), 'INVALID_ARG', /too large/);
  });
});
