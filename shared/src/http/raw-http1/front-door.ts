/**
 * Puts our HTTP/1.1 reader (connection.ts) in front of a node:http server: every accepted socket is read by a
 * RawConnection first, and goes to node:http's own connection listener the moment a request falls outside the raw
 * path. The server keeps listening, closing and tracking its connections as node:http does; the front door adds
 * the timeouts of the connections it still owns and the shutdown helpers for them.
 *
 * Call it right after `createServer`, before anything else listens for 'connection': the listeners present then are
 * node:http's, and they run for a socket only when it is handed over.
 */
import type { Server } from 'node:http';
import type { Socket } from 'node:net';
import { RawConnection, type RawConnectionContext, type RawHttp1Handler } from './connection.js';

/** How often the owned connections' timeouts are checked (node:http checks its own every 30 s by default). */
const CHECK_INTERVAL_MS = 500;

export interface RawHttp1FrontDoor {
  /** Connections the raw path owns now (handed-off ones are node:http's). */
  readonly size: number;
  /** Closes the owned connections with nothing read of a next request and nothing in flight; the others close after their answer. */
  closeIdle(): void;
  /** Destroys every owned connection. */
  closeAll(): void;
}

export function attachRawHttp1(server: Server, handler: RawHttp1Handler, maxBodyBytes: number): RawHttp1FrontDoor {
  const nodeHttpListeners = server.listeners('connection') as ((socket: Socket) => void)[];
  server.removeAllListeners('connection');
  const connections = new Set<RawConnection>();
  let closing = false;
  const context: RawConnectionContext = {
    handler,
    maxBodyBytes,
    headersTimeoutMs: () => server.headersTimeout,
    requestTimeoutMs: () => server.requestTimeout,
    keepAliveTimeoutMs: () => server.keepAliveTimeout,
    handOff: (socket) => {
      for (const listener of nodeHttpListeners) listener.call(server, socket);
    },
    forget: (connection) => void connections.delete(connection),
    closing: () => closing,
  };
  let checker: NodeJS.Timeout | undefined;
  const check = (): void => {
    const now = Date.now();
    for (const connection of connections) connection.checkTimeouts(now);
  };
  server.on('connection', (socket: Socket) => {
    connections.add(new RawConnection(socket, context));
    checker ??= setInterval(check, CHECK_INTERVAL_MS).unref();
  });
  server.on('close', () => {
    clearInterval(checker);
    checker = undefined;
  });
  return {
    get size() {
      return connections.size;
    },
    closeIdle() {
      closing = true;
      for (const connection of connections) if (connection.idle) connection.socket.destroy();
    },
    closeAll() {
      for (const connection of connections) connection.socket.destroy();
    },
  };
}
