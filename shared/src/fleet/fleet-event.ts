/**
 * Join and leave events, published as JSON on `FleetKeys.eventsChannel` so that gateways learn of
 * fleet changes between two scans of the node keys.
 *
 * - `join`: the node's first successful report after starting, AND its first after every Redis
 *   outage (its key may have expired meanwhile, so gateways may have dropped it). Joins are
 *   therefore idempotent for readers. The event carries the report, sparing a GET.
 * - `leave`: the node stops reporting (graceful shutdown). `deregistered` says whether it also
 *   deleted its key; when false the key lingers until its TTL, and readers should ignore reports of
 *   that (nodeId, startedAt) from then on.
 *
 * Pub/sub is fire-and-forget: a gateway that was disconnected misses events, which is why the keys
 * with their TTL stay the source of truth and events only make the fleet view react sooner.
 */
import { JsonChecker } from './json-checks.js';
import { NODE_ID_EXPECTED, NODE_ID_PATTERN } from './keys.js';
import { validateLoadReport } from './load-report.js';
import type { LoadReport } from './load-report.js';

export const FLEET_EVENT_VERSION = 1;

/** Events are small; anything longer is refused (a join carries one report, see MAX_LOAD_REPORT_CHARS). */
const MAX_FLEET_EVENT_CHARS = (1 << 20) + 4096;

interface FleetEventBase {
  /** Shape version: `FLEET_EVENT_VERSION`; the same compatibility rule as the load report's. */
  readonly version: typeof FLEET_EVENT_VERSION;
  readonly nodeId: string;
  /** The node process's start time, as in its reports. */
  readonly startedAt: number;
  /** When the event was sent, ms since the epoch on the node's clock. */
  readonly sentAt: number;
}

export interface JoinEvent extends FleetEventBase {
  readonly type: 'join';
  /** The report written in the same round trip as this event. */
  readonly report: LoadReport;
}

export interface LeaveEvent extends FleetEventBase {
  readonly type: 'leave';
  /** True when the node deleted its key before leaving. */
  readonly deregistered: boolean;
}

export type FleetEvent = JoinEvent | LeaveEvent;

const check = new JsonChecker('fleet event');

/** Parses and validates one message of the events channel; throws INVALID_ARG naming the bad field. */
export function parseFleetEvent(json: string): FleetEvent {
  const doc = check.object(check.parseJson(json, MAX_FLEET_EVENT_CHARS), 'the event');
  const base: FleetEventBase = {
    version: check.literal(doc.version, 'version', [FLEET_EVENT_VERSION]),
    nodeId: check.string(doc.nodeId, 'nodeId', NODE_ID_PATTERN, NODE_ID_EXPECTED),
    startedAt: check.integer(doc.startedAt, 'startedAt'),
    sentAt: check.integer(doc.sentAt, 'sentAt'),
  };
  const type = check.literal(doc.type, 'type', ['join', 'leave'] as const);
  if (type === 'leave') return { ...base, type, deregistered: check.boolean(doc.deregistered, 'deregistered') };
  const report = validateLoadReport(doc.report);
  if (report.nodeId !== base.nodeId) check.fail('report.nodeId', `equal to nodeId ${JSON.stringify(base.nodeId)}`, report.nodeId);
  if (report.startedAt !== base.startedAt) check.fail('report.startedAt', `equal to startedAt ${base.startedAt}`, report.startedAt);
  return { ...base, type, report };
}
