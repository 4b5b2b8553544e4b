/**
 * The raw HTTP/2 front as a server: a net.Server whose every connection is a RawH2Connection, with the
 * connections kept so a shutdown can send each its GOAWAY and a forced close can end them.
 * `perConnection` is called once per accepted socket and returns that connection's stream handler
 * (the node's gRPC front keeps one relay session to grpc-js per connection this way).
 */
import net, { type Socket } from 'node:net';
import { DEFAULT_RAW_H2_LIMITS, RawH2Connection, type RawH2Limits, type StreamHandler } from './connection.js';

export interface RawH2Front {
  readonly server: net.Server;
  /** Connections open now. */
  readonly connectionCount: () => number;
  /** Stops accepting connections and sends GOAWAY (NO_ERROR) on each open one; they end as their streams finish. */
  shutdown(): void;
  /** Ends every connection at once. */
  destroyAll(): void;
}

export function createRawH2Front(perConnection: (socket: Socket) => StreamHandler, limits: Partial<RawH2Limits> = {}): RawH2Front {
  const settings = { ...DEFAULT_RAW_H2_LIMITS, ...limits };
  const connections = new Set<RawH2Connection>();
  const server = net.createServer((socket) => {
    const connection = new RawH2Connection(socket, settings, perConnection(socket));
    connections.add(connection);
    socket.on('close', () => connections.delete(connection));
  });
  return {
    server,
    connectionCount: () => connections.size,
    shutdown() {
      server.close();
      for (const connection of connections) connection.shutdown();
    },
    destroyAll() {
      for (const connection of connections) connection.destroy();
    },
  };
}
