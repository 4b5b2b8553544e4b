import { describe, expect, it } from 'vitest';
import { parseGatewayArgs, parseNodeSpec } from './cli-options.js';

describe('tessera-gateway options', () => {
  it('parses --config, --port and repeatable --node specs', () => {
    const options = parseGatewayArgs(['--config', 'gw.json', '--port', '0', '--node', 'http://10.0.0.5:8000,grpc=10.0.0.5:8001', '--node', 'id=b,h:9']);
    expect(options).toMatchObject({ configPath: 'gw.json', port: 0, help: false });
    expect(options.nodes).toEqual([
      { id: '10.0.0.5:8001', grpc: '10.0.0.5:8001', http: '10.0.0.5:8000' },
      { id: 'b', grpc: 'h:9', http: null },
    ]);
  });

  it('refuses unknown flags, bad ports and nodes without a gRPC address', () => {
    expect(() => parseGatewayArgs(['--nope'])).toThrow(/Unknown option/);
    expect(() => parseGatewayArgs(['--port', '99999'])).toThrow(/--port/);
    expect(() => parseNodeSpec('http://h:8000')).toThrow(/needs a gRPC address/);
    expect(() => parseNodeSpec('grpc=nohost')).toThrow(/not host:port/);
  });
});
