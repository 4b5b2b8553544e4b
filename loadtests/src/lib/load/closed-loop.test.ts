import { describe, expect, it } from 'vitest';
import { runClosedLoop, sendClosedLoop } from './closed-loop.js';

describe('runClosedLoop', () => {
  it('keeps N calls in flight, counts the window only, and reads stats at its edges', async () => {
    let inFlight = 0;
    let maxInFlight = 0;
    const events: string[] = [];
    let calls = 0;
    const result = await runClosedLoop({
      concurrency: 4,
      warmupMs: 5,
      measureMs: 30,
      call: async () => {
        calls += 1;
        inFlight += 1;
        maxInFlight = Math.max(maxInFlight, inFlight);
        await new Promise((r) => setTimeout(r, 1));
        inFlight -= 1;
        if (calls % 5 === 0) throw new Error('boom');
        return { sendUs: 2, recvUs: 4 };
      },
      onWindowStart: async () => void events.push('start'),
      onWindowEnd: async () => void events.push(`end in flight ${inFlight}`),
    });
    expect(maxInFlight).toBe(4);
    expect(events[0]).toBe('start');
    expect(events).toHaveLength(2);
    expect(inFlight).toBe(0);
    expect(result.completed).toBeGreaterThan(0);
    expect(result.completed + result.errors).toBeLessThan(calls);
    expect(result.latency.count).toBe(result.completed);
    expect(result.firstError).toBe('boom');
    expect(result.clientSendUs).toBe(2);
    expect(result.clientRecvUs).toBe(4);
  });
});

describe('sendClosedLoop', () => {
  it('sends exactly the count, never more than the concurrency at once', async () => {
    let sent = 0;
    let inFlight = 0;
    let most = 0;
    await sendClosedLoop(37, 5, async () => {
      sent += 1;
      inFlight += 1;
      most = Math.max(most, inFlight);
      await new Promise((resolve) => setTimeout(resolve, 1));
      inFlight -= 1;
    });
    expect(sent).toBe(37);
    expect(most).toBe(5);
  });

  it('rejects when a call fails', async () => {
    await expect(sendClosedLoop(3, 2, async () => Promise.reject(new Error('refused')))).rejects.toThrow('refused');
  });
});
