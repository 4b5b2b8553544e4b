/**
 * The Dispatcher: admission, version choice, node choice and the upstream call of one request.
 *
 *   dispatch(request, ctx)
 *     → version: the request's own, else the model's traffic split (version-splits.ts), else the node's latest
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
 * send, so each counter is released exactly once on success, error, deadline and cancellation. The
 * queue is pumped after each release, on fleet changes, and every `pumpIntervalMs` while requests
 * wait (load reports and half-open breakers change the room without telling us).
 *
 * The dispatcher owns its queues; the directory and the transport belong to the caller (close them
 * after `close()`).
 */
import { TesseraError, toTesseraError } from '../../../../shared/src/errors/index.js';
import type { ErrorCode } from '../../../../shared/src/errors/index.js';
import type { InferRequest } from '../../../../shared/src/tensors/index.js';
import type { TraceContext } from '../../../../shared/src/tracing/index.js';
import { AdmissionQueue, systemClock } from '../admission/index.js';
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
  SequenceBinding,
  SequenceIdKeySource,
  TimerHandle,
  UpstreamCallOptions,
  UpstreamInferResult,
} from '../ports/index.js';
import { DEFAULT_OVERCOMMIT, expectedWaitMs, modelLoadOf, reportedExecTimeMs, room } from './node-load.js';
import { createPicker } from './pickers.js';
import { streamUpstream } from './stream-upstream.js';
import { isNotAccepted, upstreamDetails } from './upstream-errors.js';
import { normalizeRoutingConfig, selectVersion } from './version-splits.js';
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

const EMA_ALPHA = 0.2;
const DEFAULT_PUMP_INTERVAL_MS = 100;
/** Deadline of the background config read that learns a sequence model's idle time. */
const SEQUENCE_CONFIG_TIMEOUT_MS = 5000;

/** What a sequence request adds to a dispatch (see dispatchSequence). */
interface SequencePin {
  /** A non-START request: the node (and version) holding the sequence; no other node, no retry. */
  readonly binding?: SequenceBinding;
  /** The error when that node is gone by the time the request leaves the queue. */
  readonly gone?: () => TesseraError;
  /** Told which node answered (a START's binding). */
  readonly answered?: (node: NodeView) => void;
}

interface ModelQueue {
  readonly model: string;
  readonly version: string | undefined;
  readonly queue: AdmissionQueue;
}

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
  const queues = new Map<string, ModelQueue>();
  /** Measured upstream time per model, for admission estimates when no node reports one. */
  const measuredExecMs = new Map<string, number>();
  let pumpTimer: TimerHandle | undefined;
  let closed = false;

  const eligible = (model: string, version: string | undefined): NodeView[] =>
    directory.candidates(model, version).filter((node) => !breakers?.isOpen(node.id));

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

  function queueFor(model: string, version: string | undefined): ModelQueue {
    const key = version === undefined ? model : `${model}\u0000${version}`;
    let entry = queues.get(key);
    if (entry === undefined) {
      const queue = new AdmissionQueue({
        name: version === undefined ? model : `${model}@${version}`,
        clock,
        ...(options.admission?.maxQueue !== undefined ? { maxQueue: options.admission.maxQueue } : {}),
        ...(options.admission?.defaultRetryAfterMs !== undefined ? { defaultRetryAfterMs: options.admission.defaultRetryAfterMs } : {}),
        ...(observer !== undefined ? { observer } : {}),
        load: {
          room: () => eligible(model, version).reduce((sum, node) => sum + room(node, model, overcommit), 0),
          capacity: () => eligible(model, version).reduce((sum, node) => sum + Math.max(1, modelLoadOf(node, model).capacity), 0),
          execTimeMs: () => reportedExecTimeMs(eligible(model, version), model) ?? measuredExecMs.get(model) ?? null,
        },
      });
      entry = { model, version, queue };
      queues.set(key, entry);
    }
    return entry;
  }

  function pumpAll(model?: string): void {
    for (const entry of queues.values()) {
      if (model === undefined || entry.model === model) entry.queue.pump();
    }
    schedulePump();
  }

  function schedulePump(): void {
    if (closed || pumpTimer !== undefined) return;
    if (![...queues.values()].some((entry) => entry.queue.depth > 0)) return;
    pumpTimer = clock.setTimeout(() => {
      pumpTimer = undefined;
      pumpAll();
    }, pumpIntervalMs);
  }

  const unsubscribe = options.fleetEvents?.onChange(() => {
    noteFleet();
    pumpAll();
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

  /** `trace`: the context the node's spans hang under (the upstream span, or the caller's parent). */
  function callOptions(request: InferRequest, ctx: DispatchContext, trace: TraceContext | undefined): UpstreamCallOptions {
    // Never 0: Triton reads `timeout: 0` as "no timeout". A deadline already gone fails in the transport.
    const remainingUs = Math.max(1, Math.floor((ctx.deadline - clock.now()) * 1000));
    const clientTimeout = request.parameters.timeout;
    const timeoutUs =
      typeof clientTimeout === 'number' && Number.isSafeInteger(clientTimeout) && clientTimeout > 0
        ? Math.min(clientTimeout, remainingUs)
        : remainingUs;
    // The tier decides the node-side priority: a client's own `priority` parameter is overridden.
    return { deadline: ctx.deadline, priority: ctx.tier.priority, timeoutUs, ...(ctx.signal ? { signal: ctx.signal } : {}), ...(trace ? { trace } : {}) };
  }

  /** One upstream infer on `node`, counted in flight from before the call until it settled. */
  async function sendOnce(node: NodeView, release: () => void, request: InferRequest, ctx: DispatchContext, retry: boolean) {
    const model = request.modelName;
    const started = clock.now();
    let outcome: 'OK' | ErrorCode = 'OK';
    // The node's own spans become children of this one (traceparent in the call's metadata). With
    // tracing off no span is made, but a client's traceparent still reaches the node.
    const span = ctx.trace?.tracer.enabled !== true ? undefined : ctx.trace.tracer.startSpan('upstream', {
      parent: ctx.trace.parent,
      kind: 'client',
      attributes: { 'tessera.node_id': node.id, 'tessera.attempt': retry ? 2 : 1, 'tessera.model': model, 'tessera.model_version': request.modelVersion },
    });
    try {
      const options = callOptions(request, ctx.streamDeadline === undefined ? ctx : { ...ctx, deadline: ctx.streamDeadline }, span === undefined ? ctx.trace?.parent : span.context());
      const result = ctx.onResponse === undefined ? await transport.infer(node, request, options) : await streamUpstream(transport, node, request, options, ctx.onResponse);
      if (result.load) directory.observe(node.id, model, result.load);
      const elapsed = clock.now() - started;
      const previous = measuredExecMs.get(model);
      measuredExecMs.set(model, previous === undefined ? elapsed : previous + EMA_ALPHA * (elapsed - previous));
      return result;
    } catch (error) {
      const load = upstreamDetails(error).load;
      if (load) directory.observe(node.id, model, load);
      outcome = toTesseraError(error).code;
      span?.setError(error);
      throw error;
    } finally {
      span?.end();
      release();
      observer?.upstream?.({ model, nodeId: node.id, outcome, durationMs: clock.now() - started, retry });
      pumpAll(model);
    }
  }

  /** `retry: false` for a sequence's follow-ups (their state lives on `first`); `answered` learns the node that answered. */
  async function run(
    first: NodeView,
    firstRelease: () => void,
    request: InferRequest,
    ctx: DispatchContext,
    version: string | undefined,
    retry = true,
    answered?: (node: NodeView) => void,
  ) {
    try {
      const result = await sendOnce(first, firstRelease, request, ctx, false);
      answered?.(first);
      return result;
    } catch (error) {
      if (!retry || !isNotAccepted(error) || ctx.signal?.aborted || clock.now() >= ctx.deadline) throw toTesseraError(error);
      const next = pickNode(request.modelName, version, new Set([first.id]), false);
      if (next === undefined) throw toTesseraError(error);
      const release = directory.track(next.id);
      try {
        const result = await sendOnce(next, release, request, ctx, true);
        answered?.(next);
        return result;
      } catch (second) {
        throw toTesseraError(second);
      }
    }
  }

  async function metadataCall(
    model: string,
    version: string | undefined,
    ctx: MetadataContext,
    call: (node: NodeView, options: UpstreamCallOptions) => Promise<unknown>,
  ): Promise<unknown> {
    const opts: UpstreamCallOptions = { deadline: ctx.deadline, ...(ctx.signal ? { signal: ctx.signal } : {}) };
    const first = pickNode(model, version, new Set(), false);
    if (first === undefined) {
      if (!known(model, version)) throw notFound(model, version);
      throw new TesseraError('UNAVAILABLE', `no node is ready to serve model '${model}'`, { retryAfterMs: 1000 });
    }
    try {
      return await call(first, opts);
    } catch (error) {
      if (!isNotAccepted(error) || ctx.signal?.aborted || clock.now() >= ctx.deadline) throw toTesseraError(error);
      const next = pickNode(model, version, new Set([first.id]), false);
      if (next === undefined) throw toTesseraError(error);
      return call(next, opts).catch((second: unknown) => {
        throw toTesseraError(second);
      });
    }
  }

  /** Version choice, admission, node choice and the upstream call of one request. */
  function admit(request: InferRequest, ctx: DispatchContext, pin?: SequencePin): Promise<UpstreamInferResult> {
    const model = request.modelName;
    const own = request.modelVersion === undefined || request.modelVersion === '' ? undefined : request.modelVersion;
    // A sequence's follow-ups keep the version that answered its START, whatever the traffic split says.
    const asked = own ?? pin?.binding?.version;
    const modelRouting = routing.models?.[model];
    const header = modelRouting?.stickyHeader;
    const sticky = header !== undefined ? (ctx.headers?.get(header) ?? undefined) : undefined;
    const version =
      asked ?? selectVersion(model, modelRouting, sticky, (v) => eligible(model, v).length > 0, random);
    if (!known(model, version)) return Promise.reject(notFound(model, version));
    const routed: InferRequest = version === own ? request : { ...request, modelVersion: version };
    const { queue } = queueFor(model, version);
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
            run(node, release, routed, ctx, version, pinned === undefined, pin?.answered).then(resolve, reject);
          },
          reject: (error) => {
            admission?.setError(error);
            admission?.end();
            reject(error);
          },
        },
      );
      schedulePump();
    });
  }

  /** The node holding a sequence while it can still be reached: in the directory, serving the model, breaker not open. */
  const holder = (nodeId: string, model: string): NodeView | undefined =>
    directory.all().find((node) => node.id === nodeId && node.models.has(model) && !breakers?.isOpen(node.id));

  /** A request of a sequence (core/sequences/sequence-router.ts): a START records its node, the rest follow it. */
  async function dispatchSequence(request: InferRequest, ctx: DispatchContext, seq: SequenceRequest): Promise<UpstreamInferResult> {
    const router = sequences!;
    const model = request.modelName;
    if (seq.start) {
      const answered: { node?: NodeView } = {};
      const result = await admit(request, ctx, { answered: (node) => (answered.node = node) });
      const node = answered.node!;
      const version = result.response.modelVersion === '' ? undefined : result.response.modelVersion;
      await router.started(seq, { nodeId: node.id, ...(version === undefined ? {} : { version }) }, () =>
        transport.modelConfig(node, model, version, { deadline: clock.now() + SEQUENCE_CONFIG_TIMEOUT_MS }),
      );
      return result;
    }
    const binding = await router.lookup(seq);
    if (holder(binding.nodeId, model) === undefined) throw router.gone(seq);
    let result: UpstreamInferResult;
    try {
      result = await admit(request, ctx, { binding, gone: () => router.gone(seq) });
    } catch (error) {
      // Refused before the node took it (down, unreachable, breaker open): the state is out of reach.
      throw isNotAccepted(error) ? router.gone(seq, error) : error;
    }
    if (seq.end) await router.ended(seq);
    return result;
  }

  /**
   * A sequence request with its id replaced by the tenant's node-level id; the client's own id is put
   * back into the answer's `sequence_id` parameter and into error messages that quote the node-level id.
   */
  async function dispatchAsTenantSequence(
    request: InferRequest,
    ctx: DispatchContext,
    scope: string,
    display: string,
    seq: SequenceRequest | undefined,
  ): Promise<UpstreamInferResult> {
    const canonical = seq?.id ?? readSequenceParams(request.parameters)!.id;
    const original = request.parameters.sequence_id!;
    let nodeId: bigint;
    try {
      nodeId = await nodeSequenceIds.nodeId(scope, canonical);
    } catch (error) {
      throw new TesseraError('UNAVAILABLE', `cannot route sequence ${display}: the sequence id key is not available (${toTesseraError(error).message})`, {
        retryAfterMs: 1000,
        cause: error,
      });
    }
    const forwarded: InferRequest = { ...request, parameters: { ...request.parameters, sequence_id: nodeId } };
    const nodeText = String(nodeId);
    try {
      const result = seq === undefined ? await admit(forwarded, ctx) : await dispatchSequence(forwarded, ctx, seq);
      const params = result.response.parameters;
      if (params === undefined || !Object.hasOwn(params, 'sequence_id')) return result;
      return { ...result, response: { ...result.response, parameters: { ...params, sequence_id: original } } };
    } catch (error) {
      const tessera = toTesseraError(error);
      if (tessera.message.includes(nodeText)) {
        Object.defineProperty(tessera, 'message', { value: tessera.message.replaceAll(nodeText, display), configurable: true, writable: true });
      }
      throw tessera;
    }
  }

  return {
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

    queueDepth: (model) => [...queues.values()].reduce((sum, entry) => (entry.model === model ? sum + entry.queue.depth : sum), 0),

    async close() {
      if (closed) return;
      closed = true;
      unsubscribe?.();
      if (pumpTimer !== undefined) clock.clearTimeout(pumpTimer);
      pumpTimer = undefined;
      for (const entry of queues.values()) entry.queue.close();
    },
  };
}
