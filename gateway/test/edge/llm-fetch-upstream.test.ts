/**
 * The Workers build's LlmUpstream (fetch) against a real node:http server on loopback standing in for a
 * node's SSE route: chunks arrive as sent, aborting closes the server's response, and a refused
 * connection is UNAVAILABLE marked notAccepted.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { waitFor } from '../../../shared/test/support/index.js';
import { createFetchLlmUpstream } from '../../src/adapters/workers/llm-fetch-upstream.js';
import type { NodeView } from '../../src/core/ports/index.js';
import { deadAddress } from '../support/test-node-process.js';

describe('createFetchLlmUpstream', () => {
  let server: Server;
  let closedEarly = 0;
  let node: NodeView;

  beforeAll(async () => {
    server = createServer((req, res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      let i = 0;
      const timer = setInterval(() => {
        if (i === 200) {
          clearInterval(timer);
          res.end('data: [DONE]\n\n');
          return;
        }
        res.write(`data: {"n":${i++}}\n\n`);
      }, 2);
      res.on('close', () => {
        clearInterval(timer);
        if (!res.writableFinished) closedEarly += 1;
      });
      req.resume();
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    node = { id: 'n', httpAddress: `127.0.0.1:${(server.address() as AddressInfo).port}`, grpcAddress: null, draining: false, models: new Map(), localInflight: 0 };
  });

  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

  it('streams the answer chunk by chunk; aborting closes the connection to the node', async () => {
    const abort = new AbortController();
    const upstream = createFetchLlmUpstream();
    const response = await upstream.send(node, { method: 'POST', path: '/v1/completions', body: new TextEncoder().encode('{}'), signal: abort.signal, headersTimeoutMs: 5000 });
    expect(response.status).toBe(200);
    expect(response.headers['content-type']).toBe('text/event-stream');
    let text = '';
    for await (const chunk of response.body) {
      text += new TextDecoder().decode(chunk);
      if (text.includes('"n":3')) break; // the client leaves mid-stream
    }
    expect(text.startsWith('data: {"n":0}')).toBe(true);
    abort.abort();
    await waitFor(() => closedEarly === 1, { what: 'the server to see its response closed early' });
  });

  it('a refused connection is UNAVAILABLE marked notAccepted', async () => {
    const upstream = createFetchLlmUpstream();
    const dead = { ...node, httpAddress: await deadAddress() };
    await expect(upstream.send(dead, { method: 'GET', path: '/v1/models', signal: new AbortController().signal, headersTimeoutMs: 5000 })).rejects.toMatchObject({
      code: 'UNAVAILABLE',
      notAccepted: true,
    });
  });
});
