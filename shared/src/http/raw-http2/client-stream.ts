/**
 * One request stream of the raw HTTP/2 client (client-connection.ts): what the connection keeps for it
 * (id, windows, the request bytes still waiting for a window) and the handler its answer goes to. The
 * header block is encoded once by the caller (`requestBlock`); a stream gets its id only when its
 * HEADERS are written, so streams waiting for the peer's MAX_CONCURRENT_STREAMS have none.
 */
import { encodeHeaderBlock, type OutgoingFields } from './hpack-encoder.js';
import { STATIC_NAME_INDEX } from './static-table.js';

/** The answer's header fields by name (the first value of a repeated name), `:status` included. */
export type ResponseFields = Record<string, string>;

/** How a stream ended. */
export interface ClientStreamEnd {
  /** NO_ERROR when the answer was complete; else the RST_STREAM or connection error code. */
  readonly code: number;
  /** The peer cannot have processed it: never sent, REFUSED_STREAM, or above a GOAWAY's last stream id. */
  readonly refused: boolean;
  /** Its HEADERS were written to the socket. */
  readonly sent: boolean;
  /** Who ended it: the answer completed, the peer reset it, we reset it, or the connection ended. */
  readonly by: 'answer' | 'peer' | 'local' | 'connection';
  /** Why, in words, for logs and call errors. */
  readonly reason: string;
}

export interface ClientStreamHandler {
  /** The final response headers; `endStream` when they end the answer (gRPC's trailers-only). */
  headers(fields: ResponseFields, endStream: boolean): void;
  data(chunk: Buffer): void;
  /** Trailers: they always end the answer. */
  trailers(fields: ResponseFields): void;
  /** Called once, last. */
  close(end: ClientStreamEnd): void;
}

/** A request's header block and its list size as SETTINGS_MAX_HEADER_LIST_SIZE counts it. */
export interface RequestBlock {
  readonly block: Buffer;
  readonly listBytes: number;
}

/** What RFC 9113 §6.5.2 adds to each field's name and value lengths. */
const FIELD_OVERHEAD = 32;
/** Prefixes kept per (method, authority, path): a gateway calls a handful of methods on a handful of nodes. */
const PREFIX_CACHE_LIMIT = 256;
const prefixes = new Map<string, RequestBlock>();

/** An HPACK string's length fits its 7-bit prefix below this: one byte (RFC 7541 §5.1). */
const ONE_BYTE_LENGTH = 0x7f;
/** `name` as a literal header name without indexing (RFC 7541 §6.2.2, new name), by name. */
const nameLiterals = new Map<string, Buffer>();

/**
 * The header block of a request: the pseudo-headers and `fixed` fields encoded once per (authority,
 * path) and cached; `varying` fields (trace context) appended per call, then the one field every call
 * has a value of its own for (`grpc-timeout`), written straight after them: no fields object, no second
 * block to join.
 */
export function requestBlock(
  authority: string,
  path: string,
  fixed: OutgoingFields,
  name: string,
  value: string,
  varying?: Readonly<Record<string, string>>,
): RequestBlock {
  const key = `${authority} ${path}`;
  let prefix = prefixes.get(key);
  if (prefix === undefined) {
    const fields: OutgoingFields = { ':method': 'POST', ':scheme': 'http', ':authority': authority, ':path': path, ...fixed };
    prefix = { block: encodeHeaderBlock(fields), listBytes: listBytesOf(fields) };
    if (prefixes.size >= PREFIX_CACHE_LIMIT) prefixes.clear();
    prefixes.set(key, prefix);
  }
  const head = varying === undefined ? prefix.block : Buffer.concat([prefix.block, encodeHeaderBlock(varying)]);
  const listBytes = prefix.listBytes + name.length + value.length + FIELD_OVERHEAD + (varying === undefined ? 0 : listBytesOf(varying));
  const literal = nameLiteral(name);
  if (literal === undefined || value.length >= ONE_BYTE_LENGTH) return { block: Buffer.concat([head, encodeHeaderBlock({ [name]: value })]), listBytes };
  const block = Buffer.allocUnsafe(head.length + literal.length + 1 + value.length);
  head.copy(block, 0);
  literal.copy(block, head.length);
  block[head.length + literal.length] = value.length;
  block.write(value, head.length + literal.length + 1, 'latin1');
  return { block, listBytes };
}

/** A short name's literal (0x00, its length, its bytes), encoded once; undefined for a long one or one the static table has. */
function nameLiteral(name: string): Buffer | undefined {
  let literal = nameLiterals.get(name);
  if (literal === undefined) {
    if (name.length >= ONE_BYTE_LENGTH || STATIC_NAME_INDEX.has(name)) return undefined;
    literal = Buffer.concat([Buffer.of(0x00, name.length), Buffer.from(name, 'latin1')]);
    if (nameLiterals.size >= PREFIX_CACHE_LIMIT) nameLiterals.clear();
    nameLiterals.set(name, literal);
  }
  return literal;
}

function listBytesOf(fields: OutgoingFields): number {
  let bytes = 0;
  for (const name of Object.keys(fields)) {
    const value = fields[name];
    if (value !== undefined) bytes += name.length + String(value).length + FIELD_OVERHEAD;
  }
  return bytes;
}

export class RawH2ClientStream {
  /** 0 until its HEADERS are written. */
  id = 0;
  sendWindow = 0;
  receiveWindow = 0;
  uncredited = 0;
  /** Its reader paused: what it receives is not credited back, so the peer stops after one window. */
  creditHeld = false;
  /** Request bytes not yet sent, in order; the last one carries END_STREAM. */
  readonly outbound: Uint8Array[];
  queuedBytes = 0;
  headersSeen = false;
  remoteEnded = false;
  closed = false;
  /** performance.now() when the peer's window stopped our output; 0 when it is not stopped. */
  blockedSince = 0;

  constructor(
    readonly request: RequestBlock,
    body: readonly Uint8Array[],
    readonly handler: ClientStreamHandler,
  ) {
    this.outbound = body.filter((chunk) => chunk.length > 0);
    for (const chunk of this.outbound) this.queuedBytes += chunk.length;
  }
}
