/**
 * A bounded set of worker threads that host a backend's sessions (model instances), so that a node with
 * hundreds of models does not pay a V8 isolate per instance. Placement, when a session opens:
 * - a thread that hosts no instance of the same group (model version) first, so that a model's
 *   instances can run at the same time, as their instance_group count promises;
 * - among those, the one hosting the fewest sessions; a new thread is started while there are fewer
 *   than `size` and every running one already hosts something;
 * - `dedicated` sessions (GPU instances) get a thread of their own, outside the bound: a GPU run or the
 *   WebGPU lock must not hold up CPU models, and GPU instances are few.
 * A thread ends when its last session is released. Crashes are handled per thread (pool-thread.ts).
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
}

export interface SessionPlacement {
  /** Names the instance in every error message. */
  readonly instanceName: string;
  /** Instances of one model version (kept on different threads while there are threads enough). */
  readonly group?: string;
  /** A thread of its own (GPU instances, short-lived probes that must not wait behind models). */
  readonly dedicated?: boolean;
}

export interface WorkerPoolStats {
  /** Threads running now, shared and dedicated. */
  readonly threads: number;
  /** Sessions per thread, and the thread ids (for per-thread CPU figures). */
  readonly perThread: readonly { readonly threadId: number | undefined; readonly sessions: number; readonly dedicated: boolean }[];
  /** Thread crashes survived since the pool started. */
  readonly crashes: number;
}

export class WorkerPool {
  readonly size: number;
  private readonly shared: PoolThread[] = [];
  private readonly dedicated = new Set<PoolThread>();
  private crashesOfEnded = 0;

  constructor(private readonly options: WorkerPoolOptions) {
    this.size = Math.max(1, options.size ?? availableParallelism());
  }

  open<Info, Req, Res>(init: unknown, placement: SessionPlacement): Promise<PooledSession<Info, Req, Res>> {
    const thread = placement.dedicated === true ? this.startThread(true) : this.pick(placement.group);
    return thread.open<Info, Req, Res>(placement.instanceName, placement.group, init);
  }

  stats(): WorkerPoolStats {
    const describe = (thread: PoolThread, dedicated: boolean) => ({ threadId: thread.threadId, sessions: thread.sessionCount, dedicated });
    const all = [...this.shared.map((t) => describe(t, false)), ...[...this.dedicated].map((t) => describe(t, true))];
    const crashes = [...this.shared, ...this.dedicated].reduce((sum, t) => sum + t.crashCount, this.crashesOfEnded);
    return { threads: all.length, perThread: all, crashes };
  }

  /** Ends every thread at once, failing what they still host (tests, embedders). */
  async close(): Promise<void> {
    const threads = [...this.shared, ...this.dedicated];
    this.shared.length = 0;
    this.dedicated.clear();
    await Promise.all(threads.map((thread) => thread.terminate()));
  }

  private pick(group: string | undefined): PoolThread {
    const candidates = this.shared.filter((thread) => !thread.hostsGroup(group));
    const idle = candidates.find((thread) => thread.sessionCount === 0);
    if (idle !== undefined) return idle;
    if (this.shared.length < this.size) return this.startThread(false);
    const pool = candidates.length > 0 ? candidates : this.shared;
    return pool.reduce((best, thread) => (thread.sessionCount < best.sessionCount ? thread : best));
  }

  private startThread(dedicated: boolean): PoolThread {
    const thread = new PoolThread({
      entry: this.options.entry,
      closeTimeoutMs: this.options.closeTimeoutMs ?? 10_000,
      onEmpty: (ended) => {
        this.crashesOfEnded += ended.crashCount;
        const index = this.shared.indexOf(ended);
        if (index >= 0) this.shared.splice(index, 1);
        this.dedicated.delete(ended);
      },
    });
    if (dedicated) this.dedicated.add(thread);
    else this.shared.push(thread);
    return thread;
  }
}
