/**
 * The load report: what a node writes under its key (`FleetKeys.nodeKey`) about once a second, and
 * what the gateway routes on. It is JSON with the shape of `LoadReport`.
 *
 * Compatibility: fields may be ADDED within a `version` (readers ignore fields they do not know);
 * removing or changing the meaning of a field bumps `LOAD_REPORT_VERSION`, and readers refuse
 * versions they do not know rather than guess.
 *
 * How a gateway may use the numbers (the node does not prescribe it): the expected wait on a model
 * is about `(queued + inflight) / capacity * execTimeEmaMs`, to which it adds the requests it sent
 * since `sentAt`.
 */
import { JsonChecker } from './json-checks.js';
import { NODE_ID_EXPECTED, NODE_ID_PATTERN } from './keys.js';

export const LOAD_REPORT_VERSION = 1;

/** Reports longer than this (characters of JSON) are refused: a node with thousands of models fits well within. */
export const MAX_LOAD_REPORT_CHARS = 1 << 20;
/** At most this many models per report. */
export const MAX_REPORTED_MODELS = 10_000;
/** At most this many READY versions per model. */
export const MAX_REPORTED_VERSIONS = 1_000;

/** The load of one model on one node, all its READY versions together. */
export interface ModelLoad {
  /** The model's name as clients address it. */
  readonly name: string;
  /** The versions in state READY, as decimal strings ("1", "3"); never empty. */
  readonly versions: readonly string[];
  /** Requests accepted and waiting in the scheduler's queue (not executing). */
  readonly queued: number;
  /** Requests executing now. */
  readonly inflight: number;
  /**
   * Requests the model can execute at once: sum over READY versions of instances × max(1, max_batch_size).
   * At least 1.
   */
  readonly capacity: number;
  /** Smoothed (EMA) execution time of one batch in ms; null before the first batch ran. */
  readonly execTimeEmaMs: number | null;
}

export interface LoadReport {
  /** Shape version of this document: `LOAD_REPORT_VERSION`. */
  readonly version: typeof LOAD_REPORT_VERSION;
  /** The node's id, as in its key. */
  readonly nodeId: string;
  /** Advertised KServe HTTP address `host:port` (IPv6 as `[::1]:8000`); null when HTTP is off. */
  readonly httpAddress: string | null;
  /** Advertised KServe gRPC address `host:port`; null when gRPC is off. At least one address is set. */
  readonly grpcAddress: string | null;
  /**
   * Advertised `host:port` of the node's LLM routes over cleartext HTTP/2 (added within version 1:
   * absent from older nodes' reports, which gateways then reach over HTTP/1.1 at `httpAddress`).
   */
  readonly llmH2Address?: string;
  /** When this node process started, ms since the epoch; a restarted node has a new value. */
  readonly startedAt: number;
  /** When this report was built, ms since the epoch on the node's clock. */
  readonly sentAt: number;
  /** Strictly increasing per (nodeId, startedAt), from 1; gaps mean reports that never arrived. */
  readonly seq: number;
  /** The TTL the node put on its key; also the staleness limit (see `isStale`). */
  readonly ttlMs: number;
  /** One entry per model with at least one READY version. */
  readonly models: readonly ModelLoad[];
  /** True while the node is shutting down or otherwise asks not to receive new requests. */
  readonly draining: boolean;
}

const check = new JsonChecker('load report');

const VERSION_PATTERN = /^[0-9]{1,19}$/;
const MODEL_NAME_PATTERN = /^[^/\\]{1,256}$/;
const ADDRESS_PATTERN = /^(\[[0-9A-Fa-f:.]{2,45}\]|[A-Za-z0-9.-]{1,253}):([0-9]{1,5})$/;
const ADDRESS_EXPECTED = "null or an address 'host:port' with a port in 1..65535";

/** Parses and validates the JSON text of a report; throws INVALID_ARG naming the bad field. */
export function parseLoadReport(json: string): LoadReport {
  return validateLoadReport(check.parseJson(json, MAX_LOAD_REPORT_CHARS));
}

/**
 * Validates an already-parsed report and returns a copy holding only the known fields, so nothing
 * unexpected (or a later in-place change) reaches the gateway's fleet view.
 */
export function validateLoadReport(value: unknown): LoadReport {
  const doc = check.object(value, 'the report');
  const version = check.literal(doc.version, 'version', [LOAD_REPORT_VERSION]);
  const nodeId = check.string(doc.nodeId, 'nodeId', NODE_ID_PATTERN, NODE_ID_EXPECTED);
  const httpAddress = address(doc.httpAddress, 'httpAddress');
  const grpcAddress = address(doc.grpcAddress, 'grpcAddress');
  if (httpAddress === null && grpcAddress === null) check.fail('httpAddress', 'set when grpcAddress is null', null);
  const llmH2Address = doc.llmH2Address === undefined ? null : address(doc.llmH2Address, 'llmH2Address');
  const models = check.array(doc.models, 'models', MAX_REPORTED_MODELS).map((m, i) => modelLoad(m, `models[${i}]`));
  const names = new Set<string>();
  models.forEach((model, i) => {
    if (names.has(model.name)) check.fail(`models[${i}].name`, 'unique within the report', model.name);
    names.add(model.name);
  });
  return {
    version,
    nodeId,
    httpAddress,
    grpcAddress,
    ...(llmH2Address === null ? {} : { llmH2Address }),
    startedAt: check.integer(doc.startedAt, 'startedAt'),
    sentAt: check.integer(doc.sentAt, 'sentAt'),
    seq: check.integer(doc.seq, 'seq', 1),
    ttlMs: check.integer(doc.ttlMs, 'ttlMs', 1),
    models,
    draining: check.boolean(doc.draining, 'draining'),
  };
}

function modelLoad(value: unknown, path: string): ModelLoad {
  const doc = check.object(value, path);
  const versions = check.array(doc.versions, `${path}.versions`, MAX_REPORTED_VERSIONS);
  if (versions.length === 0) check.fail(`${path}.versions`, 'a non-empty array (only READY models are reported)', versions);
  const ema = doc.execTimeEmaMs;
  return {
    name: check.string(doc.name, `${path}.name`, MODEL_NAME_PATTERN, 'a model name of 1 to 256 characters without slashes'),
    versions: versions.map((v, i) => check.string(v, `${path}.versions[${i}]`, VERSION_PATTERN, 'a decimal version string')),
    queued: check.integer(doc.queued, `${path}.queued`),
    inflight: check.integer(doc.inflight, `${path}.inflight`),
    capacity: check.integer(doc.capacity, `${path}.capacity`, 1),
    execTimeEmaMs: ema === null ? null : check.nonNegative(ema, `${path}.execTimeEmaMs`),
  };
}

function address(value: unknown, path: string): string | null {
  if (value === null) return null;
  const text = check.string(value, path, ADDRESS_PATTERN, ADDRESS_EXPECTED);
  const port = Number(ADDRESS_PATTERN.exec(text)?.[2]);
  if (port < 1 || port > 65_535) check.fail(path, ADDRESS_EXPECTED, value);
  return text;
}

/**
 * The staleness rule. A report is stale, and its node must leave the pick set, when it is older
 * than its own `ttlMs`: `nowMs - sentAt > ttlMs`. That is the moment Redis would have expired the
 * key had the node stopped refreshing, so an in-memory copy never outlives what Redis would keep.
 * A report dated more than `ttlMs` in the FUTURE is stale too: the two clocks disagree by more than
 * a TTL, so neither age nor freshness can be trusted (nodes and gateways are expected to run NTP;
 * skew well under `ttlMs` is tolerated). `nowMs` is the reader's clock, ms since the epoch.
 */
export function isStale(report: Pick<LoadReport, 'sentAt' | 'ttlMs'>, nowMs: number): boolean {
  const age = nowMs - report.sentAt;
  return age > report.ttlMs || -age > report.ttlMs;
}

/**
 * Whether `next` is newer than `prev` for the same node: a later process (`startedAt`) or a later
 * `seq` of the same process. Readers keep the newer one, so a slow GET cannot roll a node back.
 */
export function supersedes(next: Pick<LoadReport, 'startedAt' | 'seq'>, prev: Pick<LoadReport, 'startedAt' | 'seq'>): boolean {
  return next.startedAt > prev.startedAt || (next.startedAt === prev.startedAt && next.seq > prev.seq);
}
