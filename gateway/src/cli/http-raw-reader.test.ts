import { describe, expect, it } from 'vitest';
import { parseGatewayArgs } from './cli-options.js';
import { DEFAULT_HTTP_RAW_READER, loadGatewayConfig } from '../config/load-gateway-config.js';

describe('the raw HTTP/1.1 reader switch (--http-raw-reader, httpRawReader)', () => {
  it('takes the default unless the config or the flag says, the flag over the config', () => {
    expect(loadGatewayConfig('{}').httpRawReader).toBe(DEFAULT_HTTP_RAW_READER);
    expect(loadGatewayConfig('{"httpRawReader": true}').httpRawReader).toBe(true);
    expect(loadGatewayConfig('{"httpRawReader": false}').httpRawReader).toBe(false);
    expect(parseGatewayArgs([]).httpRawReader).toBeUndefined();
    expect(parseGatewayArgs(['--http-raw-reader', 'true']).httpRawReader).toBe(true);
    expect(parseGatewayArgs(['--http-raw-reader', 'false']).httpRawReader).toBe(false);
  });

  it('refuses anything but a boolean', () => {
    expect(() => parseGatewayArgs(['--http-raw-reader', 'yes'])).toThrow(/--http-raw-reader must be true or false/);
    expect(() => parseGatewayArgs(['--http-raw-reader'])).toThrow(/http-raw-reader/);
    expect(() => loadGatewayConfig('{"httpRawReader": "true"}')).toThrow(/\$\.httpRawReader/);
  });
});
