/**
 * The main-thread handle of one pooled worker thread and of the sessions it hosts (session-host.ts on
 * the other side): opens and releases sessions, sends batches and matches replies by id, and survives
 * crashes.
 *
 * Crash policy, per session as it was per instance: when the thread dies (uncaught exception,
 * process.exit in a module, out of memory), every batch in flight on it fails with INTERNAL naming its
 * instance, and a new thread is started at once in which every session it hosted is opened again, in
 * the order they were first opened. Batches that arrive meanwhile wait for their session. A session that
 * cannot be opened again (or whose open was under way when the thread died) is failed for good: its
 * batches fail with INTERNAL saying why, and its model has to be reloaded. The other sessions serve on.
 *
 * Idle grace: a thread whose last session is released lingers `idleGraceMs` before it ends, so a burst
 * of short-lived sessions (a describe per model while 1,000 models load) reuses one thread instead of
 * starting an isolate for each; it still ends once idle, so an unloaded model's memory leaves with it.
 */
import { Worker } from 'node:worker_threads';
import { TesseraError } from '../../../../shared/src/errors/index.js';
import { workerScriptFor } from '../../../../shared/src/workers/index.js';
import { deliverBatchAnswer, fromWire, type PendingBatch } from './batch-answers.js';
import type { CallOptions } from './instance-worker.js';
import type { PoolHostMessage, PoolWorkerMessage, WorkerBoot } from './protocol.js';
import { forwardCancels } from './forward-cancels.js';

interface Pending extends PendingBatch {
  readonly session: SessionRecord;
}

type SessionState = 'opening' | 'open' | 'restoring' | 'failed' | 'released';

interface SessionRecord {
  readonly id: number;
  readonly instanceName: string;
  /** Instances of one model version share a group; the pool keeps them on different threads. */
  readonly group: string | undefined;
  readonly init: unknown;
  state: SessionState;
  info: unknown;
  failure: TesseraError | undefined;
  /** Settles when the session is open again after a crash (or failed for good); never rejects. */
  restoring: Promise<void> | undefined;
  restored: (() => void) | undefined;
  /** Opens tried since the last crash that were cut short by another crash. */
  restoreAttempts: number;
  restarts: number;
}

/** A restore cut short by another crash is tried again this many times before the session is failed. */
const MAX_RESTORE_ATTEMPTS = 3;

/** One session as its instance uses it: the same surface as InstanceWorker. */
export interface PooledSession<Info, Req, Res> {
  readonly info: Info;
  /** How many times the session was opened again after its thread crashed. */
  readonly restartCount: number;
  call(body: Req, transfer?: readonly ArrayBuffer[], options?: CallOptions): Promise<Res>;
  close(): Promise<void>;
}

export interface PoolThreadOptions {
  readonly entry: URL;
  /** How long a release waits for the thread to answer before the session is dropped anyway. */
  readonly closeTimeoutMs: number;
  /** How long the thread waits, hosting nothing, before it ends; 0 ends it with its last session. */
  readonly idleGraceMs: number;
  /** Told when the thread hosts nothing more and has ended (the pool forgets it). */
  readonly onEmpty: (thread: PoolThread) => void;
}

export class PoolThread {
  private worker: Worker | undefined;
  private readonly sessions = new Map<number, SessionRecord>();
  private readonly pending = new Map<number, Pending>();
  private readonly opening = new Map<number, { resolve(info: unknown): void; reject(error: TesseraError): void }>();
  private readonly releasing = new Map<number, () => void>();
  private nextBatch = 1;
  private nextSession = 1;
  /** Set once the last session was released: no new sessions come here. */
  private retired = false;
  private crashes = 0;
  /** Runs while the thread hosts nothing and waits out its idle grace. */
  private lingering: NodeJS.Timeout | undefined;

  constructor(private readonly options: PoolThreadOptions) {
    this.spawn();
  }

  /** Sessions hosted (opening ones included). */
  get sessionCount(): number {
    return this.sessions.size;
  }
  get isRetired(): boolean {
    return this.retired;
  }
  get threadId(): number | undefined {
    return this.worker?.threadId;
  }
  /** How many times this thread died and was replaced. */
  get crashCount(): number {
    return this.crashes;
  }
  hostsGroup(group: string | undefined): boolean {
    if (group === undefined) return false;
    for (const session of this.sessions.values()) if (session.group === group) return true;
    return false;
  }

  /** Opens a session here; rejects with the worker's load error (the session is then gone). */
  async open<Info, Req, Res>(instanceName: string, group: string | undefined, init: unknown): Promise<PooledSession<Info, Req, Res>> {
    this.stopLingering();
    const record: SessionRecord = {
      id: this.nextSession++,
      instanceName,
      group,
      init,
      state: 'opening',
      info: undefined,
      failure: undefined,
      restoring: undefined,
      restored: undefined,
      restoreAttempts: 0,
      restarts: 0,
    };
    this.sessions.set(record.id, record);
    try {
      record.info = await this.sendOpen(record);
      if (record.state === 'opening') record.state = 'open';
    } catch (error) {
      this.sessions.delete(record.id);
      await this.retireIfEmpty();
      throw error;
    }
    const call = (body: Req, transfer?: readonly ArrayBuffer[], options?: CallOptions) =>
      this.call(record, body, transfer, options) as Promise<Res>;
    const close = () => this.release(record);
    return {
      get info() {
        return record.info as Info;
      },
      get restartCount() {
        return record.restarts;
      },
      call,
      close,
    };
  }

  private sendOpen(record: SessionRecord): Promise<unknown> {
    return new Promise<unknown>((resolve, reject) => {
      this.opening.set(record.id, { resolve, reject });
      this.post({ type: 'open', session: record.id, init: record.init });
    });
  }

  private async call(record: SessionRecord, body: unknown, transfer: readonly ArrayBuffer[] = [], options: CallOptions = {}): Promise<unknown> {
    while (record.state === 'restoring') await record.restoring;
    if (record.state === 'released') throw TesseraError.unavailable(`instance ${record.instanceName} is closed`);
    if (record.state === 'failed' || this.worker === undefined) {
      throw TesseraError.internal(
        `instance ${record.instanceName} failed: its worker thread crashed and could not be restarted: ` +
          `${record.failure?.message ?? 'unknown reason'}`,
      );
    }
    const id = this.nextBatch++;
    const worker = this.worker;
    const stopForwarding = forwardCancels(options.signals, (index) => {
      // The thread may have crashed or been replaced meanwhile; the call settles through that path.
      if (this.worker === worker && this.pending.has(id)) this.post({ type: 'cancel', id, index });
    });
    const settled = new Promise<unknown>((resolve, reject) => {
      this.pending.set(id, { session: record, resolve, reject, ...(options.onPartial === undefined ? {} : { onPartial: options.onPartial }) });
      try {
        this.post({ type: 'execute', session: record.id, id, body }, transfer);
      } catch (error) {
        this.pending.delete(id);
        reject(TesseraError.internal(`instance ${record.instanceName}: could not send the batch: ${String(error)}`));
      }
    });
    try {
      return await settled;
    } finally {
      stopForwarding();
    }
  }

  /** Releases the session in the thread (bounded by closeTimeoutMs); the last one ends the thread. */
  private async release(record: SessionRecord): Promise<void> {
    if (record.state === 'released') return;
    const wasRestoring = record.state === 'restoring';
    const wasOpen = record.state !== 'failed';
    record.state = 'released';
    if (wasRestoring) await record.restoring;
    this.failPending(TesseraError.unavailable(`instance ${record.instanceName} was closed`), record);
    if (wasOpen && this.worker !== undefined) {
      let timer: NodeJS.Timeout | undefined;
      await new Promise<void>((resolve) => {
        this.releasing.set(record.id, resolve);
        timer = setTimeout(resolve, this.options.closeTimeoutMs);
        this.post({ type: 'release', session: record.id });
      });
      clearTimeout(timer);
      this.releasing.delete(record.id);
    }
    this.sessions.delete(record.id);
    await this.retireIfEmpty();
  }

  /** Ends the thread once it hosts nothing: after the idle grace, or now when there is none. */
  private async retireIfEmpty(): Promise<void> {
    if (this.sessions.size > 0 || this.retired) return;
    if (this.options.idleGraceMs <= 0 || this.worker === undefined) return this.retire();
    if (this.lingering !== undefined) return;
    this.lingering = setTimeout(() => {
      this.lingering = undefined;
      if (this.sessions.size === 0) void this.retire();
    }, this.options.idleGraceMs);
    // An idle thread, and its grace, never keep the process alive.
    this.lingering.unref();
    this.worker.unref();
  }

  private stopLingering(): void {
    if (this.lingering === undefined) return;
    clearTimeout(this.lingering);
    this.lingering = undefined;
    this.worker?.ref();
  }

  private async retire(): Promise<void> {
    if (this.retired) return;
    this.stopLingering();
    this.retired = true;
    const worker = this.worker;
    this.worker = undefined;
    this.options.onEmpty(this);
    await worker?.terminate();
  }

  /** Ends the thread now, failing whatever it still hosts (the pool's close). */
  async terminate(): Promise<void> {
    this.stopLingering();
    this.retired = true;
    const worker = this.worker;
    this.worker = undefined;
    for (const record of this.sessions.values()) record.state = 'released';
    this.failPending(TesseraError.unavailable('the worker pool was closed'));
    for (const [, open] of this.opening) open.reject(TesseraError.unavailable('the worker pool was closed'));
    this.opening.clear();
    await worker?.terminate();
  }

  private post(message: PoolHostMessage, transfer: readonly ArrayBuffer[] = []): void {
    if (this.worker === undefined) throw new Error('the worker thread is gone');
    this.worker.postMessage(message, [...transfer]);
  }

  private spawn(): void {
    const entry = this.options.entry;
    const boot: WorkerBoot = { entry: entry.href, init: undefined };
    const worker = new Worker(workerScriptFor(entry), { workerData: boot });
    this.worker = worker;
    let crash: unknown;
    worker.on('message', (message: PoolWorkerMessage) => this.onMessage(message));
    // 'error' (an uncaught exception in the thread) is always followed by 'exit'; keep the reason.
    worker.on('error', (error) => {
      crash = error;
    });
    worker.on('exit', (code) => {
      if (this.worker !== worker) return; // retired or terminated on purpose
      this.worker = undefined;
      this.onCrash(crash instanceof Error ? crash.message : `exit code ${code}`);
    });
  }

  private onMessage(message: PoolWorkerMessage): void {
    switch (message.type) {
      case 'opened':
      case 'open-failed': {
        const open = this.opening.get(message.session);
        this.opening.delete(message.session);
        if (message.type === 'opened') open?.resolve(message.info);
        else open?.reject(fromWire(message.error));
        break;
      }
      case 'reply':
      case 'failed':
      case 'partial':
        deliverBatchAnswer(this.pending, message);
        break;
      case 'released':
        this.releasing.get(message.session)?.();
        break;
    }
  }

  private onCrash(reason: string): void {
    this.crashes++;
    for (const record of this.sessions.values()) {
      this.failPending(TesseraError.internal(`instance ${record.instanceName}: worker thread crashed while executing (${reason})`), record);
    }
    // A first open under way fails (its module may be the cause); a restore cut short is tried again, a
    // few times, so that the sessions queued behind the one that crashes the thread are not lost with it.
    for (const [sessionId, open] of this.opening) {
      const record = this.sessions.get(sessionId);
      if (record?.state === 'restoring' && record.restoreAttempts < MAX_RESTORE_ATTEMPTS) continue;
      open.reject(TesseraError.internal(`instance ${record?.instanceName ?? sessionId}: worker thread ended while loading: ${reason}`));
    }
    this.opening.clear();
    for (const [, released] of this.releasing) released();
    const toRestore = [...this.sessions.values()].filter((record) => record.state === 'open' || record.state === 'restoring');
    if (this.sessions.size === 0) {
      void this.retireIfEmpty();
      return;
    }
    this.spawn();
    for (const record of toRestore) {
      if (record.state === 'open') {
        record.state = 'restoring';
        record.restarts++;
        record.restoring = new Promise((resolve) => (record.restored = resolve));
      }
      this.restore(record);
    }
  }

  /** Opens a crashed thread's session again in its new thread. */
  private restore(record: SessionRecord): void {
    record.restoreAttempts++;
    this.opening.set(record.id, {
      resolve: (info) => {
        record.info = info;
        record.restoreAttempts = 0;
        if (record.state === 'restoring') record.state = 'open';
        record.restored?.();
      },
      reject: (error) => {
        record.failure = error;
        if (record.state === 'restoring') record.state = 'failed';
        record.restored?.();
      },
    });
    this.post({ type: 'open', session: record.id, init: record.init });
  }

  private failPending(error: TesseraError, only?: SessionRecord): void {
    for (const [id, pending] of this.pending) {
      if (only !== undefined && pending.session !== only) continue;
      this.pending.delete(id);
      pending.reject(error);
    }
  }
}
