/**
 * AdmissionDO: the per-model priority admission queue of the edge, ONE object per model (named
 * `model:<name>`) for the whole account, so priorities and deadlines are enforced globally, not per
 * location. Inside runs the very core the Node gateway runs: `createDispatcher` (admission queue by
 * tier priority with queue-timeout rejection, version splits, p2c over nodes with room, one retry of
 * a request the node never accepted) over
 * - a SnapshotDirectory fed by the FleetDO (re-read every FLEET_REFRESH_MS while requests wait or
 *   run, and before a dispatch when the view is older than that), and
 * - the HTTP NodeTransport (KServe v2 with binary tensors, `fetch`).
 * Because this object sends ALL edge traffic of its model, its in-flight counts per node are exact.
 *
 * Routes (internal): `POST /dispatch` (admission-wire.ts), `GET /depth` → `{"depth": n}`.
 *
 * The upstream bytes flow through this object: simple and exact, and a bound on throughput per
 * model (one object runs on one thread); docs/edge.md gives the numbers and the way past it.
 */
import type { Logger } from '../../../../shared/src/logging/logger-interface.js';
import { jsonResponse } from '../../core/http/index.js';
import { createDispatcher, type Dispatcher } from '../../core/routing/index.js';
import { createConsoleLogger } from './console-logger.js';
import { decodeDispatch, encodeResult, encodeWireError } from './admission-wire.js';
import { edgeSettings, type EdgeSettings } from './edge-config.js';
import { createFleetClient } from './fleet-do.js';
import { createHttpTransport } from './http-transport.js';
import { createSnapshotDirectory, type SnapshotDirectory } from './snapshot-directory.js';
import type { DurableObjectStateLike, EdgeEnv } from './workers-bindings.js';

export function admissionObjectName(model: string): string {
  return `model:${model}`;
}

interface Running {
  readonly settings: EdgeSettings;
  readonly directory: SnapshotDirectory;
  readonly dispatcher: Dispatcher;
}

export class AdmissionDO {
  private running: Promise<Running> | undefined;
  private active = 0;
  private refreshTimer: ReturnType<typeof setInterval> | undefined;
  private readonly logger: Logger;

  constructor(
    _state: DurableObjectStateLike,
    private readonly env: EdgeEnv,
  ) {
    this.logger = createConsoleLogger({ fields: { component: 'edge-admission' } });
  }

  private start(): Promise<Running> {
    this.running ??= (async () => {
      const settings = await edgeSettings(this.env);
      const fleet = createFleetClient(this.env.FLEET);
      const directory = createSnapshotDirectory({
        load: () => fleet.snapshot(),
        onError: (error) => this.logger.warn('cannot read the fleet', { error: (error as Error).message }),
      });
      const dispatcher = createDispatcher({
        directory,
        transport: createHttpTransport({ scheme: settings.nodeScheme }),
        fleetEvents: directory,
        routing: settings.config.routing,
        // Node-level sequence ids must survive this object's restarts: derived from the admin
        // key's hash (a secret of the deployment) when there is one, else random per instance.
        ...(settings.config.adminKeyHash === null ? {} : { sequenceIdKey: sequenceIdKeyFrom(settings.config.adminKeyHash) }),
      });
      return { settings, directory, dispatcher };
    })();
    return this.running;
  }

  async fetch(request: Request): Promise<Response> {
    const url = new URL(request.url);
    try {
      const { settings, directory, dispatcher } = await this.start();
      if (request.method === 'GET' && url.pathname === '/depth') {
        return jsonResponse({ depth: dispatcher.queueDepth(url.searchParams.get('model') ?? '') });
      }
      if (request.method !== 'POST' || url.pathname !== '/dispatch') return jsonResponse({ error: 'Not Found' }, 404);
      const wire = await decodeDispatch(request);
      this.active++;
      this.keepFleetFresh(directory, settings.fleetRefreshMs);
      try {
        await directory.refreshIfOlder(settings.fleetRefreshMs);
        const sticky = settings.config.routing.models?.[wire.request.modelName]?.stickyHeader;
        const result = await dispatcher.dispatch(wire.request, {
          tenantId: wire.tenantId,
          tier: wire.tier,
          deadline: wire.deadline,
          signal: request.signal,
          ...(sticky !== undefined && wire.sticky !== undefined
            ? { headers: { get: (name: string) => (name.toLowerCase() === sticky.toLowerCase() ? (wire.sticky ?? null) : null) } }
            : {}),
        });
        return encodeResult(result);
      } finally {
        this.active--;
      }
    } catch (error) {
      return encodeWireError(error);
    }
  }

  /** While requests wait or run, the fleet view is re-read periodically (room changes with reports). */
  private keepFleetFresh(directory: SnapshotDirectory, periodMs: number): void {
    if (this.refreshTimer !== undefined) return;
    this.refreshTimer = setInterval(() => {
      if (this.active === 0) {
        clearInterval(this.refreshTimer);
        this.refreshTimer = undefined;
        return;
      }
      void directory.refresh();
    }, periodMs);
  }
}

/** A sequence id key derived from a deployment secret (SHA-256 of a labelled copy of it). */
function sequenceIdKeyFrom(secret: string): () => Promise<Uint8Array> {
  return async () => new Uint8Array(await crypto.subtle.digest('SHA-256', new TextEncoder().encode(`tessera-sequence-ids:${secret}`)));
}
