/**
 * The fleet from Redis: the nodes' load-report keys (shared/src/fleet) plus the join/leave channel.
 *
 * - Start: SCAN MATCH the node keys, MGET them, parse each report (a malformed one is ignored and
 *   logged once per distinct value), then SUBSCRIBE to the events channel.
 * - Every `refreshMs` (default 1000, about the nodes' report period) the known nodes' keys are read
 *   again (one MGET): new figures are applied, and nodes whose key is gone (expired or deleted) leave
 *   the view. Every `fullScanEvery`-th time, and whenever the events channel is not subscribed, the
 *   full scan runs instead, so a node whose join event was missed is still found. A node that joined
 *   through an event during a read is not dropped by that read. Why not a scan every second: SCAN then
 *   MGET is two Redis replies, two more loop wake-ups a second, each a request's wait at low rates.
 * - Events make the view react between scans: `join` applies the carried report, `leave` drops the
 *   node and ignores any report of that same process (nodeId, startedAt) from then on, so a key that
 *   lingers until its TTL cannot bring it back. A restarted node (later startedAt) is welcome again.
 * - Reports only replace older ones of the same node (`supersedes`: later process, or later seq).
 *
 * Staleness policy: a node is a candidate only while its last report is fresh, by the shared rule
 * `isStale` (shared/src/fleet/load-report.ts) with the report's own `ttlMs`, or `staleAfterMs` when
 * set. When Redis itself is unreachable, the view is frozen as it was when Redis was last read: a
 * Redis outage says nothing about the nodes, and dropping them would turn it into a full outage. During
 * it, liveness falls to the per-node breakers (a dead node fails its calls and its breaker opens) and
 * the load figures to responses' trailing metadata; nodes that join meanwhile are seen once Redis is
 * back. Responses' trailing metadata refresh the load figures, never liveness.
 */
import { Redis } from 'ioredis';
import { toTesseraError } from '../../../../shared/src/errors/index.js';
import { fleetKeys, isStale, parseFleetEvent, parseLoadReport, supersedes } from '../../../../shared/src/fleet/index.js';
import type { LoadReport } from '../../../../shared/src/fleet/index.js';
import { silentLogger } from '../../../../shared/src/logging/index.js';
import type { Logger } from '../../../../shared/src/logging/index.js';
import type { FleetChange, FleetChangeSource, NodeDirectory, NodeView } from '../../core/ports/index.js';
import { FleetListeners, NodeState } from './fleet-state.js';

export interface RedisNodeDirectoryOptions {
  /** A Redis URL, or an ioredis client (then used for commands and `duplicate()`d for pub/sub, not closed by us). */
  readonly redis: string | Redis;
  /** Key prefix, as the nodes use; default `tessera:`. */
  readonly keyPrefix?: string;
  /** Default: silent. */
  readonly logger?: Logger;
  /** Age after which a report no longer counts; default: the report's own `ttlMs`. */
  readonly staleAfterMs?: number;
  /** Period of the full scan; default 1000 ms. */
  readonly refreshMs?: number;
  /** One periodic refresh in this many is a full scan (the others read the known keys); default 10. */
  readonly fullScanEvery?: number;
  /** Keys per SCAN step and per MGET; default 200. */
  readonly batchSize?: number;
  /** Default Date.now (the reports' sentAt is compared with it). */
  readonly now?: () => number;
}

export interface RedisNodeDirectory extends NodeDirectory, FleetChangeSource {
  /**
   * Runs a full scan that starts after this call (waiting for one in progress first); the periodic
   * refresh calls this too. Never rejects; failures are logged.
   */
  refresh(): Promise<void>;
}

interface Known {
  readonly state: NodeState;
  report: LoadReport;
  /** The tick of the last scan or event that applied a report, to tell who a scan may drop. */
  seenTick: number;
}

/** How long start-up waits for the fleet-event subscription before going on with the scan alone. */
const SUBSCRIBE_WAIT_MS = 2000;

export async function createRedisNodeDirectory(options: RedisNodeDirectoryOptions): Promise<RedisNodeDirectory> {
  const logger = (options.logger ?? silentLogger).child({ component: 'node-directory' });
  const keys = fleetKeys(options.keyPrefix !== undefined ? { prefix: options.keyPrefix } : {});
  const refreshMs = options.refreshMs ?? 1000;
  const batchSize = options.batchSize ?? 200;
  const fullScanEvery = Math.max(1, options.fullScanEvery ?? 10);
  const now = options.now ?? Date.now;
  // Our own clients fail a command after one retry: the next scan is the retry, and a long offline
  // queue would only make the view older.
  const ownClient = typeof options.redis === 'string';
  const client = typeof options.redis === 'string' ? new Redis(options.redis, { maxRetriesPerRequest: 1 }) : options.redis;
  // The subscriber must connect by itself and keep SUBSCRIBE queued until it is connected, whatever the
  // options of the client it is duplicated from (the gateway's own client is `lazyConnect` with no
  // offline queue): ioredis then resubscribes after every reconnect.
  const subscriber = client.duplicate({ lazyConnect: false, enableOfflineQueue: true, maxRetriesPerRequest: null, autoResubscribe: true });
  client.on('error', () => {}); // reported through the failed commands instead; ioredis reconnects by itself
  subscriber.on('error', () => {});

  const nodes = new Map<string, Known>();
  /** nodeId → startedAt of a process that said it left. */
  const departed = new Map<string, number>();
  /** key → the malformed value last logged, so a bad key is logged once, not every second. */
  const malformed = new Map<string, string>();
  const listeners = new FleetListeners();
  let tick = 0;
  let refreshing: Promise<void> | undefined;
  let queuedScan: Promise<void> | undefined;
  let redisDown = false;
  let closed = false;

  const emit = (change: FleetChange): void =>
    listeners.emit(change, (error) => logger.error('fleet change listener failed', { error: toTesseraError(error).message }));

  /** When the last successful read of Redis happened, while Redis is unreachable; undefined otherwise. */
  let frozenAt: number | undefined;
  let lastReadAt = now();
  const fresh = (known: Known): boolean =>
    !isStale({ sentAt: known.report.sentAt, ttlMs: options.staleAfterMs ?? known.report.ttlMs }, frozenAt ?? now());

  function apply(report: LoadReport, seenTick: number): void {
    const gone = departed.get(report.nodeId);
    if (gone !== undefined) {
      if (report.startedAt <= gone) return;
      departed.delete(report.nodeId);
    }
    const known = nodes.get(report.nodeId);
    if (known !== undefined) {
      known.seenTick = Math.max(known.seenTick, seenTick);
      if (!supersedes(report, known.report)) return;
    }
    const state = known?.state ?? new NodeState(report.nodeId, report.httpAddress, report.grpcAddress);
    state.httpAddress = report.httpAddress;
    state.grpcAddress = report.grpcAddress;
    state.llmH2Address = report.llmH2Address ?? null;
    state.draining = report.draining;
    state.models.clear();
    for (const model of report.models) {
      state.models.set(model.name, {
        queued: model.queued,
        inflight: model.inflight,
        capacity: model.capacity,
        execTimeEmaMs: model.execTimeEmaMs,
        versions: model.versions,
      });
    }
    state.sentSinceReport = 0;
    if (known === undefined) {
      nodes.set(report.nodeId, { state, report, seenTick });
      logger.info('node joined', { nodeId: report.nodeId, grpcAddress: report.grpcAddress, models: report.models.length });
      emit({ type: 'join', nodeId: report.nodeId });
    } else {
      known.report = report;
      emit({ type: 'update', nodeId: report.nodeId });
    }
  }

  function remove(nodeId: string, why: string): void {
    if (!nodes.delete(nodeId)) return;
    logger.info('node left', { nodeId, why });
    emit({ type: 'leave', nodeId });
  }

  function parseValue(key: string, value: string): LoadReport | undefined {
    try {
      const report = parseLoadReport(value);
      malformed.delete(key);
      if (keys.nodeIdFromKey(key) !== report.nodeId) {
        logger.warn('load report ignored: its nodeId does not match its key', { key, nodeId: report.nodeId });
        return undefined;
      }
      return report;
    } catch (error) {
      if (malformed.get(key) !== value) {
        malformed.set(key, value);
        logger.warn('malformed load report ignored', { key, error: toTesseraError(error).message });
      }
      return undefined;
    }
  }

  async function scanOnce(): Promise<void> {
    const started = ++tick;
    const found = new Set<string>();
    let cursor = '0';
    do {
      const [next, batch] = await client.scan(cursor, 'MATCH', keys.nodeKeyPattern, 'COUNT', batchSize);
      cursor = next;
      const nodeKeys = batch.filter((key) => keys.nodeIdFromKey(key) !== undefined);
      if (nodeKeys.length === 0) continue;
      const values = await client.mget(...nodeKeys);
      nodeKeys.forEach((key, i) => {
        const value = values[i];
        if (value === null || value === undefined) return; // expired between SCAN and MGET
        found.add(keys.nodeIdFromKey(key)!);
        const report = parseValue(key, value);
        if (report !== undefined) apply(report, started);
      });
    } while (cursor !== '0');
    for (const [nodeId, known] of [...nodes]) {
      // Applied by an event after this scan began: the scan may simply have missed the new key.
      if (!found.has(nodeId) && known.seenTick < started) remove(nodeId, 'its key expired or was deleted');
    }
    for (const key of [...malformed.keys()]) {
      const nodeId = keys.nodeIdFromKey(key);
      if (nodeId === undefined || !found.has(nodeId)) malformed.delete(key);
    }
    // Keep the memory of departures bounded: once the key is gone no stale report can come back.
    for (const nodeId of [...departed.keys()]) if (!found.has(nodeId)) departed.delete(nodeId);
  }

  /** The known nodes' keys only (one MGET): figures, and departures whose key is gone. */
  async function readKnownOnce(): Promise<void> {
    const started = ++tick;
    const nodeIds = [...nodes.keys()];
    for (let from = 0; from < nodeIds.length; from += batchSize) {
      const batch = nodeIds.slice(from, from + batchSize);
      const values = await client.mget(...batch.map((nodeId) => keys.nodeKey(nodeId)));
      batch.forEach((nodeId, i) => {
        const value = values[i];
        if (value === null || value === undefined) {
          const known = nodes.get(nodeId);
          if (known !== undefined && known.seenTick < started) remove(nodeId, 'its key expired or was deleted');
          return;
        }
        const report = parseValue(keys.nodeKey(nodeId), value);
        if (report !== undefined) apply(report, started);
      });
    }
  }

  /** A scan that STARTS after this call: a caller that just wrote a key must not get a scan begun before. */
  function refresh(): Promise<void> {
    return read(scanOnce);
  }

  /** `once` (a full scan or a read of the known keys) after any in progress; never rejects. */
  function read(once: () => Promise<void>): Promise<void> {
    if (refreshing !== undefined) {
      // A full scan asked for meanwhile waits here; a periodic read of the known keys is skipped.
      if (once !== scanOnce) return refreshing;
      queuedScan ??= refreshing.then(() => {
        queuedScan = undefined;
        return refresh();
      });
      return queuedScan;
    }
    refreshing = once()
      .then(
        () => {
          if (redisDown) logger.info('node directory: Redis reachable again');
          redisDown = false;
          frozenAt = undefined;
          lastReadAt = now();
        },
        (error: unknown) => {
          if (!redisDown && !closed) {
            logger.warn('node directory: cannot read the fleet from Redis; routing on the last fleet it showed until it is back', {
              error: toTesseraError(error).message,
            });
          }
          redisDown = true;
          frozenAt ??= lastReadAt;
        },
      )
      .finally(() => {
        refreshing = undefined;
      });
    return refreshing;
  }

  subscriber.on('message', (channel: string, message: string) => {
    if (channel !== keys.eventsChannel || closed) return;
    let event;
    try {
      event = parseFleetEvent(message);
    } catch (error) {
      logger.warn('malformed fleet event ignored', { error: toTesseraError(error).message });
      return;
    }
    if (event.type === 'join') {
      apply(event.report, ++tick);
    } else {
      const previous = departed.get(event.nodeId);
      departed.set(event.nodeId, Math.max(previous ?? 0, event.startedAt));
      const known = nodes.get(event.nodeId);
      if (known !== undefined && known.report.startedAt <= event.startedAt) remove(event.nodeId, 'it announced its departure');
    }
  });

  // Subscribe first: a node that joins during the first scan is then seen one way or the other. While
  // Redis is unreachable the SUBSCRIBE waits in the subscriber's queue and completes once it connects;
  // start-up waits for it only briefly, the periodic scan covers the meantime.
  let listening = false;
  // ioredis resubscribes after a reconnect; until then the periodic refresh scans in full.
  subscriber.on('close', () => {
    listening = false;
  });
  const subscribed = subscriber.subscribe(keys.eventsChannel).then(
    () => {
      listening = true;
      subscriber.on('ready', () => {
        listening = true;
      });
      return true;
    },
    (error: unknown) => {
      if (!closed) logger.warn('node directory: cannot subscribe to fleet events', { error: toTesseraError(error).message });
      return false;
    },
  );
  const early = await Promise.race([subscribed, new Promise<undefined>((resolve) => setTimeout(() => resolve(undefined), SUBSCRIBE_WAIT_MS).unref())]);
  if (early === undefined) {
    logger.warn('node directory: not subscribed to fleet events yet (Redis unreachable); relying on the periodic scan until it is');
    void subscribed.then((ok) => {
      if (ok && !closed) logger.info('node directory: subscribed to fleet events');
    });
  }
  await refresh();
  let sinceFullScan = 0;
  const periodic = (): void => {
    sinceFullScan++;
    if (!listening || redisDown || sinceFullScan >= fullScanEvery) {
      sinceFullScan = 0;
      void refresh();
    } else {
      void read(readKnownOnce);
    }
  };
  const timer = setInterval(periodic, refreshMs);
  timer.unref();

  const live = (): Known[] => [...nodes.values()].filter(fresh);

  return {
    candidates(model, version): readonly NodeView[] {
      return live()
        .filter((known) => {
          if (known.state.draining) return false;
          const load = known.state.models.get(model);
          return load !== undefined && (version === undefined || load.versions.includes(version));
        })
        .map((known) => known.state);
    },
    all: () => [...nodes.values()].map((known) => known.state),
    observe(nodeId, model, load) {
      // No change event: the dispatcher that calls this pumps its queues anyway.
      nodes.get(nodeId)?.state.observe(model, load);
    },
    track(nodeId) {
      const known = nodes.get(nodeId);
      return known ? known.state.track() : () => {};
    },
    onChange: (listener) => listeners.add(listener),
    refresh,
    async close() {
      if (closed) return;
      closed = true;
      clearInterval(timer);
      listeners.clear();
      await (queuedScan ?? refreshing);
      await Promise.allSettled([subscriber.quit(), ownClient ? client.quit() : Promise.resolve()]);
      subscriber.disconnect();
      if (ownClient) client.disconnect();
    },
  };
}
