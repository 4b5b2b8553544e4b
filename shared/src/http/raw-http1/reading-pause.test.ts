/**
 * When a raw HTTP/1.1 connection pauses reading: not around every request of a client that sends one at a time,
 * but as soon as more than one head's worth of bytes waits behind the request in flight, so a client that floods
 * bytes behind an unanswered request holds a bounded amount of the server's memory.
 */
import { createServer, type Server } from 'node:http';
import { connect, type AddressInfo, type Socket } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import type { RawAnswer, RawRequest } from './connection.js';
import { attachRawHttp1, type RawHttp1FrontDoor } from './front-door.js';
import { MAX_HEAD_BYTES } from './head-reader.js';
import { exchange, rawRequest } from './test-helpers.js';

let server: Server | undefined;
let door: RawHttp1FrontDoor | undefined;
let client: Socket | undefined;
afterEach(async () => {
  client?.destroy();
  door?.closeAll();
  await new Promise<void>((resolve) => (server === undefined ? resolve() : server.close(() => resolve())));
  server = undefined;
});

/** A front door serving with `serve`; `sockets` gets each server-side socket as it connects. */
async function start(serve: (request: RawRequest, reply: RawAnswer) => void, sockets: Socket[]): Promise<number> {
  server = createServer((_request, response) => response.writeHead(500).end());
  door = attachRawHttp1(server, { accepts: () => true, serve }, 1024 * 1024);
  server.on('connection', (socket: Socket) => sockets.push(socket)); // after the front door: not taken as node:http's
  await new Promise<void>((resolve) => server!.listen(0, '127.0.0.1', resolve));
  return (server.address() as AddressInfo).port;
}

describe('raw HTTP/1.1 reading pauses', () => {
  it('never pauses the socket of a client that sends its next request only once answered', async () => {
    const sockets: Socket[] = [];
    let pauses = 0;
    const port = await start((request, reply) => {
      const socket = sockets[0]!;
      if (pauses === 0 && socket.pause === Object.getPrototypeOf(socket).pause) {
        const pause = socket.pause.bind(socket);
        socket.pause = () => {
          pauses++;
          return pause();
        };
      }
      setImmediate(() => reply.answer(200, {}, [Buffer.from(request.head.target)], request.head.target.length));
    }, sockets);
    client = connect(port, '127.0.0.1');
    let answers = 0;
    await new Promise<void>((resolve) => {
      client!.on('data', (chunk: Buffer) => {
        answers += chunk.toString('latin1').split('HTTP/1.1 200').length - 1;
        if (answers === 10) resolve();
        else client!.write(rawRequest(answers, 'x'));
      });
      client!.write(rawRequest(0, 'x'));
    });
    expect(pauses).toBe(0);
  });

  it('pauses a client that floods bytes behind an unanswered request: what it read stays within a few reads of one head', async () => {
    const sockets: Socket[] = [];
    const port = await start(() => {}, sockets); // never answers
    client = connect(port, '127.0.0.1');
    await new Promise<void>((resolve) => client!.on('connect', resolve));
    client.write(rawRequest(1, 'x'));
    // 64 MB behind it: far more than the loopback's buffers take once the server stops reading.
    const flood = Buffer.alloc(1024 * 1024, 0x61);
    for (let i = 0; i < 64; i++) client.write(flood);
    // Paused, and the stream's buffer full: from then on the server reads nothing more from the kernel.
    const socket = await new Promise<Socket>((resolve) => {
      const check = (): unknown => {
        const s = sockets[0];
        return s !== undefined && s.isPaused() && s.readableLength >= s.readableHighWaterMark ? resolve(s) : setTimeout(check, 20);
      };
      check();
    });
    const readThen = socket.bytesRead;
    // One head behind the request, then whatever the stream read before pausing took hold (a few 64 KB reads).
    expect(readThen).toBeLessThan(MAX_HEAD_BYTES + 1024 * 1024);
  });

  it('answers the request in flight, then 400 for a request its client cut short by ending while it was served', async () => {
    const sockets: Socket[] = [];
    const port = await start((request, reply) => {
      // Answered only once the client's end has been read behind the request (the reading goes on while served).
      const socket = sockets[0]!;
      const answer = (): void => reply.answer(200, {}, [Buffer.from('ok')], 2);
      if (socket.readableEnded) answer();
      else socket.once('end', () => setImmediate(answer));
    }, sockets);
    const cut = rawRequest(2, 'abcdef').slice(0, -3);
    const out = await exchange(port, [rawRequest(1, 'x') + cut], { answers: 2, endAfter: true });
    expect(out.text).toMatch(/^HTTP\/1\.1 200 OK\r\n[^]*\r\n\r\nokHTTP\/1\.1 400 Bad Request\r\n/);
    expect(out.closed).toBe(true);
  });
});
