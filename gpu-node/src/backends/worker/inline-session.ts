/**
 * A session run on the calling (main) thread instead of a pooled worker thread, behind the same surface
 * (PooledSession). For a tiny model the thread hop costs more than the model: two postMessages, a wake-up
 * of the worker and, on a busy core, two context switches per batch. Batches still run one at a time
 * per session, errors still arrive as TesseraErrors and cancellation reaches the model through the
 * request's own signal, so the instance keeps the semantics it has in a thread.
 */
import { TesseraError } from '../../../../shared/src/errors/index.js';
import { fromWire } from './batch-answers.js';
import type { CallOptions } from './instance-worker.js';
import type { PooledSession } from './pool-thread.js';
import type { HostedSession, SessionFactory } from './session-host.js';
import { wireError, type ExecuteContext } from './worker-runtime.js';

/** The signal of a request that came without one: never aborted. */
const NEVER_ABORTED = new AbortController().signal;

export async function openInlineSession<Init, Info, Req, Res>(
  factory: SessionFactory<Init, Info, Req, Res>,
  init: Init,
  instanceName: string,
): Promise<PooledSession<Info, Req, Res>> {
  let opened: { readonly info: Info; readonly session: HostedSession<Req, Res> };
  try {
    opened = await factory.open(init);
  } catch (error) {
    // The same error the pool's open-failed message carries.
    throw fromWire(wireError(error));
  }
  const session = opened.session;
  let released = false;
  // The tail of the batches of this session: each starts once the one before it has settled.
  let queue: Promise<unknown> = Promise.resolve();
  // Batches called and not yet settled; 0 means nothing runs and the tail has settled.
  let pending = 0;
  const settledOne = (): void => {
    pending -= 1;
  };
  const track = (result: Promise<Res>): Promise<Res> => {
    pending += 1;
    queue = result.then(settledOne, settledOne);
    return result;
  };

  const run = async (body: Req, options: CallOptions): Promise<Res> => {
    if (released) throw TesseraError.unavailable(`instance ${instanceName} is closed`);
    const context = new InlineCall(options);
    try {
      return (await session.execute(body, context)).body;
    } catch (error) {
      throw fromWire(wireError(error));
    } finally {
      context.done = true;
    }
  };

  return {
    info: opened.info,
    restartCount: 0,
    call(body: Req, _transfer?: readonly ArrayBuffer[], options: CallOptions = {}): Promise<Res> {
      // Idle (the usual case: the scheduler gives an instance one batch at a time): run now, without
      // chaining onto the tail, which costs two promises, a closure and a microtask per batch.
      if (pending === 0) return track(run(body, options));
      const result = queue.then(() => run(body, options));
      return track(result);
    },
    async close(): Promise<void> {
      if (released) return;
      released = true;
      await queue;
      // A failing finalize cannot stop an unload (as in a thread).
      await session.close().catch(() => undefined);
    },
  };
}

/** One batch's context on the main thread: one object per batch, its methods shared, not two closures. */
class InlineCall implements ExecuteContext {
  done = false;

  constructor(private readonly options: CallOptions) {}

  partial(body: unknown): void {
    if (this.done) throw new Error('the request is complete; no more responses can be sent');
    try {
      this.options.onPartial?.(body);
    } catch {
      // The consumer's failure (a closed stream) is its own, as with a thread's partial message.
    }
  }

  signal(index: number): AbortSignal {
    return this.options.signals?.[index] ?? NEVER_ABORTED;
  }
}
