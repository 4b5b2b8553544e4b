import { createServer, request, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { PassThrough } from 'node:stream';
import { afterEach, describe, expect, it } from 'vitest';
import { llmTenant as auth, silentMetrics as metrics, unlimitedLimiter as unlimited } from '../../../test/support/relay-fixtures.js';
import { OpenAIApiError } from '../../core/llm/openai-error.js';
import { SseRelay } from '../../core/llm/sse-relay.js';
import { CompletionMeter } from '../../core/llm/token-budget.js';
import { relayToResponse } from './relay-to-response.js';

const event = (text: string): string => `data: ${JSON.stringify({ choices: [{ index: 0, text, finish_reason: null }] })}\n\n`;

const newRelay = (): SseRelay =>
  new SseRelay({
    format: 'openai',
    countTokens: (text) => text.length,
    meter: new CompletionMeter(unlimited, metrics, auth, 'm'),
    overBudgetError: (ms) => new OpenAIApiError(429, 'over budget', 'tokens', null, 'rate_limit_exceeded', ms),
    abortUpstream: () => undefined,
    onEnd: () => undefined,
  });

let server: Server | undefined;
afterEach(() => server?.close());

/** Serves one relayed stream fed from `feed`; answers what the client read and when onStarted ran. */
interface AtStart {
  readonly headersSent: boolean;
  readonly written: number;
  /** Bytes the socket still held back (corked or buffered): 0 once they were handed to the kernel. */
  readonly heldBack: number;
}

async function serveOne(feed: (source: PassThrough) => void): Promise<{ body: string; started: AtStart[] }> {
  const started: AtStart[] = [];
  server = createServer((_req, res: ServerResponse) => {
    const source = new PassThrough();
    relayToResponse(source, newRelay(), res, { 'Content-Type': 'text/event-stream' }, () => {
      started.push({ headersSent: res.headersSent, written: res.socket?.bytesWritten ?? 0, heldBack: res.socket?.writableLength ?? -1 });
    });
    feed(source);
  });
  await new Promise<void>((resolve) => server!.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  const body = await new Promise<string>((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, method: 'POST', path: '/' }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => (text += chunk));
      res.on('end', () => resolve(text));
    });
    req.on('error', reject);
    req.end();
  });
  return { body, started };
}

describe('relayToResponse onStarted (the request recorded off the first event\'s path)', () => {
  it('runs once, after the status line and the first event were sent (not left corked for the next tick)', async () => {
    const { body, started } = await serveOne((source) => {
      source.write(event('one'));
      setTimeout(() => {
        source.write(event('two'));
        source.end('data: [DONE]\n\n');
      }, 20);
    });
    expect(body).toBe(`${event('one')}${event('two')}data: [DONE]\n\n`);
    expect(started).toHaveLength(1);
    expect(started[0]!.headersSent).toBe(true);
    expect(started[0]!.written).toBeGreaterThan(event('one').length);
    expect(started[0]!.heldBack).toBe(0);
  });

  it('runs once at the end when the node ended without an event', async () => {
    const { started } = await serveOne((source) => source.end());
    expect(started).toHaveLength(1);
  });
});
