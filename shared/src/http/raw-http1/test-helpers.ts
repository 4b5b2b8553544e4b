/**
 * Test-only: a node:http server with and without the raw front door, both answering node:http's requests the same
 * way, and a client that sends exact bytes and reads back what came, so a test can compare the two byte for byte
 * (Date aside) and count what the raw path served.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { connect } from 'node:net';
import type { AddressInfo } from 'node:net';
import { attachRawHttp1, type RawHttp1FrontDoor } from './front-door.js';
import type { RawRequest } from './connection.js';

export interface TestServer {
  readonly port: number;
  /** Requests the raw path served, as `target body`. */
  readonly rawServed: string[];
  readonly frontDoor: RawHttp1FrontDoor | undefined;
  close(): Promise<void>;
}

/** node:http's side: `node METHOD URL body`, after the body has been read. */
function nodeHttpAnswer(request: IncomingMessage, response: ServerResponse): void {
  const chunks: Buffer[] = [];
  request.on('data', (chunk: Buffer) => chunks.push(chunk));
  request.on('end', () => {
    const body = `node ${request.method} ${request.url} ${Buffer.concat(chunks).toString('latin1')}`;
    response.writeHead(200, { 'Content-Type': 'text/plain', 'Content-Length': String(Buffer.byteLength(body)) });
    response.end(body);
  });
}

/**
 * Starts a server; with `raw`, the front door serves `POST /raw...` (its answer: `raw TARGET body`, after `delayMs`)
 * and hands everything else over.
 */
export async function startTestServer(options: { raw: boolean; maxBodyBytes?: number; delayMs?: number; timeouts?: Partial<Pick<Server, 'headersTimeout' | 'requestTimeout' | 'keepAliveTimeout'>> }): Promise<TestServer> {
  const server = createServer(nodeHttpAnswer);
  Object.assign(server, options.timeouts ?? {});
  const rawServed: string[] = [];
  const frontDoor = options.raw
    ? attachRawHttp1(
        server,
        {
          accepts: (head) => head.target.startsWith('/raw'),
          serve: (request: RawRequest, reply) => {
            const text = `raw ${request.head.target} ${Buffer.from(request.body).toString('latin1')}`;
            rawServed.push(`${request.head.target} ${Buffer.from(request.body).toString('latin1')}`);
            const send = (): void => reply.answer(200, { 'Content-Type': 'text/plain' }, [Buffer.from(text, 'latin1')], Buffer.byteLength(text, 'latin1'));
            if (options.delayMs === undefined) queueMicrotask(send);
            else setTimeout(send, options.delayMs);
          },
        },
        options.maxBodyBytes ?? 1024 * 1024,
      )
    : undefined;
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    port: (server.address() as AddressInfo).port,
    rawServed,
    frontDoor,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
        frontDoor?.closeAll();
      }),
  };
}

export interface Exchange {
  /** Everything the server sent, with each Date header's and load figure's value blanked. */
  readonly text: string;
  /** Whether the server closed (or ended) the connection. */
  readonly closed: boolean;
}

/**
 * Sends `parts` (each its own write, `gapMs` apart) and reads until the server closes or `quietMs` passes with
 * nothing new after `answers` status lines have come.
 */
export function exchange(port: number, parts: readonly (string | Buffer)[], o: { answers?: number; quietMs?: number; gapMs?: number; endAfter?: boolean; capMs?: number } = {}): Promise<Exchange> {
  const quietMs = o.quietMs ?? 150;
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1');
    let received = '';
    let quiet: NodeJS.Timeout | undefined;
    const finish = (closed: boolean): void => {
      clearTimeout(quiet);
      clearTimeout(cap);
      socket.destroy();
      // Load figures too: they are the node's queue at the moment of the answer (two servers, two moments).
      resolve({ text: received.replace(/\r\nDate: [^\r]*/g, '\r\nDate: -').replace(/\r\n(tessera-queue-depth|tessera-inflight): \d+/g, '\r\n$1: -'), closed });
    };
    const arm = (): void => {
      clearTimeout(quiet);
      const lines = received.match(/HTTP\/1\.1 \d{3}/g)?.length ?? 0;
      if (lines >= (o.answers ?? 1)) quiet = setTimeout(() => finish(false), quietMs);
    };
    // Never longer than this: a test that waits for answers that do not come sees what did.
    const cap = setTimeout(() => finish(false), o.capMs ?? 8_000);
    socket.on('data', (chunk: Buffer) => {
      received += chunk.toString('latin1');
      arm();
    });
    socket.on('end', () => finish(true));
    socket.on('close', () => finish(true));
    socket.on('error', (error) => (received === '' ? reject(error) : finish(true)));
    socket.on('connect', async () => {
      for (const [i, part] of parts.entries()) {
        if (i > 0 && o.gapMs !== undefined) await new Promise((r) => setTimeout(r, o.gapMs));
        if (socket.destroyed) return;
        socket.write(typeof part === 'string' ? Buffer.from(part, 'latin1') : part);
      }
      if (o.endAfter === true) socket.end();
      arm();
    });
  });
}

/** A request the raw path serves: `POST /raw{n}` with `body`. */
export function rawRequest(n: number | string, body: string, extraHeaders = ''): string {
  return `POST /raw${n} HTTP/1.1\r\nHost: x\r\nContent-Length: ${Buffer.byteLength(body, 'latin1')}\r\n${extraHeaders}\r\n${body}`;
}
