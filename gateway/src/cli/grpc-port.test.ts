import { describe, expect, it } from 'vitest';
import { parseGatewayArgs } from './cli-options.js';
import { loadGatewayConfig } from '../config/load-gateway-config.js';

describe('the gRPC front door port (--grpc-port, grpcPort)', () => {
  it('is off unless set, and read from the config or the flag', () => {
    expect(loadGatewayConfig('{}').grpcPort).toBeNull();
    expect(loadGatewayConfig('{"grpcPort": 8001}').grpcPort).toBe(8001);
    expect(parseGatewayArgs([]).grpcPort).toBeUndefined();
    expect(parseGatewayArgs(['--grpc-port', '0']).grpcPort).toBe(0);
    expect(parseGatewayArgs(['--grpc-port', '9001', '--port', '9000'])).toMatchObject({ grpcPort: 9001, port: 9000 });
  });

  it('refuses ports out of range', () => {
    expect(() => parseGatewayArgs(['--grpc-port', '70000'])).toThrow(/--grpc-port/);
    expect(() => parseGatewayArgs(['--grpc-port', 'x'])).toThrow(/--grpc-port/);
    expect(() => loadGatewayConfig('{"grpcPort": -1}')).toThrow(/grpcPort/);
    expect(() => loadGatewayConfig('{"grpcPort": "8001"}')).toThrow(/grpcPort/);
  });
});
