/**
 * The pipelined-request bound on a real node:http server over loopback, driven by raw sockets (no
 * client library pipelines). The handler holds `/hold` requests until the test releases them, so
 * "in progress" is decided by the test, never by timing.
 */
import { createServer, type Server, type ServerResponse } from 'node:http';
import { connect, type AddressInfo, type Socket } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { waitFor } from '../../test/support/index.js';
import { limitPipelinedRequests } from './pipelining-limit.js';

interface Harness {
  readonly server: Server;
  readonly port: number;
  /** Responses of `/hold` requests the handler was given, not yet answered. */
  readonly held: ServerResponse[];
  /** Requests the handler was given, and requests Node parsed (given or refused). */
  readonly counts: { handled: number; parsed: number };
}

const open: Server[] = [];
afterEach(async () => {
  await Promise.all(open.splice(0).map((s) => new Promise((resolve) => { s.closeAllConnections(); s.close(resolve); })));
});

async function start(limit: number): Promise<Harness> {
  const held: ServerResponse[] = [];
  const counts = { handled: 0, parsed: 0 };
  const server = createServer(
    limitPipelinedRequests((request, response) => {
      counts.handled++;
      if (request.url === '/hold') held.push(response);
      else response.end('now');
    }, limit),
  );
  server.on('request', () => counts.parsed++);
  open.push(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { server, port: (server.address() as AddressInfo).port, held, counts };
}

const get = (path: string) => `GET ${path} HTTP/1.1\r\nHost: t\r\n\r\n`;
const statuses = (text: string) => [...text.matchAll(/HTTP\/1\.1 (\d{3})/g)].map((m) => Number(m[1]));

/** Everything the server sends on one connection until it closes it. */
function collect(socket: Socket): Promise<string> {
  return new Promise((resolve, reject) => {
    let text = '';
    socket.on('data', (chunk: Buffer) => (text += chunk.toString('latin1')));
    socket.on('close', () => resolve(text));
    socket.on('error', reject);
  });
}

describe('limitPipelinedRequests', () => {
  it('hands at most N pipelined requests of one connection to the handler, answers them in order, then refuses with 503 + Connection: close', async () => {
    const h = await start(2);
    const socket = connect(h.port, '127.0.0.1');
    const received = collect(socket);
    socket.write(get('/hold').repeat(6));
    await waitFor(() => h.counts.parsed === 6, { what: 'Node to parse the six pipelined requests' });
    // Without the bound the handler would hold all six by now.
    expect(h.counts.handled).toBe(2);
    for (const response of h.held) response.end('held');
    const text = await received;
    expect(statuses(text)).toEqual([200, 200, 503]);
    const refusal = text.slice(text.lastIndexOf('HTTP/1.1 503'));
    expect(refusal).toMatch(/\r\nconnection: close\r\n/i);
    expect(JSON.parse(refusal.slice(refusal.indexOf('\r\n\r\n') + 4))).toEqual({ error: expect.stringMatching(/more than 2 requests in progress on one connection.*not processed/) });
    expect(h.counts.handled).toBe(2);
  });

  it('counts per connection: a second connection is served while the first is at its bound', async () => {
    const h = await start(1);
    const busy = connect(h.port, '127.0.0.1');
    const busyReceived = collect(busy);
    busy.write(get('/hold'));
    await waitFor(() => h.held.length === 1, { what: 'the first connection at its bound' });
    const other = connect(h.port, '127.0.0.1');
    const otherReceived = collect(other);
    other.end(`GET /now HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n`);
    expect(statuses(await otherReceived)).toEqual([200]);
    h.held[0]!.end('held');
    busy.end();
    expect(statuses(await busyReceived)).toEqual([200]);
  });

  it('frees a slot when its response is sent: many sequential requests on one keep-alive connection are all served', async () => {
    const h = await start(2);
    const socket = connect(h.port, '127.0.0.1');
    let text = '';
    socket.on('data', (chunk: Buffer) => (text += chunk.toString('latin1')));
    for (let i = 1; i <= 10; i++) {
      socket.write(get('/now'));
      await waitFor(() => statuses(text).length === i, { what: `response ${i}` });
    }
    expect(statuses(text)).toEqual(Array(10).fill(200));
    socket.destroy();
  });

  it('refuses a limit below 1', () => {
    expect(() => limitPipelinedRequests(() => undefined, 0)).toThrow(/positive integer/);
  });
});
