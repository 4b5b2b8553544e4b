import { describe, expect, it } from 'vitest';
import { parseGatewayArgs } from './cli-options.js';
import { DEFAULT_GRPC_RAW_H2, loadGatewayConfig } from '../config/load-gateway-config.js';

describe('the raw HTTP/2 gRPC front switch (--grpc-raw-h2, grpcRawH2)', () => {
  it('takes the default unless the config or the flag says', () => {
    expect(loadGatewayConfig('{}').grpcRawH2).toBe(DEFAULT_GRPC_RAW_H2);
    expect(loadGatewayConfig('{"grpcRawH2": true}').grpcRawH2).toBe(true);
    expect(loadGatewayConfig('{"grpcRawH2": false}').grpcRawH2).toBe(false);
    expect(parseGatewayArgs([]).grpcRawH2).toBeUndefined();
    expect(parseGatewayArgs(['--grpc-raw-h2', 'true']).grpcRawH2).toBe(true);
    expect(parseGatewayArgs(['--grpc-raw-h2=false']).grpcRawH2).toBe(false);
  });

  it('refuses anything but a boolean', () => {
    expect(() => parseGatewayArgs(['--grpc-raw-h2', 'on'])).toThrow(/--grpc-raw-h2 must be true or false/);
    expect(() => parseGatewayArgs(['--grpc-raw-h2'])).toThrow(/grpc-raw-h2/);
    expect(() => loadGatewayConfig('{"grpcRawH2": 1}')).toThrow(/\$\.grpcRawH2/);
  });
});
