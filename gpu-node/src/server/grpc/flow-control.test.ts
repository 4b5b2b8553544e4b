import { connect, type ClientHttp2Session } from 'node:http2';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FakeNodeCore } from '../../../test/support/fake-node-core.js';
import { DEFAULT_FLOW_CONTROL_WINDOW } from './flow-control.js';
import { createGrpcServer, type GrpcServer } from './index.js';

let server: GrpcServer;
let port: number;
beforeAll(async () => {
  // grpc-js's own port: the windows widened here are its http2 servers' (the raw front sets its own).
  server = createGrpcServer(new FakeNodeCore(), { rawH2Front: false });
  ({ port } = await server.listen(0, '127.0.0.1'));
});
afterAll(() => server.close(1000));

/** Connects a bare HTTP/2 client and resolves once the server's SETTINGS and first WINDOW_UPDATE are in. */
async function openSession(): Promise<ClientHttp2Session> {
  const session = connect(`http://127.0.0.1:${port}`);
  await new Promise<void>((resolve, reject) => {
    session.once('remoteSettings', () => resolve());
    session.once('error', reject);
  });
  // The connection-level WINDOW_UPDATE follows the SETTINGS frame; give it one round trip to land.
  await new Promise<void>((resolve) => session.ping(() => resolve()));
  return session;
}

describe('gRPC server flow-control windows', () => {
  // If a grpc-js upgrade moves its private http2 server map, these fail instead of the node silently
  // falling back to 64 KiB windows.
  it('offers every stream a window wider than HTTP/2 default', async () => {
    const session = await openSession();
    try {
      expect(session.remoteSettings.initialWindowSize).toBe(DEFAULT_FLOW_CONTROL_WINDOW);
    } finally {
      session.close();
    }
  });

  it('widens the connection window too', async () => {
    const session = await openSession();
    try {
      // remoteWindowSize: what we may send on the whole connection before the server must update it.
      expect(session.state.remoteWindowSize).toBeGreaterThanOrEqual(DEFAULT_FLOW_CONTROL_WINDOW);
    } finally {
      session.close();
    }
  });
});
