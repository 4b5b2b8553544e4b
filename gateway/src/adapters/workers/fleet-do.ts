/**
 * FleetDO: how the edge learns its fleet without Redis. ONE object (named "fleet") holds the latest
 * load report of every node; nodes (or a Node gateway, or a sidecar) push their `LoadReport` JSON
 * (shared/src/fleet) to the Worker's `POST /admin/fleet/report` with the fleet token, and the Worker
 * forwards it here. Worker isolates and admission objects read `GET /snapshot` about once a second.
 *
 * Routes (internal; only the Worker reaches a Durable Object):
 * - POST /report   one report, or an array of reports: validated (`validateLoadReport`), kept when it
 *                  supersedes the node's previous one. 204, or 400 naming the bad field.
 * - POST /leave    {"nodeId", "startedAt"}: the node leaves now; reports of that same process (or an
 *                  older one) are ignored from then on, so a late report cannot resurrect it. 204.
 * - GET  /snapshot {"reports": [...]}: the reports that are not stale (`isStale`, the same rule as the
 *                  Node gateway's). Reports stale for more than 10 TTLs are forgotten.
 *
 * State: in memory for reads, and written through to the object's storage (`report:<nodeId>`,
 * `departed:<nodeId>`), because an object that receives nothing for a few seconds is evicted from
 * memory: a fleet whose pusher paused must not vanish with it (staleness decides, not eviction).
 */
import { TesseraError, toTesseraError } from '../../../../shared/src/errors/index.js';
import { isStale, supersedes, validateLoadReport } from '../../../../shared/src/fleet/index.js';
import type { LoadReport } from '../../../../shared/src/fleet/index.js';
import { errorResponse, jsonResponse } from '../../core/http/index.js';
import { quietLogger } from './console-logger.js';
import type { DurableObjectNamespaceLike, DurableObjectStateLike } from './workers-bindings.js';

/** The one FleetDO's name. */
export const FLEET_OBJECT_NAME = 'fleet';
/** A report stale for this many TTLs is dropped from memory. */
const FORGET_AFTER_TTLS = 10;

export class FleetDO {
  private readonly reports = new Map<string, LoadReport>();
  /** nodeId → startedAt of a process that said it left. */
  private readonly departed = new Map<string, number>();

  constructor(
    private readonly state: DurableObjectStateLike,
    _env: unknown,
  ) {
    void state.blockConcurrencyWhile(async () => {
      for (const report of (await state.storage.list<LoadReport>({ prefix: 'report:' })).values()) this.reports.set(report.nodeId, report);
      for (const [key, startedAt] of await state.storage.list<number>({ prefix: 'departed:' })) this.departed.set(key.slice('departed:'.length), startedAt);
    });
  }

  async fetch(request: Request): Promise<Response> {
    try {
      const path = new URL(request.url).pathname;
      if (request.method === 'POST' && path === '/report') {
        const body: unknown = await request.json().catch(() => {
          throw TesseraError.invalidArg('malformed load report: the body must be JSON');
        });
        const items = Array.isArray(body) ? body : [body];
        const reports = items.map((item) => validateLoadReport(item));
        for (const report of reports) await this.accept(report);
        return new Response(null, { status: 204 });
      }
      if (request.method === 'POST' && path === '/leave') {
        const body = (await request.json().catch(() => ({}))) as { nodeId?: unknown; startedAt?: unknown };
        if (typeof body.nodeId !== 'string' || typeof body.startedAt !== 'number') {
          throw TesseraError.invalidArg('a leave needs {"nodeId": string, "startedAt": number}');
        }
        const startedAt = Math.max(this.departed.get(body.nodeId) ?? 0, body.startedAt);
        this.departed.set(body.nodeId, startedAt);
        await this.state.storage.put(`departed:${body.nodeId}`, startedAt);
        const known = this.reports.get(body.nodeId);
        if (known !== undefined && known.startedAt <= body.startedAt) {
          this.reports.delete(body.nodeId);
          await this.state.storage.delete(`report:${body.nodeId}`);
        }
        return new Response(null, { status: 204 });
      }
      if (request.method === 'GET' && path === '/snapshot') {
        const now = Date.now();
        for (const [nodeId, report] of this.reports) {
          if (now - report.sentAt > report.ttlMs * FORGET_AFTER_TTLS) {
            this.reports.delete(nodeId);
            await this.state.storage.delete(`report:${nodeId}`);
          }
        }
        return jsonResponse({ reports: [...this.reports.values()].filter((r) => !isStale(r, now)) });
      }
      return jsonResponse({ error: 'Not Found' }, 404);
    } catch (error) {
      return errorResponse(toTesseraError(error), quietLogger);
    }
  }

  private async accept(report: LoadReport): Promise<void> {
    const gone = this.departed.get(report.nodeId);
    if (gone !== undefined) {
      if (report.startedAt <= gone) return;
      this.departed.delete(report.nodeId);
      await this.state.storage.delete(`departed:${report.nodeId}`);
    }
    const known = this.reports.get(report.nodeId);
    if (known === undefined || supersedes(report, known)) {
      this.reports.set(report.nodeId, report);
      await this.state.storage.put(`report:${report.nodeId}`, report);
    }
  }
}

/** The Worker side: the FleetDO's stub, with the three calls. */
export interface FleetClient {
  /** Forwards a report (or an array) as JSON text; answers the FleetDO's response (204 or 400). */
  report(body: string): Promise<Response>;
  leave(body: string): Promise<Response>;
  snapshot(): Promise<readonly LoadReport[]>;
}

export function createFleetClient(namespace: DurableObjectNamespaceLike): FleetClient {
  const stub = () => namespace.get(namespace.idFromName(FLEET_OBJECT_NAME));
  const post = (path: string, body: string) =>
    stub().fetch(`https://fleet${path}`, { method: 'POST', body, headers: { 'Content-Type': 'application/json' } });
  return {
    report: (body) => post('/report', body),
    leave: (body) => post('/leave', body),
    async snapshot() {
      const response = await stub().fetch('https://fleet/snapshot');
      if (!response.ok) throw TesseraError.unavailable(`the fleet object answered ${response.status}`);
      const { reports } = (await response.json()) as { reports: unknown[] };
      // Re-validated: a copy with known fields only, as everywhere a report crosses a boundary.
      return reports.map((r) => validateLoadReport(r));
    },
  };
}
