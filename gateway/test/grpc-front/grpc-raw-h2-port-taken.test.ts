/**
 * With `grpcRawH2`, grpc-js listens on loopback behind the raw front: when the front's port is taken, the
 * gateway refuses to start and leaves no server behind (grpc-js's loopback listener included).
 */
import net from 'node:net';
import { describe, expect, it } from 'vitest';
import { silentLogger } from '../../../shared/src/logging/index.js';
import { waitFor } from '../../../shared/test/support/index.js';
import { loadGatewayConfig } from '../../src/config/index.js';
import { startGateway } from '../../src/entry-node.js';
import { deadAddress } from '../support/test-node-process.js';

const listeners = (): number => process.getActiveResourcesInfo().filter((kind) => kind === 'TCPServerWrap').length;

describe('the raw HTTP/2 gRPC front on a taken port', () => {
  it('refuses to start and leaves no listener behind', async () => {
    const blocker = net.createServer();
    await new Promise<void>((resolve) => blocker.listen(0, '127.0.0.1', resolve));
    const taken = (blocker.address() as net.AddressInfo).port;
    const before = listeners();
    try {
      const config = loadGatewayConfig(JSON.stringify({ grpcRawH2: true }));
      const nodes = [{ id: 'dead', grpc: await deadAddress(), http: null }];
      await expect(startGateway({ config, redisUrl: null, nodes, port: 0, grpcPort: taken, host: '127.0.0.1', logger: silentLogger })).rejects.toThrow(
        /cannot listen for gRPC/,
      );
      await waitFor(() => listeners() === before, { what: 'every listener the gateway opened closed', timeoutMs: 5_000 });
      expect(listeners()).toBe(before);
    } finally {
      await new Promise((resolve) => blocker.close(resolve));
    }
  });
});
