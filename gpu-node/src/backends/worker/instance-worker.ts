/**
 * The main-thread handle of one instance's worker thread: starts it, sends batches and matches replies
 * by request id, and survives crashes.
 *
 * Crash policy: when the thread dies (uncaught exception, process.exit in user code, out of memory),
 * every batch in flight fails with INTERNAL naming the instance, and the worker is restarted at once
 * with the same init payload (the model is loaded again). Batches that arrive during the restart wait
 * for it. If the restart itself fails to load, the instance is marked failed for good and every later
 * batch fails with INTERNAL saying why; the model has to be reloaded to recover.
 */
import { Worker } from 'node:worker_threads';
import { TesseraError } from '../../../../shared/src/errors/index.js';
import { workerScriptFor } from '../../../../shared/src/workers/index.js';
import { deliverBatchAnswer, fromWire, type PendingBatch } from './batch-answers.js';
import type { HostMessage, WorkerBoot, WorkerMessage } from './protocol.js';
import { forwardCancels } from './forward-cancels.js';

export interface InstanceWorkerOptions<Init> {
  /** Names the instance in every error message. */
  readonly instanceName: string;
  /** The worker module; `.ts` modules are started through shared's tsx bootstrap, `.js` ones directly. */
  readonly entry: URL;
  readonly init: Init;
  /** How long close() waits for finalize before terminating the thread. Default 10 s. */
  readonly closeTimeoutMs?: number;
}

type State = 'starting' | 'running' | 'restarting' | 'failed' | 'closed';

/** Extras of one call: partial replies (decoupled models) and per-request cancellation. */
export interface CallOptions {
  /** Told of each `partial` message of this batch, in order, before the call settles. */
  readonly onPartial?: (body: unknown) => void;
  /** One entry per request of the batch: when one aborts, the worker aborts that request's signal. */
  readonly signals?: readonly (AbortSignal | undefined)[];
}

export class InstanceWorker<Info, Req, Res> {
  private worker: Worker | undefined;
  private state: State = 'starting';
  private nextId = 1;
  private readonly pending = new Map<number, PendingBatch>();
  private restarting: Promise<void> | undefined;
  private failure: TesseraError | undefined;
  /** Resolves when the current thread has exited (set for each spawned thread). */
  private exited: Promise<void> = Promise.resolve();
  private restarts = 0;

  private constructor(
    private readonly options: InstanceWorkerOptions<unknown>,
    /** What the first successful init answered (model metadata and the like). */
    private info_: Info,
  ) {}

  /** Starts the thread and waits until the model is loaded; load errors reject with the worker's error. */
  static async start<Info, Req, Res, Init>(options: InstanceWorkerOptions<Init>): Promise<InstanceWorker<Info, Req, Res>> {
    const host = new InstanceWorker<Info, Req, Res>(options, undefined as Info);
    host.info_ = await host.spawn();
    host.state = 'running';
    return host;
  }

  get info(): Info {
    return this.info_;
  }

  /** How many times the thread was restarted after a crash. */
  get restartCount(): number {
    return this.restarts;
  }

  /** Sends one batch; resolves with the worker's reply or rejects with a TesseraError. */
  async call(body: Req, transfer: readonly ArrayBuffer[] = [], options: CallOptions = {}): Promise<Res> {
    if (this.state === 'restarting') await this.restarting;
    if (this.state === 'closed') {
      throw TesseraError.unavailable(`instance ${this.options.instanceName} is closed`);
    }
    if (this.state === 'failed' || this.worker === undefined) {
      throw TesseraError.internal(
        `instance ${this.options.instanceName} failed: its worker thread crashed and could not be restarted: ` +
          `${this.failure?.message ?? 'unknown reason'}`,
      );
    }
    const id = this.nextId++;
    const worker = this.worker;
    const stopForwarding = forwardCancels(options.signals, (index) => {
      // The thread may have crashed or been replaced meanwhile; the call settles through that path.
      if (this.worker === worker && this.pending.has(id)) {
        const message: HostMessage = { type: 'cancel', id, index };
        worker.postMessage(message);
      }
    });
    const settled = new Promise<Res>((resolve, reject) => {
      this.pending.set(id, {
        resolve: (b) => resolve(b as Res),
        reject,
        ...(options.onPartial === undefined ? {} : { onPartial: options.onPartial }),
      });
      const message: HostMessage = { type: 'execute', id, body };
      try {
        worker.postMessage(message, [...transfer]);
      } catch (error) {
        this.pending.delete(id);
        reject(TesseraError.internal(`instance ${this.options.instanceName}: could not send the batch: ${String(error)}`));
      }
    });
    try {
      return await settled;
    } finally {
      stopForwarding();
    }
  }

  /** Finalizes the model in the worker (bounded by closeTimeoutMs), then ends the thread. */
  async close(): Promise<void> {
    if (this.state === 'closed') return;
    const wasRestarting = this.state === 'restarting';
    this.state = 'closed';
    if (wasRestarting) await this.restarting?.catch(() => undefined);
    const worker = this.worker;
    this.failPending(TesseraError.unavailable(`instance ${this.options.instanceName} was closed`));
    if (worker === undefined) return;
    const message: HostMessage = { type: 'close' };
    worker.postMessage(message);
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<void>((resolve) => {
      timer = setTimeout(resolve, this.options.closeTimeoutMs ?? 10_000);
    });
    await Promise.race([this.exited, timeout]);
    clearTimeout(timer);
    await worker.terminate();
    this.worker = undefined;
  }

  /** Starts a thread and resolves with its init info once it reports ready. */
  private spawn(): Promise<Info> {
    const entry = this.options.entry;
    const boot: WorkerBoot = { entry: entry.href, init: this.options.init };
    const worker = new Worker(workerScriptFor(entry), { workerData: boot });
    this.worker = worker;
    let crash: unknown;
    let ready = false;
    let markExited: () => void = () => {};
    this.exited = new Promise((resolve) => (markExited = resolve));

    return new Promise<Info>((resolve, reject) => {
      worker.on('message', (message: WorkerMessage) => {
        switch (message.type) {
          case 'ready':
            ready = true;
            resolve(message.info as Info);
            break;
          case 'init-failed':
            reject(fromWire(message.error));
            void worker.terminate();
            break;
          case 'reply':
          case 'failed':
          case 'partial':
            deliverBatchAnswer(this.pending, message);
            break;
          case 'closed':
            break;
        }
      });
      // 'error' (an uncaught exception in the thread) is always followed by 'exit'; keep the reason.
      worker.on('error', (error) => {
        crash = error;
      });
      worker.on('exit', (code) => {
        markExited();
        if (this.worker === worker) this.worker = undefined;
        const reason = crash instanceof Error ? crash.message : `exit code ${code}`;
        if (!ready) {
          reject(TesseraError.internal(`instance ${this.options.instanceName}: worker thread ended while loading: ${reason}`));
          return;
        }
        if (this.state === 'closed') return;
        this.onCrash(reason);
      });
    });
  }

  private onCrash(reason: string): void {
    this.failPending(
      TesseraError.internal(`instance ${this.options.instanceName}: worker thread crashed while executing (${reason})`),
    );
    this.state = 'restarting';
    this.restarts++;
    this.restarting = this.spawn().then(
      () => {
        if (this.state === 'restarting') this.state = 'running';
      },
      (error: unknown) => {
        this.failure = error instanceof TesseraError ? error : TesseraError.internal(String(error));
        if (this.state === 'restarting') this.state = 'failed';
      },
    );
  }

  private failPending(error: TesseraError): void {
    const pending = [...this.pending.values()];
    this.pending.clear();
    for (const p of pending) p.reject(error);
  }
}
