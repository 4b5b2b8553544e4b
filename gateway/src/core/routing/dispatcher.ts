/**
 * The Dispatcher: admission, version choice, node choice and the upstream call of one request.
 *
 *   dispatch(request, ctx)
 *     → version: version-chooser.ts (the request's own, else the split, else the fleet's latest READY), the
 *       same chooser the cache keys with, so the version cached is the version served
 *     → unknown model (no node in the fleet has it): NOT_FOUND, the caller's mistake
 *     → admission queue of (model, version): priority = tier, deadline = ctx.deadline (admission-queue.ts)
 *     → when the queue releases it: a node among the candidates (READY, not draining, not stale, breaker
 *       not open) with room (node-load.ts), picked by the routing policy (p2c by default)
 *     → transport.infer with the deadline, Triton's `priority` (the tier's) and `timeout` (the remaining
 *       deadline in µs, or the client's own when shorter)
 *     → a failure before the node accepted the request (`notAccepted`) is retried ONCE on another
 *       candidate if the deadline still allows; nothing else is retried.
 *   Sequence requests (`sequence_id`, with `options.sequences`; core/sequences/sequence-router.ts): a
 *   START is routed as above and its node recorded; every later request of the sequence goes to that
 *   node only (its version too), is never retried elsewhere, and fails clearly when the node is gone.
 *
 * In-flight accounting: every send is `directory.track(node)`, released in a `finally` of that very
 * send, so each counter is released exactly once on success, error, deadline and cancellation.
 *
 * This file chooses (version, node) and ties the parts together, one responsibility each:
 * model-queues.ts (the admission queues and their pumping), upstream-call.ts (the call, its
 * accounting and its one retry), sequence-dispatch.ts (tenant-scoped sequence ids and affinity).
 *
 * The dispatcher owns its queues; the directory and the transport belong to the caller (close them
 * after `close()`).
 */
import { TesseraError, toTesseraError } from '../../../../shared/src/errors/index.js';
import type { InferRequest } from '../../../../shared/src/tensors/index.js';
import { systemClock } from '../admission/index.js';
import { NodeSequenceIds, readSequenceParams, SequenceRouter } from '../sequences/index.js';
import type { SequenceRequest, SequenceRoutingOptions } from '../sequences/index.js';
import type {
  BreakerView,
  Clock,
  DispatchContext,
  DispatchObserver,
  FleetChangeSource,
  MetadataContext,
  NodeDirectory,
  NodeTransport,
  NodeView,
  SequenceIdKeySource,
  UpstreamInferResult,
} from '../ports/index.js';
import { ModelQueues } from './model-queues.js';
import { DEFAULT_OVERCOMMIT, expectedWaitMs, reportedExecTimeMs, room } from './node-load.js';
import { createPicker } from './pickers.js';
import { createSequenceDispatch, type SequencePin } from './sequence-dispatch.js';
import { createUpstreamCaller } from './upstream-call.js';
import { createVersionChooser, type VersionChooser } from './version-chooser.js';
import { normalizeRoutingConfig } from './version-splits.js';
import type { RoutingConfig } from './version-splits.js';

export type { DispatchContext, MetadataContext } from '../ports/index.js';

export interface DispatcherAdmissionOptions {
  /** Waiting requests per (model, version) queue; default 256. */
  readonly maxQueue?: number;
  /** Retry-After when no execution time is known yet; default 1000 ms. */
  readonly defaultRetryAfterMs?: number;
  /** Extra batch rounds each node may hold in its own queue (node-load.ts); default 1. */
  readonly overcommit?: number;
  /** Re-check of waiting queues while requests wait; default 100 ms. */
  readonly pumpIntervalMs?: number;
}

export interface DispatcherOptions {
  readonly directory: NodeDirectory;
  readonly transport: NodeTransport;
  /** Per-node breakers; an open one removes its node from the candidates. Default: none. */
  readonly breakers?: BreakerView;
  /** Fleet changes (joins, leaves, new reports) to dispatch waiting requests sooner. Default: none. */
  readonly fleetEvents?: FleetChangeSource;
  /** Picker and version splits; default p2c and no splits. Validated here (normalizeRoutingConfig). */
  readonly routing?: RoutingConfig;
  readonly admission?: DispatcherAdmissionOptions;
  /** Default: the system clock. */
  readonly clock?: Clock;
  readonly observer?: DispatchObserver;
  /** Randomness for p2c and unsticky splits, in [0, 1); default Math.random. */
  readonly random?: () => number;
  /**
   * Sequence affinity (core/sequences): where bindings live and their TTLs. Default none: sequence
   * requests are routed like any other, which is only right with a single node.
   */
  readonly sequences?: SequenceRoutingOptions;
  /**
   * The key of the node-level sequence ids when `sequences` gives none (node-sequence-id.ts); default a
   * random key of this dispatcher. Every dispatcher that may carry one sequence must use the same key.
   */
  readonly sequenceIdKey?: SequenceIdKeySource;
}

export interface Dispatcher {
  /** The version chooser this dispatcher serves by; give it to the cache (createInferCache) so both agree. */
  readonly versions: VersionChooser;
  dispatch(request: InferRequest, ctx: DispatchContext): Promise<UpstreamInferResult>;
  /** Triton's `/config` JSON of the model, from one node that serves it. */
  modelConfig(model: string, version: string | undefined, ctx: MetadataContext): Promise<unknown>;
  /** Triton's model metadata JSON, from one node that serves it. */
  modelMetadata(model: string, version: string | undefined, ctx: MetadataContext): Promise<unknown>;
  /** Whether some node could take a request for the model (and version) now. */
  modelReady(model: string, version?: string): boolean;
  /** Every model the gateway knows (reported by a node since it started, or named by routing), with each version's readiness now. */
  models(): { name: string; versions: { version: string; ready: boolean }[] }[];
  /** Requests waiting in the gateway for the model, all versions together. */
  queueDepth(model: string): number;
  /** Rejects everything waiting (503) and refuses new requests. */
  close(): Promise<void>;
}

const DEFAULT_PUMP_INTERVAL_MS = 100;

export function createDispatcher(options: DispatcherOptions): Dispatcher {
  const { directory, transport, breakers, observer } = options;
  const clock = options.clock ?? systemClock;
  const random = options.random ?? Math.random;
  const routing = normalizeRoutingConfig(options.routing);
  const picker = createPicker(routing.policy ?? 'p2c', random);
  const overcommit = options.admission?.overcommit ?? DEFAULT_OVERCOMMIT;
  if (!Number.isFinite(overcommit) || overcommit < 0) {
    throw TesseraError.invalidArg(`admission overcommit must be a number >= 0 (got ${overcommit})`);
  }
  const pumpIntervalMs = options.admission?.pumpIntervalMs ?? DEFAULT_PUMP_INTERVAL_MS;
  const sequences = options.sequences === undefined ? undefined : new SequenceRouter(options.sequences, () => clock.now());
  // Every sequence id is replaced by a node-level id of the tenant's own (node-sequence-id.ts), with or
  // without affinity: two tenants using the same id must never share a sequence on a node.
  const nodeSequenceIds = new NodeSequenceIds(options.sequences?.idKey ?? options.sequenceIdKey);
  let closed = false;

  const versions = createVersionChooser({ directory, routing, random, ...(breakers === undefined ? {} : { breakers }) });
  const eligible = versions.eligible;

  /** Every model (and its versions) any node has reported since the gateway started, or routing names. */
  const seen = new Map<string, Set<string>>(Object.keys(routing.models ?? {}).map((model) => [model, new Set<string>()]));
  const noteFleet = (): void => {
    for (const node of directory.all()) {
      for (const [model, load] of node.models) {
        let versions = seen.get(model);
        if (versions === undefined) seen.set(model, (versions = new Set()));
        for (const version of load.versions) versions.add(version);
      }
    }
  };

  const known = (model: string, version: string | undefined): boolean => {
    const found =
      directory.all().some((node) => {
        const load = node.models.get(model);
        return load !== undefined && (version === undefined || load.versions.includes(version));
      }) || directory.candidates(model, version).length > 0;
    if (found) {
      // Remembered for the day no node has it (see notFound).
      let versions = seen.get(model);
      if (versions === undefined) seen.set(model, (versions = new Set()));
      if (version !== undefined) versions.add(version);
    }
    return found;
  };

  /**
   * The answer when no node has the model now. A model the gateway knows (a node served it since the
   * gateway started, or routing names it) is 503, worth a retry: its nodes are restarting or gone for
   * now. Otherwise Triton's answers: an unknown name is INVALID_ARG (400), as Triton's repository
   * manager answers; an unknown version of a known model is NOT_FOUND (404).
   */
  const notFound = (model: string, version: string | undefined): TesseraError => {
    noteFleet();
    const versions = seen.get(model);
    if (versions === undefined) return TesseraError.invalidArg(`Request for unknown model: '${model}' is not found`);
    if (version === undefined || versions.has(version)) {
      return new TesseraError('UNAVAILABLE', `no node is serving model '${model}'${version === undefined ? '' : ` version ${version}`} right now`, {
        retryAfterMs: 1000,
      });
    }
    return TesseraError.notFound(`Request for unknown model: '${model}' version ${version} is not found`);
  };

  const queues = new ModelQueues({
    clock,
    pumpIntervalMs,
    overcommit,
    eligible,
    measuredExecMs: (model) => upstream.measuredExecMs(model),
    ...(options.admission?.maxQueue !== undefined ? { maxQueue: options.admission.maxQueue } : {}),
    ...(options.admission?.defaultRetryAfterMs !== undefined ? { defaultRetryAfterMs: options.admission.defaultRetryAfterMs } : {}),
    ...(observer !== undefined ? { observer } : {}),
  });

  const unsubscribe = options.fleetEvents?.onChange(() => {
    noteFleet();
    queues.pumpAll();
  });

  /** The best node with room for the model, or (for retries and metadata) the best one at all. */
  function pickNode(model: string, version: string | undefined, exclude: ReadonlySet<string>, needRoom: boolean): NodeView | undefined {
    const nodes = eligible(model, version).filter((node) => !exclude.has(node.id));
    const withRoom = needRoom ? nodes.filter((node) => room(node, model, overcommit) > 0) : nodes;
    const pool = withRoom.length > 0 ? withRoom : nodes;
    // Nodes that have not reported an execution time count at the fleet's mean (1 ms when none has:
    // the key then orders by rounds ahead alone).
    const fallbackMs = reportedExecTimeMs(pool, model) ?? 1;
    return picker.pick(model, pool, (node) => expectedWaitMs(node, model, fallbackMs));
  }

  const upstream = createUpstreamCaller({
    transport,
    directory,
    clock,
    ...(observer !== undefined ? { observer } : {}),
    pickNode: (model, version, exclude) => pickNode(model, version, exclude, false),
    settled: (model) => queues.pumpAll(model),
  });

  const metadataCall = (model: string, version: string | undefined, ctx: MetadataContext, call: Parameters<typeof upstream.metadata>[3]) =>
    upstream.metadata(model, version, ctx, call, () =>
      known(model, version) ? new TesseraError('UNAVAILABLE', `no node is ready to serve model '${model}'`, { retryAfterMs: 1000 }) : notFound(model, version),
    );

  /** Version choice, admission, node choice and the upstream call of one request. */
  function admit(request: InferRequest, ctx: DispatchContext, pin?: SequencePin): Promise<UpstreamInferResult> {
    const model = request.modelName;
    const own = request.modelVersion === undefined || request.modelVersion === '' ? undefined : request.modelVersion;
    // A sequence's follow-ups keep the version that answered its START, whatever the traffic split says.
    const version = versions.choose(model, own ?? pin?.binding?.version, ctx.headers);
    if (!known(model, version)) return Promise.reject(notFound(model, version));
    const routed: InferRequest = version === own ? request : { ...request, modelVersion: version };
    const { queue } = queues.queueFor(model, version);
    // From admission to the queue's release (or refusal): the gateway-side wait of the request.
    const admission = ctx.trace?.tracer.enabled !== true ? undefined : ctx.trace.tracer.startSpan('admission', {
      parent: ctx.trace.parent,
      attributes: { 'tessera.model': model, 'tessera.model_version': version, 'tessera.tier': ctx.tier.name, 'tessera.priority': ctx.tier.priority, 'tessera.queue_depth': queue.depth },
    });
    return new Promise<UpstreamInferResult>((resolve, reject) => {
      queue.admit(
        { tier: ctx.tier.name, priority: ctx.tier.priority, share: ctx.tier.queueShare, deadline: ctx.deadline, ...(ctx.signal ? { signal: ctx.signal } : {}), ...(ctx.streamDeadline === undefined ? {} : { answerBy: ctx.streamDeadline }) },
        {
          dispatch: () => {
            admission?.end();
            const pinned = pin?.binding?.nodeId;
            const node = pinned !== undefined ? holder(pinned, model) : pickNode(model, version, new Set(), true);
            if (node === undefined) {
              // Room implies a candidate; this only guards against a directory changing under us.
              reject(pin?.gone?.() ?? new TesseraError('UNAVAILABLE', `no node is ready to serve model '${model}'`, { retryAfterMs: 1000 }));
              return;
            }
            // Counted before returning, so the queue sees the room taken (AdmissionHandlers.dispatch).
            const release = directory.track(node.id);
            upstream.infer(node, release, routed, ctx, version, pinned === undefined, pin?.answered).then(resolve, reject);
          },
          reject: (error) => {
            admission?.setError(error);
            admission?.end();
            reject(error);
          },
        },
      );
      queues.schedulePump();
    });
  }

  /** The node holding a sequence while it can still be reached: in the directory, serving the model, breaker not open. */
  const holder = (nodeId: string, model: string): NodeView | undefined =>
    directory.all().find((node) => node.id === nodeId && node.models.has(model) && !breakers?.isOpen(node.id));

  const dispatchAsTenantSequence = createSequenceDispatch({ router: sequences, nodeSequenceIds, transport, clock, admit, holder });

  return {
    versions,

    dispatch(request, ctx) {
      if (closed) return Promise.reject(TesseraError.unavailable('the gateway is shutting down'));
      const scope = ctx.tenantScope ?? ctx.tenantId;
      let seq: SequenceRequest | undefined;
      let display: string | undefined;
      try {
        display = readSequenceParams(request.parameters)?.display;
        seq = sequences?.read(scope, request);
      } catch (error) {
        return Promise.reject(toTesseraError(error));
      }
      if (display === undefined) return admit(request, ctx);
      return dispatchAsTenantSequence(request, ctx, scope, display, seq);
    },

    modelConfig: (model, version, ctx) => metadataCall(model, version, ctx, (node, opts) => transport.modelConfig(node, model, version, opts)),
    modelMetadata: (model, version, ctx) =>
      metadataCall(model, version, ctx, (node, opts) => transport.modelMetadata(node, model, version, opts)),

    modelReady: (model, version) => eligible(model, version).length > 0,

    models() {
      noteFleet();
      return [...seen.entries()]
        .sort(([a], [b]) => a.localeCompare(b))
        .map(([name, versions]) => ({
          name,
          versions: [...versions]
            .sort((a, b) => Number(a) - Number(b) || a.localeCompare(b))
            .map((version) => ({ version, ready: eligible(name, version).length > 0 })),
        }));
    },

    queueDepth: (model) => queues.depth(model),

    async close() {
      if (closed) return;
      closed = true;
      unsubscribe?.();
      queues.close();
    },
  };
}
