import { describe, expect, it } from 'vitest';
import { parseGatewayArgs } from './cli-options.js';
import { loadGatewayConfig } from '../config/load-gateway-config.js';

// node:http2's upstream client is gone (issue 17): the old switch is accepted when it asks for what every
// gateway does now, and refused, saying why, when it asks for the retired client.
describe('the retired gRPC upstream switch (--grpc-upstream-raw-h2, grpcUpstreamRawH2)', () => {
  it('accepts true (deprecated, ignored)', () => {
    expect(() => loadGatewayConfig('{"grpcUpstreamRawH2": true}')).not.toThrow();
    expect(() => parseGatewayArgs(['--grpc-upstream-raw-h2', 'true'])).not.toThrow();
  });

  it('refuses false, naming the retired client', () => {
    expect(() => loadGatewayConfig('{"grpcUpstreamRawH2": false}')).toThrow(/\$\.grpcUpstreamRawH2: false is no longer supported: node:http2's upstream client was retired/);
    expect(() => parseGatewayArgs(['--grpc-upstream-raw-h2=false'])).toThrow(/--grpc-upstream-raw-h2 false is no longer supported/);
  });

  it('refuses anything but a boolean', () => {
    expect(() => parseGatewayArgs(['--grpc-upstream-raw-h2', 'on'])).toThrow(/--grpc-upstream-raw-h2 must be true/);
    expect(() => loadGatewayConfig('{"grpcUpstreamRawH2": "yes"}')).toThrow(/\$\.grpcUpstreamRawH2/);
  });
});
