/**
 * A minimal HTTP/1.1 client over net.Socket for the load generator. The benchmarks run the generator on
 * the machine that runs the servers under test, so every microsecond of client CPU is taken from them;
 * node:http costs ~70 us of CPU per request, a bare socket ~13 us (perf_analyzer, which we emulate, is
 * lean C++). What makes it cheap:
 *
 * - requests are pre-encoded Buffers (`encodeRawRequest`), built once and re-sent as they are;
 * - one request outstanding per connection, no pipelining: a response is whatever the connection
 *   delivers next, so no request/response matching is needed (and servers handle it like perf_analyzer);
 * - keep-alive connections with Nagle off (`setNoDelay`), since each request is one small write;
 * - a response parser that does not copy bodies (raw-http-response.ts).
 *
 * A pool owns N connections, opened on first use; requests beyond N wait in FIFO order. A connection
 * the server closes (a `Connection: close` answer, an idle timeout) reconnects on its next request.
 * Connection failures reject the request in flight with an Error naming the server; nothing is retried,
 * since a load generator must count failures, not hide them. HEAD requests are not supported (their
 * answers carry a Content-Length without a body).
 */
import { connect, type Socket } from 'node:net';
import { MalformedResponseError, ResponseParser, type RawHttpResponse } from './raw-http-response.js';

export type { RawHttpResponse } from './raw-http-response.js';

const TOKEN = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;
/** Field values: visible ASCII, tabs, spaces and obs-text; a CR or LF would smuggle in a header. */
const FIELD_VALUE = /^[\t\x20-\x7e\x80-\xff]*$/;
const REQUEST_TARGET = /^[\x21-\x7e]+$/;
/** Headers the encoder writes itself from its arguments. */
const RESERVED = new Set(['host', 'content-length', 'transfer-encoding']);

/** `host:port` for the Host header (IPv6 literals in brackets). */
export function hostHeader(host: string, port: number): string {
  return `${host.includes(':') ? `[${host}]` : host}:${port}`;
}

/**
 * One complete request: request line, Host, the given headers, Content-Length (when there is a body,
 * or for methods other than GET whose empty body must be announced), then the body. Throws on names
 * or values that would break the framing, so a bad header fails once here rather than on the wire.
 */
export function encodeRawRequest(
  method: string,
  path: string,
  host: string,
  headers: Readonly<Record<string, string>>,
  body?: Uint8Array,
): Buffer {
  if (!TOKEN.test(method)) throw new Error(`invalid HTTP method '${method}'`);
  if (!REQUEST_TARGET.test(path)) throw new Error(`invalid request path '${path}'`);
  if (!FIELD_VALUE.test(host)) throw new Error(`invalid host '${host}'`);
  let head = `${method} ${path} HTTP/1.1\r\nHost: ${host}\r\n`;
  for (const [name, value] of Object.entries(headers)) {
    if (!TOKEN.test(name)) throw new Error(`invalid header name '${name}'`);
    if (RESERVED.has(name.toLowerCase())) throw new Error(`header '${name}' is set by encodeRawRequest`);
    if (!FIELD_VALUE.test(value)) throw new Error(`invalid value for header '${name}'`);
    head += `${name}: ${value}\r\n`;
  }
  if (body !== undefined || method !== 'GET') head += `Content-Length: ${body?.length ?? 0}\r\n`;
  head += '\r\n';
  const headBytes = Buffer.from(head, 'latin1');
  return body === undefined || body.length === 0 ? headBytes : Buffer.concat([headBytes, body]);
}

interface Pending {
  readonly resolve: (response: RawHttpResponse) => void;
  readonly reject: (error: Error) => void;
}

interface Waiter extends Pending {
  readonly request: Buffer;
}

/** One keep-alive socket carrying one request at a time; reconnects when the last socket is gone. */
class Connection {
  private socket: Socket | undefined;
  private connected = false;
  private parser = new ResponseParser();
  private current: Pending | undefined;

  constructor(
    private readonly host: string,
    private readonly port: number,
    /** Called when the connection can take the next request (after an answer or a failure). */
    private readonly onFree: (connection: Connection) => void,
  ) {}

  send(request: Buffer, pending: Pending): void {
    this.current = pending;
    // Writes before the connection is up are queued by net.Socket and sent on connect.
    (this.socket ?? this.open()).write(request);
  }

  destroy(error: Error): void {
    const socket = this.socket;
    this.socket = undefined;
    socket?.destroy();
    this.settle(undefined, error, false);
  }

  private open(): Socket {
    const socket = connect({ host: this.host, port: this.port });
    socket.setNoDelay(true);
    this.socket = socket;
    this.connected = false;
    this.parser = new ResponseParser();
    // Every handler first checks that the socket is still ours: a replaced socket's late events are noise.
    socket.on('connect', () => {
      if (socket === this.socket) this.connected = true;
    });
    socket.on('data', (chunk: Buffer) => this.onData(socket, chunk));
    socket.on('error', (error: Error) => this.onError(socket, error));
    // The server's FIN on an idle socket (its keep-alive timeout): forget the socket at once rather than
    // at 'close', so a request sent in between goes to a new connection instead of failing.
    socket.on('end', () => {
      if (socket === this.socket && this.current === undefined) this.drop(socket);
    });
    socket.on('close', () => this.onClose(socket));
    return socket;
  }

  private onData(socket: Socket, chunk: Buffer): void {
    if (socket !== this.socket) return;
    if (this.current === undefined) {
      // Bytes nobody asked for: the next answer on this socket could not be trusted.
      this.drop(socket);
      return;
    }
    let response: RawHttpResponse | undefined;
    try {
      response = this.parser.push(chunk);
    } catch (error) {
      this.drop(socket);
      this.settle(undefined, this.describe(error as Error), true);
      return;
    }
    if (response === undefined) return;
    if (!this.parser.reusable) this.drop(socket);
    this.settle(response, undefined, true);
  }

  private onError(socket: Socket, error: Error): void {
    if (socket !== this.socket) return;
    this.drop(socket);
    this.settle(undefined, this.describe(error), true);
  }

  private onClose(socket: Socket): void {
    if (socket !== this.socket) return;
    this.socket = undefined;
    if (this.current === undefined) return; // closed while idle (a server's keep-alive timeout)
    const response = this.parser.end(); // a body delimited by the close is complete now
    if (response !== undefined) {
      this.settle(response, undefined, true);
      return;
    }
    const what = this.parser.started ? 'before the response was complete' : 'without answering';
    this.settle(undefined, new Error(`connection to ${this.where()} closed ${what}`), true);
  }

  private drop(socket: Socket): void {
    if (socket === this.socket) this.socket = undefined;
    socket.destroy();
  }

  private settle(response: RawHttpResponse | undefined, error: Error | undefined, free: boolean): void {
    const pending = this.current;
    if (pending === undefined) return;
    this.current = undefined;
    if (error !== undefined) pending.reject(error);
    else pending.resolve(response as RawHttpResponse);
    if (free) this.onFree(this);
  }

  private describe(error: Error): Error {
    if (error instanceof MalformedResponseError) return new Error(`${this.where()}: ${error.message}`, { cause: error });
    const phase = this.connected ? 'connection to' : 'cannot connect to';
    return new Error(`${phase} ${this.where()}: ${error.message}`, { cause: error });
  }

  private where(): string {
    return hostHeader(this.host, this.port);
  }
}

export interface RawHttpPool {
  /** Sends one encoded request (see encodeRawRequest); rejects on connection failures and malformed answers. */
  request(request: Buffer): Promise<RawHttpResponse>;
  /** Destroys every connection; requests in flight or waiting reject. */
  close(): void;
}

export interface RawHttpPoolOptions {
  readonly host: string;
  readonly port: number;
  /** Connections, i.e. requests in flight at most. */
  readonly connections: number;
}

export function createRawHttpPool(options: RawHttpPoolOptions): RawHttpPool {
  if (!Number.isInteger(options.connections) || options.connections < 1) {
    throw new Error(`connections must be a positive integer, got ${options.connections}`);
  }
  const all: Connection[] = [];
  const idle: Connection[] = [];
  const waiting: Waiter[] = [];
  let closed = false;

  const onFree = (connection: Connection): void => {
    if (closed) return;
    const next = waiting.shift();
    if (next !== undefined) connection.send(next.request, next);
    else idle.push(connection);
  };

  return {
    request(request) {
      if (closed) return Promise.reject(new Error('the HTTP connection pool is closed'));
      return new Promise<RawHttpResponse>((resolve, reject) => {
        let connection = idle.pop();
        if (connection === undefined && all.length < options.connections) {
          connection = new Connection(options.host, options.port, onFree);
          all.push(connection);
        }
        if (connection !== undefined) connection.send(request, { resolve, reject });
        else waiting.push({ request, resolve, reject });
      });
    },
    close() {
      if (closed) return;
      closed = true;
      const error = new Error('the HTTP connection pool was closed');
      for (const connection of all) connection.destroy(error);
      for (const waiter of waiting.splice(0)) waiter.reject(error);
      idle.length = 0;
    },
  };
}
