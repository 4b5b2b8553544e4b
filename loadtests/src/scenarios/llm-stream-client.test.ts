/**
 * The llm-batching bench's whole-request baselines, against a real node:http server on loopback that
 * streams one SSE event per requested token: the static batch asks every row for the batch's longest
 * length and counts only each row's own tokens; the shrinking batch asks each row for its own.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mulberry32 } from '../../../gpu-node/src/example-models/prng.js';
import { closedLoop, outputLength, streamOnce, wholeRequestBatch, windowFigures } from './llm-stream-client.js';

let server: Server;
let base: string;
/** max_tokens of every request the server saw, in arrival order. */
const asked: number[] = [];
/** How each response ended: 'end' (all its tokens written) or 'closed' (the client went away first). */
const endings: ('end' | 'closed')[] = [];

beforeAll(async () => {
  server = createServer((req, res) => {
    let body = '';
    req.on('data', (chunk: Buffer) => (body += chunk.toString()));
    req.on('end', () => {
      const { sampling_parameters: sampling } = JSON.parse(body) as { sampling_parameters: string };
      const maxTokens = (JSON.parse(sampling) as { max_tokens: number }).max_tokens;
      asked.push(maxTokens);
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      let sent = 0;
      res.once('close', () => endings.push(res.writableFinished ? 'end' : 'closed'));
      const next = (): void => {
        if (res.destroyed) return;
        if (sent === maxTokens) return void res.end();
        sent += 1;
        res.write(`data: {"text_output":"x"}\n\n`);
        setTimeout(next, 1);
      };
      next();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

describe('whole-request baselines', () => {
  it('a row kept past its own end counts only its own tokens, ending at its last useful event', async () => {
    const record = await streamOnce(base, 'm', 'p', 10, 4);
    expect(record).toMatchObject({ ok: true, tokens: 4 });
    expect(record.eventMs).toHaveLength(3);
    expect(record.endMs).toBe(record.eventMs[2]);
    // The window sees 4 tokens, not 10.
    const figures = windowFigures([record], record.startMs - 1, record.startMs + 60_000);
    expect(figures.tokensPerSecond * 60.001).toBeCloseTo(4, 5);
  });

  it('static asks every row for the batch longest length; shrinking asks each for its own', async () => {
    asked.length = 0;
    const shrinking = await wholeRequestBatch(base, 'm', 4, mulberry32(5), 'shrinking');
    const own = [...asked];
    // Lengths that differ, so static and shrinking ask for different things.
    expect(new Set(own).size).toBeGreaterThan(1);
    asked.length = 0;
    const fixed = await wholeRequestBatch(base, 'm', 4, mulberry32(5), 'static');
    // Same draws: each row's own length in the shrinking batch, the longest of them for every static row.
    expect(asked).toEqual(own.map(() => Math.max(...own)));
    expect(fixed.map((r) => r.tokens).sort()).toEqual([...own].sort());
    expect(shrinking.map((r) => r.tokens).sort()).toEqual([...own].sort());
    expect(Math.min(...own)).toBeGreaterThanOrEqual(outputLength(() => 0));
  });

  it('runs a planned batch (a mirrored pair\'s lengths) to its longest, counting each row\'s own tokens', async () => {
    asked.length = 0;
    const planned = await wholeRequestBatch(base, 'm', 4, mulberry32(5), 'static', [9, 30, 12, 17]);
    expect(asked).toEqual([30, 30, 30, 30]);
    expect(planned.map((r) => r.tokens)).toEqual([9, 30, 12, 17]);
  });
});

describe('closed loop cut at the window end', () => {
  it('cancels the streams still open at untilMs: each record is cut with the tokens it read, and the server saw the client leave', async () => {
    endings.length = 0;
    // 100,000 tokens at one per millisecond or slower: never read to the end within the test.
    const untilMs = performance.now() + 2000;
    const records = await closedLoop(base, 'm', 3, untilMs, 1, 100_000, false, true);
    expect(records).toHaveLength(3);
    for (const r of records) {
      expect(r.cut).toBe(true);
      expect(r.ok).toBe(true);
      expect(r.tokens).toBeLessThan(100_000);
      expect(r.tokens).toBe(r.eventMs.length + (r.firstMs >= 0 ? 1 : 0));
    }
    await new Promise<void>((resolve) => {
      const wait = (): void => void (endings.length >= 3 ? resolve() : setTimeout(wait, 10));
      wait();
    });
    expect(endings).toEqual(['closed', 'closed', 'closed']);
  });

  it('a cut request without a first token is neither a request nor an error of the window', () => {
    const cut = { startMs: 10, firstMs: Number.NaN, endMs: 20, eventMs: [], tokens: 0, ok: true, cut: true };
    const figures = windowFigures([cut], 0, 100);
    expect(figures).toMatchObject({ requests: 0, errors: 0, tokensPerSecond: 0 });
  });
});
