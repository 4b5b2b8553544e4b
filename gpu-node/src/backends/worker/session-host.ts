/**
 * The worker-thread side of a pooled thread (worker-pool.ts): it hosts many sessions (model instances)
 * of one backend. Every session's work (open, batches, release) runs one task at a time for the whole
 * thread, because onnxruntime's session.run blocks the thread anyway and the WebGPU lock must never be
 * waited on by a thread that already holds it; the sessions take turns (fair-queue.ts), so one slow
 * model delays the others by at most one batch per round. Cancels are handled on arrival. Backend
 * worker modules that are pooled call `serveSessions` once.
 */
import { parentPort } from 'node:worker_threads';
import { FairQueue } from './fair-queue.js';
import type { PoolHostMessage, PoolWorkerMessage } from './protocol.js';
import { wireError, type ExecuteContext, type WorkerReply } from './worker-runtime.js';
import { BatchSignals } from './batch-signals.js';

/** One open session as the backend's worker module sees it. */
export interface HostedSession<Req, Res> {
  execute(body: Req, context: ExecuteContext): Promise<WorkerReply<Res>>;
  /** Frees what the session holds; a failure here cannot stop the release. */
  close(): Promise<void>;
}

export interface SessionFactory<Init, Info, Req, Res> {
  /** Loads one session; `info` reaches the host as the instance's info. Throwing fails this open only. */
  open(init: Init): Promise<{ readonly info: Info; readonly session: HostedSession<Req, Res> }>;
}

export function serveSessions<Init, Info, Req, Res>(factory: SessionFactory<Init, Info, Req, Res>): void {
  const port = parentPort;
  if (port === null) throw new Error('serveSessions must run inside a worker thread');
  const post = (message: PoolWorkerMessage, transfer: readonly ArrayBuffer[] = []): void => port.postMessage(message, [...transfer]);

  const sessions = new Map<number, HostedSession<Req, Res>>();
  const work = new FairQueue<number, () => Promise<void>>();
  const signals = new BatchSignals();

  // Before choosing a turn the thread goes back to its event loop once (a setImmediate: the same loop
  // iteration), so that every message that came in meanwhile is queued (and cancels are seen) first.
  const turn = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));
  let running = false;
  const pump = async (): Promise<void> => {
    if (running) return;
    running = true;
    try {
      await turn();
      for (let task = work.next(); task !== undefined; task = work.next()) {
        await task();
        if (!work.isEmpty) await turn();
      }
    } finally {
      running = false;
    }
  };

  const execute = async (sessionId: number, id: number, body: Req): Promise<void> => {
    let done = false;
    const context: ExecuteContext = {
      partial: (partialBody, transfer = []) => {
        if (done) throw new Error('the request is complete; no more responses can be sent');
        post({ type: 'partial', id, body: partialBody }, transfer);
      },
      signal: (index) => signals.signal(id, index),
    };
    try {
      const session = sessions.get(sessionId);
      if (session === undefined) throw new Error(`session ${sessionId} is not open in this thread`);
      const reply = await session.execute(body, context);
      post({ type: 'reply', id, body: reply.body }, reply.transfer);
    } catch (error) {
      post({ type: 'failed', id, error: wireError(error) });
    } finally {
      done = true;
      signals.end(id);
    }
  };

  port.on('message', (message: PoolHostMessage) => {
    switch (message.type) {
      case 'cancel':
        signals.cancel(message.id, message.index);
        return;
      case 'open':
        work.push(message.session, async () => {
          try {
            const opened = await factory.open(message.init as Init);
            sessions.set(message.session, opened.session);
            post({ type: 'opened', session: message.session, info: opened.info });
          } catch (error) {
            post({ type: 'open-failed', session: message.session, error: wireError(error) });
          }
        });
        break;
      case 'execute':
        signals.begin(message.id);
        work.push(message.session, () => execute(message.session, message.id, message.body as Req));
        break;
      case 'release':
        work.push(message.session, async () => {
          const session = sessions.get(message.session);
          sessions.delete(message.session);
          await session?.close().catch(() => undefined);
          post({ type: 'released', session: message.session });
        });
        break;
    }
    void pump();
  });
}
