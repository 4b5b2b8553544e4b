/**
 * A bounded set of worker threads that host a backend's sessions (model instances), so that a node with
 * hundreds of models does not pay a V8 isolate per instance. Placement, when a session opens:
 * - a thread that hosts no instance of the same group (model version) first, so that a model's
 *   instances can run at the same time, as their instance_group count promises;
 * - among those, the one hosting the fewest sessions; a new thread is started while there are fewer
 *   than `size` and every running one already hosts something.
 * A thread ends `idleGraceMs` after its last session is released, unless a session comes first (an idle
 * thread is picked before a new one is started). Crashes are handled per thread (pool-thread.ts).
 */
import { availableParallelism } from 'node:os';
import { PoolThread, type PooledSession } from './pool-thread.js';

export interface WorkerPoolOptions {
  /** The worker module (it calls serveSessions); `.ts` modules start through shared's tsx bootstrap. */
  readonly entry: URL;
  /** Most threads for shared sessions; default os.availableParallelism(). */
  readonly size?: number;
  /** How long a release waits for its thread; default 10 s. */
  readonly closeTimeoutMs?: number;
  /** How long a thread hosting nothing waits for a session before it ends; default DEFAULT_IDLE_GRACE_MS, 0 ends it at once. */
  readonly idleGraceMs?: number;
}

/**
 * Long enough for the next describe or instance of a loading burst (1,000 models at 4 loads at a time
 * come well inside it), short enough that an unload gives its memory back within seconds.
 */
export const DEFAULT_IDLE_GRACE_MS = 2000;

export interface SessionPlacement {
  /** Names the instance in every error message. */
  readonly instanceName: string;
  /** Instances of one model version (kept on different threads while there are threads enough). */
  readonly group?: string;
}

export interface WorkerPoolStats {
  /** Threads running now. */
  readonly threads: number;
  /** Sessions per thread, and the thread ids (for per-thread CPU figures). */
  readonly perThread: readonly { readonly threadId: number | undefined; readonly sessions: number }[];
  /** Thread crashes survived since the pool started. */
  readonly crashes: number;
  /** Threads started since the pool started (crash replacements not counted): reuse shows as fewer. */
  readonly started: number;
}

export class WorkerPool {
  readonly size: number;
  private readonly threads: PoolThread[] = [];
  private crashesOfEnded = 0;
  private started = 0;

  constructor(private readonly options: WorkerPoolOptions) {
    this.size = Math.max(1, options.size ?? availableParallelism());
  }

  open<Info, Req, Res>(init: unknown, placement: SessionPlacement): Promise<PooledSession<Info, Req, Res>> {
    return this.pick(placement.group).open<Info, Req, Res>(placement.instanceName, placement.group, init);
  }

  stats(): WorkerPoolStats {
    const perThread = this.threads.map((thread) => ({ threadId: thread.threadId, sessions: thread.sessionCount }));
    const crashes = this.threads.reduce((sum, thread) => sum + thread.crashCount, this.crashesOfEnded);
    return { threads: perThread.length, perThread, crashes, started: this.started };
  }

  /** Ends every thread at once, failing what they still host (tests, embedders). */
  async close(): Promise<void> {
    const threads = this.threads.splice(0);
    await Promise.all(threads.map((thread) => thread.terminate()));
  }

  private pick(group: string | undefined): PoolThread {
    const candidates = this.threads.filter((thread) => !thread.hostsGroup(group));
    const idle = candidates.find((thread) => thread.sessionCount === 0);
    if (idle !== undefined) return idle;
    if (this.threads.length < this.size) return this.startThread();
    const pool = candidates.length > 0 ? candidates : this.threads;
    return pool.reduce((best, thread) => (thread.sessionCount < best.sessionCount ? thread : best));
  }

  private startThread(): PoolThread {
    const thread = new PoolThread({
      entry: this.options.entry,
      closeTimeoutMs: this.options.closeTimeoutMs ?? 10_000,
      idleGraceMs: this.options.idleGraceMs ?? DEFAULT_IDLE_GRACE_MS,
      onEmpty: (ended) => {
        this.crashesOfEnded += ended.crashCount;
        const index = this.threads.indexOf(ended);
        if (index >= 0) this.threads.splice(index, 1);
      },
    });
    this.threads.push(thread);
    this.started++;
    return thread;
  }
}
