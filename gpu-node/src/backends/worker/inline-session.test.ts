import { describe, expect, it } from 'vitest';
import { TesseraError } from '../../../../shared/src/errors/index.js';
import { openInlineSession } from './inline-session.js';
import type { SessionFactory } from './session-host.js';
import type { ExecuteContext } from './worker-runtime.js';

type Step = (body: string, context: ExecuteContext) => Promise<string>;

/** A session factory whose executes do what each test hands them, recording what happened. */
function factory(step: Step) {
  const events: string[] = [];
  const made: SessionFactory<string, { model: string }, string, string> = {
    async open(init) {
      if (init === 'broken') throw TesseraError.invalidArg('cannot load broken');
      events.push(`open ${init}`);
      return {
        info: { model: init },
        session: {
          execute: async (body, context) => ({ body: await step(body, context), transfer: [] }),
          close: async () => void events.push('close'),
        },
      };
    },
  };
  return { made, events };
}

const tick = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

describe('inline session', () => {
  it('runs the batches of one session one at a time, in the order they came', async () => {
    const log: string[] = [];
    const { made } = factory(async (body) => {
      log.push(`start ${body}`);
      await tick();
      await tick();
      log.push(`end ${body}`);
      return body.toUpperCase();
    });
    const session = await openInlineSession(made, 'm', 'm_0');
    expect(session.info).toEqual({ model: 'm' });
    const answers = await Promise.all([session.call('a'), session.call('b'), session.call('c')]);
    expect(answers).toEqual(['A', 'B', 'C']);
    expect(log).toEqual(['start a', 'end a', 'start b', 'end b', 'start c', 'end c']);
  });

  it("gives the model each request's own signal, and a never-aborted one where the request has none", async () => {
    const seen: boolean[][] = [];
    const { made } = factory(async (_body, context) => {
      seen.push([context.signal(0).aborted, context.signal(1).aborted, context.signal(2).aborted]);
      return 'ok';
    });
    const session = await openInlineSession(made, 'm', 'm_0');
    const gone = new AbortController();
    gone.abort();
    await session.call('x', [], { signals: [undefined, gone.signal] });
    expect(seen).toEqual([[false, true, false]]);
  });

  it('hands partial answers to the caller before the call settles, and refuses them afterwards', async () => {
    let late: ExecuteContext | undefined;
    const { made } = factory(async (body, context) => {
      context.partial(`${body}-1`);
      context.partial(`${body}-2`);
      late = context;
      return 'final';
    });
    const session = await openInlineSession(made, 'm', 'm_0');
    const partials: unknown[] = [];
    expect(await session.call('p', [], { onPartial: (b) => partials.push(b) })).toBe('final');
    expect(partials).toEqual(['p-1', 'p-2']);
    expect(() => late?.partial('too late')).toThrow(/complete/);
  });

  it("fails a call with the model's error as a TesseraError, and serves the next call", async () => {
    const { made } = factory(async (body) => {
      if (body === 'bad') throw TesseraError.invalidArg('bad input');
      if (body === 'crash') throw new Error('boom');
      return 'fine';
    });
    const session = await openInlineSession(made, 'm', 'm_0');
    await expect(session.call('bad')).rejects.toMatchObject({ code: 'INVALID_ARG', message: 'bad input' });
    const crash = session.call('crash');
    await expect(crash).rejects.toBeInstanceOf(TesseraError);
    await expect(crash).rejects.toMatchObject({ code: 'INTERNAL', message: expect.stringContaining('boom') });
    expect(await session.call('ok')).toBe('fine');
  });

  it('rejects a load that fails with the loader error, as a TesseraError', async () => {
    const { made } = factory(async () => 'never');
    await expect(openInlineSession(made, 'broken', 'broken_0')).rejects.toMatchObject({ code: 'INVALID_ARG', message: 'cannot load broken' });
  });

  it('closes once, after the batch in progress, and refuses calls afterwards', async () => {
    let release: () => void = () => {};
    const { made, events } = factory(async (body) => {
      await new Promise<void>((resolve) => (release = resolve));
      events.push(`ran ${body}`);
      return body;
    });
    const session = await openInlineSession(made, 'm', 'm_0');
    const running = session.call('first');
    await tick();
    const closing = session.close();
    release();
    expect(await running).toBe('first');
    await closing;
    await session.close();
    expect(events).toEqual(['open m', 'ran first', 'close']);
    await expect(session.call('after')).rejects.toMatchObject({ code: 'UNAVAILABLE', message: 'instance m_0 is closed' });
  });
});
