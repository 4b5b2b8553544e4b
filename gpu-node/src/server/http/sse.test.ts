import { describe, expect, it } from 'vitest';
import { MAX_BUFFERED_EVENT_BYTES, sseResponse } from './sse.js';

describe('sseResponse', () => {
  it('frames events as data lines and ends when the producer settles', async () => {
    const response = await sseResponse(new AbortController().signal, async (w) => {
      w.data('{"a":1}');
      await Promise.resolve();
      w.data('[DONE]');
    }, () => undefined);
    expect(response.headers.get('content-type')).toBe('text/event-stream; charset=utf-8');
    expect(await response.text()).toBe('data: {"a":1}\n\ndata: [DONE]\n\n');
  });

  it('rejects with the error when the producer fails before its first event; later failures go to onError', async () => {
    await expect(sseResponse(new AbortController().signal, () => Promise.reject(new Error('refused')), () => undefined)).rejects.toThrow('refused');
    const late = await sseResponse(
      new AbortController().signal,
      async (w) => {
        w.data('1');
        await Promise.resolve();
        throw new Error('late');
      },
      (error, w) => w.data(`error ${(error as Error).message}`),
    );
    expect(await late.text()).toBe('data: 1\n\ndata: error late\n\n');
  });

  it('aborts the producer when the client aborts, and when a client does not read past the bound', async () => {
    const client = new AbortController();
    let seen: AbortSignal | undefined;
    const response = await sseResponse(client.signal, async (w) => {
      seen = w.signal;
      w.data('x');
      await new Promise((resolve) => w.signal.addEventListener('abort', resolve, { once: true }));
    }, () => undefined);
    client.abort();
    expect(seen?.aborted).toBe(true);
    await response.body?.cancel();

    let flooded: AbortSignal | undefined;
    const unread = await sseResponse(new AbortController().signal, async (w) => {
      flooded = w.signal;
      const chunk = 'y'.repeat(64 * 1024);
      for (let i = 0; i * chunk.length <= MAX_BUFFERED_EVENT_BYTES + chunk.length && !w.signal.aborted; i++) w.data(chunk);
    }, () => undefined);
    expect(flooded?.aborted).toBe(true);
    await unread.body?.cancel().catch(() => undefined);
  });
});
