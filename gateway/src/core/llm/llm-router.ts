/**
 * Admission and node choice for LLM streams. A stream holds its node for as long as it generates
 * (seconds, not milliseconds), and LLM engines batch continuously, so the infer dispatcher's notion of
 * room (instances x batch size, node-load.ts) does not fit: here each node takes up to
 * `maxStreamsPerNode` streams of a model at once (its reported queued + in-flight requests plus what
 * this gateway sent since, `outstanding` in node-load.ts), and a stream goes to the candidate with the
 * fewest outstanding (least-queue). Beyond that, requests wait in the same AdmissionQueue as infer
 * requests (priority by tier, tier shares, queue timeout -> 503 with Retry-After).
 *
 * A granted stream is counted in flight with `directory.track` until its lease is released (the stream
 * ended, failed or was cancelled), so the next pick sees it at once.
 */
import { TesseraError } from '../../../../shared/src/errors/index.js';
import { AdmissionQueue, systemClock } from '../admission/index.js';
import type { CancelSignal } from '../http/cancellation.js';
import type { AdmissionObserver, BreakerView, Clock, FleetChangeSource, NodeDirectory, NodeView, TimerHandle } from '../ports/index.js';
import { outstanding } from '../routing/node-load.js';

export interface LlmRouterOptions {
  readonly directory: NodeDirectory;
  readonly breakers?: BreakerView;
  readonly fleetEvents?: FleetChangeSource;
  /** Streams of one model one node takes at once; default 256. */
  readonly maxStreamsPerNode?: number;
  /** Waiting requests per model; default the admission queue's (256). */
  readonly maxQueue?: number;
  readonly clock?: Clock;
  readonly observer?: AdmissionObserver;
  /** Re-check of waiting queues while requests wait (load reports change room without telling us); default 100 ms. */
  readonly pumpIntervalMs?: number;
}

export interface NodeLease {
  readonly node: NodeView;
  /** Ends the stream's claim on the node; later calls do nothing. */
  release(): void;
}

export interface LeaseRequest {
  readonly tier: string;
  readonly priority: number;
  readonly share: number;
  /** Absolute deadline of the wait in the queue (ms since the epoch). */
  readonly deadline: number;
  readonly signal: CancelSignal;
}

export const DEFAULT_MAX_STREAMS_PER_NODE = 256;

export class LlmRouter {
  private readonly queues = new Map<string, AdmissionQueue>();
  /** This gateway's running streams: node id -> model -> count. */
  private readonly streams = new Map<string, Map<string, number>>();
  private readonly clock: Clock;
  private readonly perNode: number;
  private pumpTimer: TimerHandle | undefined;
  private closed = false;
  private readonly unsubscribe: (() => void) | undefined;

  constructor(private readonly options: LlmRouterOptions) {
    this.clock = options.clock ?? systemClock;
    this.perNode = options.maxStreamsPerNode ?? DEFAULT_MAX_STREAMS_PER_NODE;
    this.unsubscribe = options.fleetEvents?.onChange(() => this.pumpAll());
  }

  /** READY nodes serving the model whose breaker is not open. */
  eligible(model: string): NodeView[] {
    return this.options.directory.candidates(model).filter((node) => !this.options.breakers?.isOpen(node.id));
  }

  /** Every node in the fleet view. */
  nodes(): readonly NodeView[] {
    return this.options.directory.all();
  }

  /** Whether any node in the fleet reports the model (ready or not): otherwise it is unknown here. */
  known(model: string): boolean {
    return this.options.directory.all().some((node) => node.models.has(model)) || this.options.directory.candidates(model).length > 0;
  }

  /**
   * Streams of the model on the node: what its load report and the directory say, but never fewer
   * than this gateway's own streams there (a report may not count a decoupled model's running
   * streams as in flight, and resets what the directory counted as sent since).
   */
  private load(node: NodeView, model: string): number {
    return Math.max(outstanding(node, model), this.streams.get(node.id)?.get(model) ?? 0);
  }

  private roomOn(node: NodeView, model: string): number {
    return Math.max(0, this.perNode - this.load(node, model));
  }

  /** The eligible node with the fewest outstanding streams of the model, room or not; `exclude` skipped. */
  leastLoaded(model: string, exclude?: string, needRoom = false): NodeView | undefined {
    let best: NodeView | undefined;
    let bestLoad = Infinity;
    for (const node of this.eligible(model)) {
      if (node.id === exclude || (needRoom && this.roomOn(node, model) === 0)) continue;
      const load = this.load(node, model);
      if (load < bestLoad) {
        best = node;
        bestLoad = load;
      }
    }
    return best;
  }

  /** Counts a stream on `node` now (a retry on another node skips the queue: it was admitted once). */
  claim(node: NodeView, model: string): NodeLease {
    const release = this.options.directory.track(node.id);
    let perModel = this.streams.get(node.id);
    if (perModel === undefined) this.streams.set(node.id, (perModel = new Map()));
    perModel.set(model, (perModel.get(model) ?? 0) + 1);
    let released = false;
    return {
      node,
      release: () => {
        if (released) return;
        released = true;
        release();
        const left = (perModel.get(model) ?? 1) - 1;
        if (left > 0) perModel.set(model, left);
        else perModel.delete(model);
        if (perModel.size === 0) this.streams.delete(node.id);
        this.queues.get(model)?.pump();
        this.schedulePump();
      },
    };
  }

  /** Waits for room on a node serving `model` (priority, share and deadline as infer), then claims it. */
  acquire(model: string, request: LeaseRequest): Promise<NodeLease> {
    if (this.closed) return Promise.reject(TesseraError.unavailable('the gateway is shutting down'));
    const queue = this.queueFor(model);
    return new Promise<NodeLease>((resolve, reject) => {
      queue.admit(request, {
        dispatch: () => {
          const node = this.leastLoaded(model, undefined, true) ?? this.leastLoaded(model);
          if (node === undefined) {
            reject(new TesseraError('UNAVAILABLE', `no node is ready to serve model '${model}'`, { retryAfterMs: 1000 }));
            return;
          }
          resolve(this.claim(node, model));
        },
        reject,
      });
      this.schedulePump();
    });
  }

  queueDepth(model: string): number {
    return this.queues.get(model)?.depth ?? 0;
  }

  close(): void {
    if (this.closed) return;
    this.closed = true;
    this.unsubscribe?.();
    if (this.pumpTimer !== undefined) this.clock.clearTimeout(this.pumpTimer);
    for (const queue of this.queues.values()) queue.close();
  }

  private queueFor(model: string): AdmissionQueue {
    let queue = this.queues.get(model);
    if (queue === undefined) {
      queue = new AdmissionQueue({
        name: model,
        clock: this.clock,
        ...(this.options.maxQueue === undefined ? {} : { maxQueue: this.options.maxQueue }),
        ...(this.options.observer === undefined ? {} : { observer: this.options.observer }),
        load: {
          room: () => this.eligible(model).reduce((sum, node) => sum + this.roomOn(node, model), 0),
          capacity: () => this.eligible(model).length * this.perNode,
          // A stream's length is the client's choice (max_tokens): no wait estimate, the queue timeout decides.
          execTimeMs: () => null,
        },
      });
      this.queues.set(model, queue);
    }
    return queue;
  }

  private pumpAll(): void {
    for (const queue of this.queues.values()) queue.pump();
    this.schedulePump();
  }

  private schedulePump(): void {
    if (this.closed || this.pumpTimer !== undefined) return;
    if (![...this.queues.values()].some((queue) => queue.depth > 0)) return;
    this.pumpTimer = this.clock.setTimeout(() => {
      this.pumpTimer = undefined;
      this.pumpAll();
    }, this.options.pumpIntervalMs ?? 100);
  }
}
