/**
 * The fast path's request makes its AbortSignal (and the 'close' listener behind it) only when the
 * core reads `signal`. Whenever that happens, it must agree with the connection: a signal made after
 * the client left is already aborted, one made before aborts when the client leaves, and `aborted`
 * tells without a signal. A stub serveInfer stands in for the core (the listener is what is tested);
 * real node:http server and client.
 */
import { createServer, request as httpRequest, type ClientRequest, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { silentLogger } from '../../../../shared/src/logging/index.js';
import { waitFor } from '../../../../shared/test/support/index.js';
import type { DirectInfer, DirectInferRequest } from '../../core/app/index.js';
import { createNativeInferListener } from './native-infer.js';

let server: Server | undefined;
afterEach(async () => {
  await new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve()));
  server = undefined;
});

/** A server whose infer path is served by `serveInfer` through the fast-path listener. */
async function serving(serveInfer: DirectInfer): Promise<number> {
  const listener = createNativeInferListener(serveInfer, silentLogger);
  server = createServer((incoming, outgoing) => {
    if (!listener(incoming, outgoing)) outgoing.writeHead(404).end();
  });
  await new Promise<void>((resolve) => server!.listen(0, '127.0.0.1', resolve));
  return (server.address() as AddressInfo).port;
}

function send(port: number): ClientRequest {
  const client = httpRequest({ host: '127.0.0.1', port, method: 'POST', path: '/v2/models/m/infer', headers: { 'content-length': '2' } });
  client.on('error', () => undefined);
  client.write('{}');
  return client;
}

describe('node:http fast path: the lazily made signal', () => {
  it('knows the client left without a signal, and a signal made afterwards is already aborted', async () => {
    let received!: DirectInferRequest;
    let answer!: (value: { status: number; headers: Record<string, string>; body: string }) => void;
    const port = await serving((request) => {
      received = request;
      return new Promise((resolve) => (answer = resolve));
    });
    const client = send(port);
    await waitFor(() => received);
    expect(received.cancel?.aborted).toBe(false);
    client.destroy();
    await waitFor(() => received.cancel?.aborted === true);
    expect(received.signal.aborted).toBe(true);
    answer({ status: 200, headers: {}, body: 'late' }); // written nowhere, and no crash
  });

  it('aborts a signal made while the client was there when the client leaves', async () => {
    let signal: AbortSignal | undefined;
    let received!: DirectInferRequest;
    const port = await serving((request) => {
      received = request;
      signal = request.signal;
      return new Promise(() => undefined);
    });
    const client = send(port);
    await waitFor(() => signal);
    expect(signal!.aborted).toBe(false);
    client.destroy();
    await waitFor(() => signal!.aborted);
    expect(received.cancel?.aborted).toBe(true);
  });

  it('answers a request that never read its signal, and the signal of an answered request stays quiet', async () => {
    let received!: DirectInferRequest;
    const port = await serving(async (request) => {
      received = request;
      return { status: 200, headers: { 'Content-Type': 'text/plain' }, body: 'ok' };
    });
    const client = send(port);
    const [status, body] = await new Promise<[number, string]>((resolve) => {
      client.on('response', (response) => {
        let text = '';
        response.on('data', (chunk: Buffer) => (text += chunk.toString()));
        response.on('end', () => resolve([response.statusCode ?? 0, text]));
      });
      client.end();
    });
    expect([status, body]).toEqual([200, 'ok']);
    client.destroy();
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect([received.cancel?.aborted, received.signal.aborted]).toEqual([false, false]);
  });
});
