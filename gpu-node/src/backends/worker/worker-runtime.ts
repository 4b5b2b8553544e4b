/**
 * The worker-thread side of an instance: reads the init payload, answers `ready`, then serves execute
 * messages one at a time (a session is not re-entrant, and a user model's async execute must not see
 * two batches interleaved), and finalizes on `close`. Backend worker modules call `serveWorker` once.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { toTesseraError } from '../../../../shared/src/errors/index.js';
import type { HostMessage, WireError, WorkerBoot, WorkerMessage } from './protocol.js';
import { BatchSignals } from './batch-signals.js';

export interface WorkerReply<Res> {
  readonly body: Res;
  /** Buffers inside `body` to move to the main thread rather than copy. */
  readonly transfer: readonly ArrayBuffer[];
}

/** What an execute may use besides its body: partial replies and the cancellation of its requests. */
export interface ExecuteContext {
  /** Posts a partial reply (the host's `onPartial` sees `body`) before the execute's own reply. */
  partial(body: unknown, transfer?: readonly ArrayBuffer[]): void;
  /** The signal of request `index` of this batch: aborted when the host sends `cancel` for it. */
  signal(index: number): AbortSignal;
}

export interface WorkerHandlers<Init, Info, Req, Res> {
  /** Loads the model; what it returns reaches the host as the instance's info. Throwing fails the load. */
  init(init: Init): Promise<Info>;
  execute(body: Req, context: ExecuteContext): Promise<WorkerReply<Res>>;
  close(): Promise<void>;
}

export function wireError(error: unknown): WireError {
  const e = toTesseraError(error);
  return { code: e.code, message: e.message };
}

export function serveWorker<Init, Info, Req, Res>(handlers: WorkerHandlers<Init, Info, Req, Res>): void {
  const port = parentPort;
  if (port === null) throw new Error('serveWorker must run inside a worker thread');
  const boot = workerData as WorkerBoot<Init>;
  const post = (message: WorkerMessage, transfer: readonly ArrayBuffer[] = []): void =>
    port.postMessage(message, [...transfer]);

  // Every message is chained behind the previous one, so init, batches and close never overlap.
  let queue: Promise<void> = handlers.init(boot.init).then(
    (info) => post({ type: 'ready', info }),
    (error: unknown) => post({ type: 'init-failed', error: wireError(error) }),
  );

  const signals = new BatchSignals();

  port.on('message', (message: HostMessage) => {
    if (message.type === 'cancel') {
      signals.cancel(message.id, message.index);
      return;
    }
    if (message.type === 'execute') signals.begin(message.id);
    queue = queue.then(async () => {
      if (message.type === 'close') {
        // A failing finalize cannot stop an unload; the host terminates the thread either way.
        await handlers.close().catch(() => undefined);
        post({ type: 'closed' });
        port.close();
        return;
      }
      const id = message.id;
      let done = false;
      const context: ExecuteContext = {
        partial: (body, transfer = []) => {
          // A model may keep a sender past its execute; once answered, the host has forgotten the batch.
          if (done) throw new Error('the request is complete; no more responses can be sent');
          post({ type: 'partial', id, body }, transfer);
        },
        signal: (index) => signals.signal(id, index),
      };
      try {
        const reply = await handlers.execute(message.body as Req, context);
        post({ type: 'reply', id, body: reply.body }, reply.transfer);
      } catch (error) {
        post({ type: 'failed', id, error: wireError(error) });
      } finally {
        done = true;
        signals.end(id);
      }
    });
  });
}
