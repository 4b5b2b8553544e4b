import { getEventListeners } from 'node:events';
import { describe, expect, it } from 'vitest';
import { abortWatcherCount, unwatchAbort, watchAbort, type AbortHandler } from './abort-watch.js';

function recorder(calls: string[], name: string): AbortHandler {
  return { handleEvent: () => calls.push(name) };
}

describe('watchAbort', () => {
  it('tells each handler still watching once, in the order added, through one listener on the signal', () => {
    const controller = new AbortController();
    const calls: string[] = [];
    const [a, b, c] = [recorder(calls, 'a'), recorder(calls, 'b'), recorder(calls, 'c')];
    watchAbort(controller.signal, a);
    watchAbort(controller.signal, b);
    watchAbort(controller.signal, c);
    unwatchAbort(controller.signal, b);
    expect(getEventListeners(controller.signal, 'abort')).toHaveLength(1);
    expect(abortWatcherCount(controller.signal)).toBe(2);
    controller.abort();
    controller.abort();
    expect(calls).toEqual(['a', 'c']);
    expect(abortWatcherCount(controller.signal)).toBe(0);
    expect(getEventListeners(controller.signal, 'abort')).toHaveLength(0);
  });

  it('leaves nothing per request on a shared signal once its handlers are unwatched', () => {
    const controller = new AbortController();
    const calls: string[] = [];
    for (let i = 0; i < 1000; i++) {
      const handler = recorder(calls, String(i));
      watchAbort(controller.signal, handler);
      unwatchAbort(controller.signal, handler);
    }
    expect(abortWatcherCount(controller.signal)).toBe(0);
    expect(getEventListeners(controller.signal, 'abort')).toHaveLength(1);
    const last = recorder(calls, 'last');
    watchAbort(controller.signal, last);
    controller.abort();
    expect(calls).toEqual(['last']);
  });

  it('still tells the others when a handler unwatches one of them while firing, or throws', async () => {
    const controller = new AbortController();
    const calls: string[] = [];
    const second = recorder(calls, 'second');
    const uncaught: unknown[] = [];
    const onUncaught = (error: unknown): void => void uncaught.push(error);
    process.prependListener('uncaughtException', onUncaught);
    try {
      watchAbort(controller.signal, { handleEvent: () => unwatchAbort(controller.signal, second) });
      watchAbort(controller.signal, second);
      watchAbort(controller.signal, {
        handleEvent: () => {
          throw new Error('listener failed');
        },
      });
      watchAbort(controller.signal, recorder(calls, 'after the throw'));
      controller.abort();
      await new Promise((resolve) => setImmediate(resolve));
    } finally {
      process.off('uncaughtException', onUncaught);
    }
    // The set was taken off the map before the loop: the unwatch during firing changes nothing.
    expect(calls).toEqual(['second', 'after the throw']);
    expect(uncaught).toHaveLength(1);
  });
});
