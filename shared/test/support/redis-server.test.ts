import { createConnection } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startRedisServer } from './redis-server.js';
import type { RedisServer } from './redis-server.js';
import { waitFor } from './wait-for.js';

/** Sends one inline command and returns the first reply line, or the socket error's code. */
function send(port: number, command: string): Promise<string> {
  return new Promise((resolve) => {
    const socket = createConnection({ host: '127.0.0.1', port });
    let reply = '';
    socket.once('error', (error: NodeJS.ErrnoException) => resolve(error.code ?? 'error'));
    socket.once('connect', () => socket.write(`${command}\r\n`));
    socket.on('data', (chunk) => {
      reply += chunk.toString('utf8');
      if (reply.includes('\r\n')) {
        socket.destroy();
        resolve(reply.split('\r\n')[0]!);
      }
    });
  });
}

describe('startRedisServer', () => {
  let redis: RedisServer;
  beforeAll(async () => {
    redis = await startRedisServer();
  });
  afterAll(() => redis.stop());

  it('serves on a loopback port without persistence', async () => {
    expect(redis.url).toBe(`redis://127.0.0.1:${redis.port}`);
    expect(redis.running).toBe(true);
    expect(await send(redis.port, 'PING')).toBe('+PONG');
    expect(await send(redis.port, 'CONFIG GET appendonly')).toBe('*2');
  });

  it('is killed, then restarted on the same port with an empty dataset', async () => {
    expect(await send(redis.port, 'SET k v')).toBe('+OK');
    await redis.kill();
    expect(redis.running).toBe(false);
    expect(await send(redis.port, 'PING')).toBe('ECONNREFUSED');
    await redis.restart();
    expect(redis.running).toBe(true);
    expect(await send(redis.port, 'EXISTS k')).toBe(':0');
  });

  it('stops cleanly and can be stopped twice', async () => {
    await redis.stop();
    await redis.stop();
    await waitFor(async () => (await send(redis.port, 'PING')) === 'ECONNREFUSED', { what: 'the port to close' });
    await redis.restart();
    expect(await send(redis.port, 'PING')).toBe('+PONG');
  });

  it('says clearly when the binary is missing', async () => {
    await expect(startRedisServer({ binary: '/nonexistent/redis-server' })).rejects.toThrow(/redis-server not found/);
  });
});

describe('waitFor', () => {
  it('returns the first accepted value and times out with the name of what it waited for', async () => {
    let calls = 0;
    expect(await waitFor(() => (++calls >= 3 ? calls : false), { intervalMs: 1 })).toBe(3);
    await expect(waitFor(() => false, { timeoutMs: 30, what: 'the moon' })).rejects.toThrow(/waiting for the moon/);
  });
});
