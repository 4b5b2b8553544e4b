import { createServer as createHttpServer, type IncomingMessage, type Server as HttpServer, type ServerResponse } from 'node:http';
import { createServer as createNetServer, type AddressInfo, type Server as NetServer, type Socket } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { createRawHttpPool, encodeRawRequest, hostHeader, type RawHttpPool } from './raw-http.js';

const HOST = '127.0.0.1';
const servers: (HttpServer | NetServer)[] = [];
const pools: RawHttpPool[] = [];

afterEach(async () => {
  for (const pool of pools.splice(0)) pool.close();
  for (const server of servers.splice(0)) {
    (server as HttpServer).closeAllConnections?.();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }
});

async function listen<S extends HttpServer | NetServer>(server: S): Promise<{ server: S; port: number }> {
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, HOST, resolve));
  return { server, port: (server.address() as AddressInfo).port };
}

/** A node:http server; `sockets` counts the connections it accepted. */
async function httpServer(handler: (req: IncomingMessage, res: ServerResponse, body: string) => void) {
  const stats = { sockets: 0 };
  const server = createHttpServer((req, res) => {
    let body = '';
    req.on('data', (chunk: Buffer) => (body += chunk.toString()));
    req.on('end', () => handler(req, res, body));
  });
  server.on('connection', () => (stats.sockets += 1));
  return { ...(await listen(server)), stats };
}

/** A TCP server that answers each request's bytes with `onRequest`, for byte-exact answers. */
async function tcpServer(onRequest: (socket: Socket) => void) {
  return listen(createNetServer((socket) => socket.once('data', () => onRequest(socket))));
}

function pool(port: number, connections = 1): RawHttpPool {
  const created = createRawHttpPool({ host: HOST, port, connections });
  pools.push(created);
  return created;
}

const get = (port: number, path = '/'): Buffer => encodeRawRequest('GET', path, hostHeader(HOST, port), {});

describe('encodeRawRequest', () => {
  it('writes the request line, Host, headers, Content-Length and body', () => {
    const bytes = encodeRawRequest('POST', '/v2/x', 'h:1', { 'X-Key': 'k' }, Buffer.from('abc'));
    expect(bytes.toString()).toBe('POST /v2/x HTTP/1.1\r\nHost: h:1\r\nX-Key: k\r\nContent-Length: 3\r\n\r\nabc');
    expect(encodeRawRequest('GET', '/', 'h:1', {}).toString()).toBe('GET / HTTP/1.1\r\nHost: h:1\r\n\r\n');
    expect(encodeRawRequest('POST', '/', 'h:1', {}).toString()).toBe('POST / HTTP/1.1\r\nHost: h:1\r\nContent-Length: 0\r\n\r\n');
    expect(hostHeader('::1', 80)).toBe('[::1]:80');
  });

  it('refuses what would break the framing', () => {
    expect(() => encodeRawRequest('GET', '/', 'h', { 'x-a': 'v\r\nInjected: 1' })).toThrow("invalid value for header 'x-a'");
    expect(() => encodeRawRequest('GET', '/a b', 'h', {})).toThrow("invalid request path '/a b'");
    expect(() => encodeRawRequest('GET', '/', 'h', { 'Content-Length': '1' })).toThrow("header 'Content-Length' is set by encodeRawRequest");
  });
});

describe('createRawHttpPool', () => {
  it('reads Content-Length answers, sending the body and headers as given', async () => {
    const { port } = await httpServer((req, res, body) => {
      res.setHeader('X-Seen', `${req.method} ${req.url} ${req.headers['x-key']} ${body}`);
      res.end('done');
    });
    const response = await pool(port).request(encodeRawRequest('POST', '/p?q=1', hostHeader(HOST, port), { 'x-key': 'k1' }, Buffer.from('ping')));
    expect(response.status).toBe(200);
    expect(response.headers['x-seen']).toBe('POST /p?q=1 k1 ping');
    expect(response.headers['content-length']).toBe('4');
    expect(response.body.toString()).toBe('done');
  });

  it('reads chunked answers and keeps the connection for the next request', async () => {
    const { port, stats } = await httpServer((_req, res) => {
      res.statusCode = 404;
      res.write('not ');
      res.write('found');
      res.end();
    });
    const client = pool(port);
    for (let i = 0; i < 3; i++) {
      const response = await client.request(get(port));
      expect(response.status).toBe(404);
      expect(response.headers['transfer-encoding']).toBe('chunked');
      expect(response.body.toString()).toBe('not found');
    }
    expect(stats.sockets).toBe(1);
  });

  it('reads an answer written one byte at a time', async () => {
    const answer = 'HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nX-A: 1\r\n\r\n5\r\nhello\r\n0\r\n\r\n';
    const { port } = await tcpServer((socket) => {
      socket.setNoDelay(true);
      let i = 0;
      const next = (): void => {
        if (i < answer.length) socket.write(answer[i++] as string, () => setImmediate(next));
      };
      next();
    });
    const response = await pool(port).request(get(port));
    expect(response.headers).toEqual({ 'transfer-encoding': 'chunked', 'x-a': '1' });
    expect(response.body.toString()).toBe('hello');
  });

  it('reconnects after a Connection: close answer', async () => {
    let served = 0;
    const { port, stats } = await httpServer((_req, res) => {
      served += 1;
      if (served === 1) res.setHeader('Connection', 'close');
      res.end(`answer ${served}`);
    });
    const client = pool(port);
    expect((await client.request(get(port))).headers.connection).toBe('close');
    expect((await client.request(get(port))).body.toString()).toBe('answer 2');
    expect((await client.request(get(port))).body.toString()).toBe('answer 3');
    expect(stats.sockets).toBe(2);
  });

  it('reconnects after the server closed an idle connection', async () => {
    const { server, port, stats } = await httpServer((_req, res) => res.end('ok'));
    server.keepAliveTimeout = 50;
    const closed = new Promise<void>((resolve) => server.once('connection', (socket: Socket) => socket.once('close', () => resolve())));
    const client = pool(port);
    expect((await client.request(get(port))).body.toString()).toBe('ok');
    await closed;
    await new Promise((resolve) => setTimeout(resolve, 50)); // lets the client read the FIN too
    expect((await client.request(get(port))).body.toString()).toBe('ok');
    expect(stats.sockets).toBe(2);
  });

  it('reads a body delimited by the end of the connection', async () => {
    const { port } = await tcpServer((socket) => socket.end('HTTP/1.1 200 OK\r\nX-A: 1\r\n\r\nuntil the end'));
    const client = pool(port);
    expect((await client.request(get(port))).body.toString()).toBe('until the end');
    expect((await client.request(get(port))).body.toString()).toBe('until the end');
  });

  it('queues requests beyond the pool size and serves them in order', async () => {
    let served = 0;
    const { port, stats } = await httpServer((_req, res, body) => {
      served += 1;
      res.end(`${body}@${served}`);
    });
    const client = pool(port, 2);
    const host = hostHeader(HOST, port);
    const answers = await Promise.all(
      ['a', 'b', 'c', 'd', 'e'].map((body) => client.request(encodeRawRequest('POST', '/', host, {}, Buffer.from(body)))),
    );
    expect(answers.map((a) => a.body.toString().split('@')[0])).toEqual(['a', 'b', 'c', 'd', 'e']);
    expect(stats.sockets).toBe(2);
  });

  it('rejects when the server resets the connection, then reconnects', async () => {
    let requests = 0;
    const { port } = await tcpServer((socket) => {
      requests += 1;
      if (requests === 1) socket.resetAndDestroy();
      else socket.end('HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok');
    });
    const client = pool(port);
    await expect(client.request(get(port))).rejects.toThrow(new RegExp(`^connection to 127\\.0\\.0\\.1:${port}: read ECONNRESET$`));
    expect((await client.request(get(port))).body.toString()).toBe('ok');
  });

  it('rejects when the server closes mid-answer or without answering', async () => {
    const { port } = await tcpServer((socket) => socket.end('HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nabc'));
    await expect(pool(port).request(get(port))).rejects.toThrow(`connection to 127.0.0.1:${port} closed before the response was complete`);
    const silent = await tcpServer((socket) => socket.end());
    await expect(pool(silent.port).request(get(silent.port))).rejects.toThrow(`connection to 127.0.0.1:${silent.port} closed without answering`);
  });

  it('rejects a refused connection', async () => {
    const { server, port } = await listen(createNetServer());
    await new Promise<void>((resolve) => server.close(() => resolve()));
    servers.splice(servers.indexOf(server), 1);
    await expect(pool(port).request(get(port))).rejects.toThrow(`cannot connect to 127.0.0.1:${port}: connect ECONNREFUSED 127.0.0.1:${port}`);
  });

  it('rejects a malformed answer', async () => {
    const { port } = await tcpServer((socket) => socket.write('HTTP/1.1 OK\r\n\r\n'));
    await expect(pool(port).request(get(port))).rejects.toThrow(`127.0.0.1:${port}: malformed HTTP response: invalid status line 'HTTP/1.1 OK'`);
  });

  it('close() rejects the requests in flight and waiting, and later ones', async () => {
    const { port } = await tcpServer(() => undefined); // never answers
    const client = pool(port);
    const inFlight = client.request(get(port));
    const waiting = client.request(get(port));
    await new Promise((resolve) => setTimeout(resolve, 20));
    client.close();
    await expect(inFlight).rejects.toThrow('the HTTP connection pool was closed');
    await expect(waiting).rejects.toThrow('the HTTP connection pool was closed');
    await expect(client.request(get(port))).rejects.toThrow('the HTTP connection pool is closed');
  });
});
