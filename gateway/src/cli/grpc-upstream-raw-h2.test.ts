import { describe, expect, it } from 'vitest';
import { parseGatewayArgs } from './cli-options.js';
import { DEFAULT_GRPC_UPSTREAM_RAW_H2, loadGatewayConfig } from '../config/load-gateway-config.js';

describe('the raw HTTP/2 gRPC upstream switch (--grpc-upstream-raw-h2, grpcUpstreamRawH2)', () => {
  it('takes the default unless the config or the flag says', () => {
    expect(loadGatewayConfig('{}').grpcUpstreamRawH2).toBe(DEFAULT_GRPC_UPSTREAM_RAW_H2);
    expect(loadGatewayConfig('{"grpcUpstreamRawH2": true}').grpcUpstreamRawH2).toBe(true);
    expect(loadGatewayConfig('{"grpcUpstreamRawH2": false}').grpcUpstreamRawH2).toBe(false);
    expect(parseGatewayArgs([]).grpcUpstreamRawH2).toBeUndefined();
    expect(parseGatewayArgs(['--grpc-upstream-raw-h2', 'true']).grpcUpstreamRawH2).toBe(true);
    expect(parseGatewayArgs(['--grpc-upstream-raw-h2=false']).grpcUpstreamRawH2).toBe(false);
  });

  it('refuses anything but a boolean', () => {
    expect(() => parseGatewayArgs(['--grpc-upstream-raw-h2', 'on'])).toThrow(/--grpc-upstream-raw-h2 must be true or false/);
    expect(() => loadGatewayConfig('{"grpcUpstreamRawH2": "yes"}')).toThrow(/\$\.grpcUpstreamRawH2/);
  });
});
