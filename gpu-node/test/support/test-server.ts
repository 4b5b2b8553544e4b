/**
 * Test harness: a real HTTP server on 127.0.0.1 with a port picked by the OS, over a FakeNodeCore,
 * plus a recording logger so tests can assert that caller mistakes are never logged as our bugs.
 */
import { request } from 'node:http';
import type { LogFields } from '../../../shared/src/logging/index.js';
import { FakeNodeCore } from './fake-node-core.js';
import { createHttpServer, type HttpServer } from '../../src/server/http/http-server.js';
import type { HttpServerOptions } from '../../src/server/http/server-options.js';

export interface TestServer {
  readonly core: FakeNodeCore;
  readonly server: HttpServer;
  readonly url: string;
  readonly port: number;
  readonly errors: { message: string; fields?: LogFields }[];
  close(): Promise<void>;
}

export async function startTestServer(options: HttpServerOptions = {}, core = new FakeNodeCore()): Promise<TestServer> {
  const errors: { message: string; fields?: LogFields }[] = [];
  const logger = {
    error: (message: string, fields?: LogFields) => errors.push({ message, ...(fields ? { fields } : {}) }),
    warn: () => undefined,
  };
  const server = createHttpServer(core, { logger, ...options });
  const { port } = await server.listen(0, '127.0.0.1');
  return {
    core,
    server,
    url: `http://127.0.0.1:${port}`,
    port,
    errors,
    close: () => server.close({ graceMs: 200 }),
  };
}

export interface RawResponse {
  readonly status: number;
  readonly headers: Record<string, string | string[] | undefined>;
  /** The body exactly as sent (fetch would transparently decompress it). */
  readonly body: Buffer;
}

/** One request over node:http, without fetch's transparent decompression. */
export function rawRequest(
  url: string,
  options: { method?: string; headers?: Record<string, string>; body?: Uint8Array },
): Promise<RawResponse> {
  return new Promise((resolve, reject) => {
    const req = request(url, { method: options.method ?? 'POST', headers: options.headers ?? {} }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks) }));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end(options.body === undefined ? undefined : Buffer.from(options.body));
  });
}

/** An infer body of the binary extension: JSON header, then the sections, plus its header length. */
export function binaryBody(header: unknown, ...sections: Uint8Array[]): { body: Uint8Array; headerLength: string } {
  const json = Buffer.from(JSON.stringify(header));
  return { body: Buffer.concat([json, ...sections]), headerLength: String(json.length) };
}

/** Splits a binary-extension response body into its JSON header and the rest. */
export function splitBinaryResponse(body: Buffer, headerLength: string | undefined): { json: unknown; rest: Buffer } {
  const length = Number(headerLength ?? body.length);
  return { json: JSON.parse(body.subarray(0, length).toString('utf8')), rest: body.subarray(length) };
}
