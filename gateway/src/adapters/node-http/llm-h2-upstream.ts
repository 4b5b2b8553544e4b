/**
 * The LlmUpstream port over cleartext HTTP/2, for nodes that advertise `llmH2Address` (their
 * --llm-h2c-port), on the gateway's own HTTP/2 client (shared/src/http/raw-http2, the connection of
 * grpc/h2-node-connection.ts): one connection per node carries all its streams, so one read of the node's
 * socket brings the events of many streams. It replaced node:http2's client, whose read of the node's
 * answers was the largest step of a streamed token's gateway CPU (docs/benchmarks.md, issue 20). Nodes
 * without that address, and GET requests, go to `fallback` (HTTP/1.1).
 *
 * - Cancellation: aborting the request's signal resets the stream (RST_STREAM CANCEL); the node's
 *   route sees its request's signal abort, as when an HTTP/1.1 connection closes.
 * - Back-pressure: the answer's body (raw-answer-body.ts) paused by its reader holds back the stream's
 *   flow-control credit, so the node stops sending after one stream window (64 KiB). The connection's
 *   window is sized for every stream's at once and credited as read, so one stalled stream never holds
 *   up the others.
 * - A stream the node never took (never sent, refused, above a GOAWAY, no connection, the connection in
 *   backoff) is marked not accepted and may be retried elsewhere; a stream cut mid-answer (reset, the
 *   connection gone, a protocol error) fails the body's iteration, so a cut answer is never taken for a
 *   whole one.
 */
import { TesseraError } from '../../../../shared/src/errors/index.js';
import {
  encodeHeaderBlock,
  H2Error,
  RawH2ClientRefusal,
  requestBlock,
  type ClientStreamEnd,
  type ClientStreamHandler,
  type RawH2ClientStream,
  type RequestBlock,
  type ResponseFields,
} from '../../../../shared/src/http/raw-http2/index.js';
import type { FleetChangeSource, LlmUpstream, LlmUpstreamRequest, LlmUpstreamResponse, NodeView } from '../../core/ports/index.js';
import { markNotAccepted } from '../../core/routing/upstream-errors.js';
import { ConnectBackoff, NodeConnection, type NodeSession } from '../grpc/h2-node-connection.js';
import type { NodeBreakers } from '../grpc/node-breakers.js';
import { RawAnswerBody, type AnswerFlow } from './raw-answer-body.js';

export interface LlmH2UpstreamOptions {
  /** Where nodes without an HTTP/2 address go (the HTTP/1.1 upstream). */
  readonly fallback: LlmUpstream;
  readonly breakers?: NodeBreakers;
  /** Streams one node may carry at once (sizes the connection's flow-control window); default 256. */
  readonly maxStreamsPerNode?: number;
  /** Fleet changes: a node's connection is closed when it leaves (its streams finish). Default: none. */
  readonly fleetEvents?: FleetChangeSource;
}

/** Per-stream receive window: what a paused stream may leave buffered at the gateway. */
const STREAM_WINDOW_BYTES = 64 * 1024;
/** What RFC 9113 §6.5.2 adds to each field's name and value lengths. */
const FIELD_OVERHEAD = 32;
/** The fields every forwarded LLM request has: its block is encoded once per node and path (requestBlock). */
const JSON_FIELDS = { 'content-type': 'application/json' } as const;

function cancelled(): TesseraError {
  return Object.assign(TesseraError.cancelled('the client closed the connection'), { excused: true });
}

/** The request's header block: the usual JSON POST from the per-path memo, anything else encoded in full. */
function blockOf(authority: string, request: LlmUpstreamRequest, bodyBytes: number): RequestBlock {
  const headers = request.headers;
  const usual = request.method === 'POST' && headers !== undefined && Object.keys(headers).length === 1 && headers['content-type'] === JSON_FIELDS['content-type'];
  if (usual) return requestBlock(authority, request.path, JSON_FIELDS, 'content-length', String(bodyBytes));
  const fields: Record<string, string> = { ':method': request.method, ':scheme': 'http', ':authority': authority, ':path': request.path };
  for (const name in headers) fields[name.toLowerCase()] = headers[name]!;
  if (request.body !== undefined) fields['content-length'] = String(bodyBytes);
  let listBytes = 0;
  for (const name in fields) listBytes += name.length + fields[name]!.length + FIELD_OVERHEAD;
  return { block: encodeHeaderBlock(fields), listBytes };
}

/** The answer's headers without its pseudo-headers. */
function plainHeaders(fields: ResponseFields): Record<string, string> {
  const out: Record<string, string> = {};
  for (const name in fields) if (name.charCodeAt(0) !== 58 /* ':' */) out[name] = fields[name]!;
  return out;
}

/**
 * One request's stream: its handler (the client's callbacks), its body's flow (pause = hold the stream's
 * credit, destroy = reset it) and its settling, in one object per stream.
 */
class LlmH2Stream implements ClientStreamHandler, AnswerFlow {
  readonly body: RawAnswerBody;
  private answered = false;
  private settled = false;
  private timer: NodeJS.Timeout | undefined;
  private stream!: RawH2ClientStream;
  private session!: NodeSession;

  constructor(
    private readonly nodeId: string,
    private readonly request: LlmUpstreamRequest,
    private readonly resolve: (response: LlmUpstreamResponse) => void,
    private readonly reject: (error: unknown) => void,
  ) {
    this.body = new RawAnswerBody(this);
  }

  start(connection: NodeConnection, block: RequestBlock): void {
    const body = this.request.body === undefined ? [] : [this.request.body];
    for (let attempt = 0; ; attempt++) {
      try {
        this.session = connection.session();
        this.stream = this.session.client.request(block, body, this);
        break;
      } catch (error) {
        if (error instanceof ConnectBackoff) return this.fail(this.notSent(error.message));
        // A connection closing under us (a GOAWAY just read) is replaced once: nothing was sent on it.
        if (error instanceof RawH2ClientRefusal && attempt === 0 && this.session !== undefined) {
          connection.retire(this.session);
          continue;
        }
        return this.fail(this.notSent(`could not take a stream: ${(error as Error).message}`));
      }
    }
    this.session.inflight++;
    this.timer = setTimeout(() => {
      this.fail(TesseraError.deadlineExceeded(`node '${this.nodeId}' did not answer within ${this.request.headersTimeoutMs} ms`));
      this.destroy();
    }, this.request.headersTimeoutMs);
    this.request.signal.addEventListener('abort', this.onAbort, { once: true });
  }

  // The stream's handler.

  headers(fields: ResponseFields): void {
    if (this.settled) return;
    this.settled = this.answered = true;
    clearTimeout(this.timer);
    const response: LlmUpstreamResponse = { status: Number(fields[':status']), headers: plainHeaders(fields), body: this.body };
    // Before the body's first bytes: a stream started here gets them directly.
    this.request.onAnswer?.(response);
    this.resolve(response);
  }

  data(chunk: Buffer): void {
    this.body.deliver(chunk);
  }

  trailers(): void {
    // An LLM answer's end needs nothing from them; the stream closes next.
  }

  close(end: ClientStreamEnd): void {
    this.session.inflight--;
    this.request.signal.removeEventListener('abort', this.onAbort);
    clearTimeout(this.timer);
    if (this.answered) {
      if (end.by === 'answer' && end.code === H2Error.NO_ERROR) this.body.finish();
      else this.body.fail(new Error(`the stream from node '${this.nodeId}' was cut mid-answer: ${this.session.endReason ?? end.reason}`));
      return;
    }
    const reason = this.session.endReason ?? end.reason;
    const notAccepted = !this.session.connected || !end.sent || end.refused;
    this.fail(markNotAccepted(TesseraError.unavailable(`node '${this.nodeId}' closed the stream before answering: ${reason}`), notAccepted));
  }

  // The body's flow.

  get destroyed(): boolean {
    return this.stream === undefined || this.stream.closed;
  }

  pause(): void {
    if (!this.destroyed) this.session.client.holdCredit(this.stream);
  }

  resume(): void {
    if (!this.destroyed) this.session.client.releaseCredit(this.stream);
  }

  destroy(): void {
    if (!this.destroyed) this.session.client.reset(this.stream, H2Error.CANCEL, 'cancelled by the gateway');
  }

  private readonly onAbort = (): void => {
    if (this.answered) this.body.fail(new Error('aborted by the gateway'));
    else this.fail(cancelled());
    this.destroy();
  };

  private fail(error: unknown): void {
    if (this.settled) return;
    this.settled = true;
    clearTimeout(this.timer);
    this.reject(error);
  }

  private notSent(reason: string): TesseraError {
    return markNotAccepted(TesseraError.unavailable(`node '${this.nodeId}' could not be reached over HTTP/2: ${reason}`), true);
  }
}

export function createLlmH2Upstream(options: LlmH2UpstreamOptions): LlmUpstream & { close(): void } {
  const connections = new Map<string, NodeConnection>();
  const maxStreams = options.maxStreamsPerNode ?? 256;
  // Room for every stream's window at once: a paused stream must not starve its neighbours.
  const connectionWindow = Math.max(1 << 20, maxStreams * STREAM_WINDOW_BYTES * 2);

  // One per node id, replaced when its address changes and closed when it leaves: as many as the fleet has nodes.
  function connectionFor(nodeId: string, address: string): NodeConnection {
    const existing = connections.get(nodeId);
    if (existing?.address === address) return existing;
    existing?.close();
    const connection = new NodeConnection(address, { windowBytes: connectionWindow, limits: { streamWindowBytes: STREAM_WINDOW_BYTES } });
    connections.set(nodeId, connection);
    return connection;
  }
  const unsubscribe = options.fleetEvents?.onChange((change) => {
    if (change.type !== 'leave') return;
    connections.get(change.nodeId)?.close();
    connections.delete(change.nodeId);
  });

  function call(node: NodeView, address: string, request: LlmUpstreamRequest): Promise<LlmUpstreamResponse> {
    return new Promise<LlmUpstreamResponse>((resolve, reject) => {
      if (request.signal.aborted) return reject(cancelled());
      const block = blockOf(address, request, request.body?.length ?? 0);
      new LlmH2Stream(node.id, request, resolve, reject).start(connectionFor(node.id, address), block);
    });
  }

  return {
    send(node, request) {
      const address = node.llmH2Address;
      if (address === undefined || address === null || request.method !== 'POST') return options.fallback.send(node, request);
      return options.breakers === undefined ? call(node, address, request) : options.breakers.run(node.id, () => call(node, address, request));
    },
    close() {
      unsubscribe?.();
      for (const connection of connections.values()) connection.destroy('the gateway closed');
      connections.clear();
    },
  };
}
