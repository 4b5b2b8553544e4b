import { createServer, type AddressInfo, type Server, type Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { waitFor } from '../../../../shared/test/support/index.js';
import { RawSocketPool } from './raw-socket-pool.js';

describe('RawSocketPool (real sockets on loopback)', () => {
  let server: Server;
  let address: string;
  const accepted: Socket[] = [];

  beforeAll(async () => {
    server = createServer((socket) => void accepted.push(socket));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    address = `127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    for (const socket of accepted) socket.destroy();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });

  const openIdle = async (pool: RawSocketPool): Promise<{ socket: Socket; peer: Socket }> => {
    const socket = pool.open(address);
    await new Promise<void>((resolve) => socket.once('connect', resolve));
    await waitFor(() => accepted.length > 0, { what: 'the server accepts' });
    const peer = accepted.shift()!;
    pool.giveBack(address, socket);
    return { socket, peer };
  };

  it('hands back an idle socket once, most recent first', async () => {
    const pool = new RawSocketPool(4, 60_000);
    const { socket } = await openIdle(pool);
    expect(pool.take(address)).toBe(socket);
    expect(pool.take(address)).toBeUndefined();
    socket.destroy();
    pool.close();
  });

  it('destroys an idle socket that receives bytes nobody asked for (an unasked answer), or that the node closes', async () => {
    // An idle timeout far off: only the watch can take these sockets out.
    const pool = new RawSocketPool(4, 60_000);
    const first = await openIdle(pool);
    first.peer.write('HTTP/1.1 200 OK\r\ncontent-length: 0\r\n\r\n');
    await waitFor(() => first.socket.destroyed, { what: 'the socket with unasked bytes destroyed' });
    const second = await openIdle(pool);
    second.peer.end();
    await waitFor(() => second.socket.destroyed, { what: 'the socket the node closed destroyed' });
    expect(pool.take(address)).toBeUndefined();
    pool.close();
  });

  it('keeps at most its bound of idle sockets per node', async () => {
    const pool = new RawSocketPool(1, 60_000);
    const kept = await openIdle(pool);
    const extra = await openIdle(pool);
    expect(extra.socket.destroyed).toBe(true);
    expect(pool.take(address)).toBe(kept.socket);
    kept.socket.destroy();
    pool.close();
  });

  it('adds a socket\'s watch once: no listener piles up when a socket goes round the pool many times', async () => {
    const pool = new RawSocketPool(4, 60_000);
    const { socket, peer } = await openIdle(pool);
    const counts = (): number[] => ['data', 'end', 'error', 'close', 'timeout'].map((event) => socket.listenerCount(event));
    try {
      expect(pool.take(address)).toBe(socket);
      pool.giveBack(address, socket);
      const once = counts();
      for (let i = 0; i < 20; i++) {
        expect(pool.take(address)).toBe(socket);
        pool.giveBack(address, socket);
      }
      expect(counts()).toEqual(once);
      // Held, the socket is its holder's: bytes it reads do not take it out.
      expect(pool.take(address)).toBe(socket);
      peer.write('HTTP/1.1 200 OK\r\ncontent-length: 0\r\n\r\n');
      await new Promise((resolve) => socket.once('data', resolve));
      expect(socket.destroyed).toBe(false);
    } finally {
      socket.destroy();
      peer.destroy();
      pool.close();
    }
  });

  it('closes a socket idle for its idle time, and keeps one in use past it', async () => {
    const pool = new RawSocketPool(4, 80);
    const idle = await openIdle(pool);
    const held = await openIdle(pool);
    try {
      expect(pool.take(address)).toBe(held.socket);
      await waitFor(() => idle.socket.destroyed, { what: 'the idle socket closed' });
      expect(held.socket.destroyed).toBe(false);
      expect(pool.take(address)).toBeUndefined();
    } finally {
      for (const socket of [idle.socket, idle.peer, held.socket, held.peer]) socket.destroy();
      pool.close();
    }
  });
});
