/**
 * The dispatcher's upstream calls: one infer on a chosen node, counted in flight from before the
 * call until it settled (`directory.track` released in a `finally`), with the deadline, the tier's
 * `priority` and the `timeout` (µs) it leaves; a failure before the node accepted the request
 * (`notAccepted`) retried ONCE on another candidate if the deadline still allows, nothing else
 * retried. Metadata calls (config, metadata) follow the same retry rule.
 */
import { toTesseraError } from '../../../../shared/src/errors/index.js';
import type { ErrorCode , TesseraError} from '../../../../shared/src/errors/index.js';
import type { InferRequest } from '../../../../shared/src/tensors/index.js';
import type { TraceContext } from '../../../../shared/src/tracing/index.js';
import type { Clock, DispatchContext, DispatchObserver, MetadataContext, NodeDirectory, NodeTransport, NodeView, UpstreamCallOptions, UpstreamInferResult } from '../ports/index.js';
import { streamUpstream } from './stream-upstream.js';
import { isNotAccepted, upstreamDetails } from './upstream-errors.js';

const EMA_ALPHA = 0.2;

export interface UpstreamCallerOptions {
  readonly transport: NodeTransport;
  readonly directory: NodeDirectory;
  readonly clock: Clock;
  readonly observer?: DispatchObserver;
  /** The best node for the model apart from `exclude` (retries and metadata: room not required). */
  readonly pickNode: (model: string, version: string | undefined, exclude: ReadonlySet<string>) => NodeView | undefined;
  /** Told when a call settled and released its node (the queues may have room again). */
  readonly settled: (model: string) => void;
}

export interface UpstreamCaller {
  /** `retry: false` for a sequence's follow-ups (their state lives on `first`); `answered` learns the node that answered. */
  infer(
    first: NodeView,
    firstRelease: () => void,
    request: InferRequest,
    ctx: DispatchContext,
    version: string | undefined,
    retry?: boolean,
    answered?: (node: NodeView) => void,
  ): Promise<UpstreamInferResult>;
  metadata(model: string, version: string | undefined, ctx: MetadataContext, call: (node: NodeView, options: UpstreamCallOptions) => Promise<unknown>, unavailable: () => TesseraError): Promise<unknown>;
  /** Measured upstream time of the model (an EMA), for admission estimates when no node reports one. */
  measuredExecMs(model: string): number | undefined;
}

export function createUpstreamCaller(options: UpstreamCallerOptions): UpstreamCaller {
  const { transport, directory, clock, observer, pickNode } = options;
  const measured = new Map<string, number>();

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

  async function sendOnce(node: NodeView, release: () => void, request: InferRequest, ctx: DispatchContext, retry: boolean): Promise<UpstreamInferResult> {
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
      const callOpts = callOptions(request, ctx.streamDeadline === undefined ? ctx : { ...ctx, deadline: ctx.streamDeadline }, span === undefined ? ctx.trace?.parent : span.context());
      const result = ctx.onResponse === undefined ? await transport.infer(node, request, callOpts) : await streamUpstream(transport, node, request, callOpts, ctx.onResponse);
      if (result.load) directory.observe(node.id, model, result.load);
      const elapsed = clock.now() - started;
      const previous = measured.get(model);
      measured.set(model, previous === undefined ? elapsed : previous + EMA_ALPHA * (elapsed - previous));
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
      options.settled(model);
    }
  }

  return {
    async infer(first, firstRelease, request, ctx, version, retry = true, answered) {
      try {
        const result = await sendOnce(first, firstRelease, request, ctx, false);
        answered?.(first);
        return result;
      } catch (error) {
        if (!retry || !isNotAccepted(error) || ctx.signal?.aborted || clock.now() >= ctx.deadline) throw toTesseraError(error);
        const next = pickNode(request.modelName, version, new Set([first.id]));
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
    },

    async metadata(model, version, ctx, call, unavailable) {
      const opts: UpstreamCallOptions = { deadline: ctx.deadline, ...(ctx.signal ? { signal: ctx.signal } : {}) };
      const first = pickNode(model, version, new Set());
      if (first === undefined) throw unavailable();
      try {
        return await call(first, opts);
      } catch (error) {
        if (!isNotAccepted(error) || ctx.signal?.aborted || clock.now() >= ctx.deadline) throw toTesseraError(error);
        const next = pickNode(model, version, new Set([first.id]));
        if (next === undefined) throw toTesseraError(error);
        return call(next, opts).catch((second: unknown) => {
          throw toTesseraError(second);
        });
      }
    },

    measuredExecMs: (model) => measured.get(model),
  };
}
