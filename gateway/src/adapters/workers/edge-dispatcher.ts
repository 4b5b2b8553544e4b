/**
 * The Worker's GatewayDispatcher: inference goes to the model's AdmissionDO (global priority queue,
 * routing and the upstream call happen there); metadata, config and readiness are answered from the
 * isolate's own snapshot of the fleet, calling one node over HTTP (the core dispatcher's metadata
 * path: p2c pick, one retry on a node that refused the connection), because they need no admission.
 */
import type { GatewayDispatcher } from '../../core/app/index.js';
import { toAbortSignal } from '../../core/http/index.js';
import type { NodeTransport } from '../../core/ports/index.js';
import { createDispatcher, type RoutingConfig } from '../../core/routing/index.js';
import { admissionObjectName } from './admission-do.js';
import { decodeResult, encodeDispatch } from './admission-wire.js';
import type { SnapshotDirectory } from './snapshot-directory.js';
import type { DurableObjectNamespaceLike } from './workers-bindings.js';

export interface EdgeDispatcherOptions {
  readonly admission: DurableObjectNamespaceLike;
  readonly directory: SnapshotDirectory;
  readonly transport: NodeTransport;
  readonly routing: RoutingConfig;
}

export function createEdgeDispatcher(options: EdgeDispatcherOptions): GatewayDispatcher {
  const local = createDispatcher({ directory: options.directory, transport: options.transport, routing: options.routing });
  return {
    async dispatch(request, ctx) {
      const stickyHeader = options.routing.models?.[request.modelName]?.stickyHeader;
      const sticky = stickyHeader === undefined ? undefined : (ctx.headers?.get(stickyHeader) ?? undefined);
      // The tenant's scope (id + generation): the AdmissionDO derives node-level sequence ids from it.
      const wire = encodeDispatch({ request, tenantId: ctx.tenantScope ?? ctx.tenantId, tier: ctx.tier, deadline: ctx.deadline, ...(sticky === undefined ? {} : { sticky }) });
      const stub = options.admission.get(options.admission.idFromName(admissionObjectName(request.modelName)));
      const response = await stub.fetch('https://admission/dispatch', {
        method: 'POST',
        headers: wire.headers,
        body: wire.body,
        ...(ctx.signal === undefined ? {} : { signal: toAbortSignal(ctx.signal) }),
      });
      return decodeResult(response);
    },
    modelConfig: (model, version, ctx) => local.modelConfig(model, version, ctx),
    modelMetadata: (model, version, ctx) => local.modelMetadata(model, version, ctx),
    modelReady: (model, version) => local.modelReady(model, version),
  };
}

/** The model's queue depth in its AdmissionDO (for `GET /admin/edge/queues/:model`). */
export async function admissionDepth(admission: DurableObjectNamespaceLike, model: string): Promise<number> {
  const stub = admission.get(admission.idFromName(admissionObjectName(model)));
  const response = await stub.fetch(`https://admission/depth?model=${encodeURIComponent(model)}`);
  return ((await response.json()) as { depth: number }).depth;
}
