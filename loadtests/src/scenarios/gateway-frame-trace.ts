/**
 * Reads and writes of the gateway, per leg, and the HTTP/2 frames in them, from the text of
 * `strace -f -qq -yy -xx -s N -e trace=... -o FILE` (issue 17: where a gRPC miss's extra wake-ups and reads come from).
 * Pure parsing here; gateway-frame-account.ts runs the trace.
 *
 * A leg is a socket, named by its ports (`-yy` prints `TCP:[local->remote]`): the client's connection to the gRPC
 * or HTTP port, the gateway's connection to the node's gRPC or HTTP port, Redis. The bytes of each direction of an
 * HTTP/2 leg are cut into frames from the first traced read or write on, so the trace must start between frames
 * (a c=1 load that is idle when the trace starts); a connection preface is skipped.
 */

export const FRAME_TYPES = ['DATA', 'HEADERS', 'PRIORITY', 'RST_STREAM', 'SETTINGS', 'PUSH_PROMISE', 'PING', 'GOAWAY', 'WINDOW_UPDATE', 'CONTINUATION'];
const PREFACE = Buffer.from('PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n');

export interface LegPorts {
  readonly grpcFront: number;
  readonly httpFront: number;
  readonly nodeGrpc: number;
  readonly nodeHttp: number;
  readonly redis: number;
}

export interface SyscallEvent {
  readonly tid: number;
  readonly call: string;
  /** `local->remote` ports of the socket, when the first argument is a TCP socket. */
  readonly local?: number;
  readonly remote?: number;
  /** Bytes read or written (the returned count's worth of the printed strings). */
  readonly bytes?: Buffer;
  readonly result: number;
}

const LINE = /^(\d+)\s+(\w+)\((.*)\)\s+=\s+(-?\d+)/;
const SOCKET = /^\d+<TCP(?:v6)?:\[(?:[\d.]+|\[[\da-f:]+\]):(\d+)->(?:[\d.]+|\[[\da-f:]+\]):(\d+)\]>/;
const STRING = /"((?:\\x[0-9a-f]{2})*)"/g;

/** One strace line (with `<unfinished ...>` / `resumed>` pairs already joined) to an event, or undefined. */
export function parseLine(line: string): SyscallEvent | undefined {
  const m = LINE.exec(line);
  if (m === null) return undefined;
  const [, tid, call, args, result] = m;
  const socket = SOCKET.exec(args!);
  const event: SyscallEvent = { tid: Number(tid), call: call!, result: Number(result), ...(socket === null ? {} : { local: Number(socket[1]), remote: Number(socket[2]) }) };
  if (socket === null || !/^(read|write|writev|readv|recvfrom|sendto|sendmsg|recvmsg)$/.test(call!) || Number(result) <= 0) return event;
  const parts: Buffer[] = [];
  for (const s of args!.matchAll(STRING)) parts.push(Buffer.from(s[1]!.replace(/\\x/g, ''), 'hex'));
  return { ...event, bytes: Buffer.concat(parts).subarray(0, Number(result)) };
}

/** Joins strace's split lines: `TID call(args <unfinished ...>` then `TID <... call resumed>rest`. */
export function joinedLines(text: string): string[] {
  const pending = new Map<string, string>();
  const out: string[] = [];
  for (const line of text.split('\n')) {
    const unfinished = /^(\d+)\s+(.*) <unfinished \.\.\.>$/.exec(line);
    if (unfinished !== null) {
      pending.set(unfinished[1]!, unfinished[2]!);
      continue;
    }
    const resumed = /^(\d+)\s+<\.\.\. \w+ resumed>(.*)$/.exec(line);
    if (resumed !== null) {
      const head = pending.get(resumed[1]!);
      pending.delete(resumed[1]!);
      if (head !== undefined) out.push(`${resumed[1]} ${head}${resumed[2]}`);
      continue;
    }
    out.push(line);
  }
  return out;
}

export function legOf(event: SyscallEvent, ports: LegPorts): string {
  if (event.local === undefined) return 'not a TCP socket';
  if (event.local === ports.grpcFront) return 'client↔gateway gRPC';
  if (event.local === ports.httpFront) return 'client↔gateway HTTP';
  if (event.remote === ports.nodeGrpc) return 'gateway↔node gRPC';
  if (event.remote === ports.nodeHttp) return 'gateway↔node HTTP';
  if (event.remote === ports.redis) return 'gateway↔Redis';
  return `other ${event.local}->${event.remote}`;
}

/** Cuts one direction of one HTTP/2 connection into frames; counts by type (`SETTINGS+ACK`, `DATA+END_STREAM`, ...). */
export class FrameCounter {
  private pending = Buffer.alloc(0);
  private started = false;
  broken = false;
  readonly counts = new Map<string, number>();

  feed(bytes: Buffer): void {
    if (this.broken) return;
    let buf = this.pending.length === 0 ? bytes : Buffer.concat([this.pending, bytes]);
    if (!this.started) {
      this.started = true;
      if (buf.subarray(0, PREFACE.length).equals(PREFACE)) buf = buf.subarray(PREFACE.length);
    }
    let at = 0;
    while (buf.length - at >= 9) {
      const length = buf.readUIntBE(at, 3);
      const type = buf[at + 3]!;
      const flags = buf[at + 4]!;
      if (type >= FRAME_TYPES.length || length > 1 << 20) {
        this.broken = true;
        return;
      }
      if (buf.length - at < 9 + length) break;
      const name = FRAME_TYPES[type]!;
      const ack = (type === 4 || type === 6) && (flags & 1) !== 0 ? '+ACK' : '';
      const end = (type === 0 || type === 1) && (flags & 1) !== 0 ? '+END_STREAM' : '';
      const key = `${name}${ack}${end}`;
      this.counts.set(key, (this.counts.get(key) ?? 0) + 1);
      at += 9 + length;
    }
    this.pending = Buffer.from(buf.subarray(at));
  }
}

export interface LegAccount {
  readonly calls: Map<string, number>;
  readonly bytes: { in: number; out: number };
  readonly framesIn?: FrameCounter;
  readonly framesOut?: FrameCounter;
}

const READS = new Set(['read', 'readv', 'recvfrom', 'recvmsg']);

/** The main thread's system calls by kind; per leg: calls, bytes each way, and for HTTP/2 legs the frames each way. */
export function accountLegs(text: string, ports: LegPorts, mainTid: number): { legs: Map<string, LegAccount>; calls: Map<string, number> } {
  const legs = new Map<string, LegAccount>();
  const calls = new Map<string, number>();
  for (const line of joinedLines(text)) {
    const event = parseLine(line);
    if (event === undefined) continue;
    const kind = event.call === 'read' && event.result < 0 ? 'read (EAGAIN)' : event.call;
    if (event.tid !== mainTid) continue;
    calls.set(kind, (calls.get(kind) ?? 0) + 1);
    if (event.local === undefined) continue;
    const name = legOf(event, ports);
    const h2 = name.includes('gRPC');
    let leg = legs.get(name);
    if (leg === undefined) {
      leg = { calls: new Map(), bytes: { in: 0, out: 0 }, ...(h2 ? { framesIn: new FrameCounter(), framesOut: new FrameCounter() } : {}) };
      legs.set(name, leg);
    }
    leg.calls.set(kind, (leg.calls.get(kind) ?? 0) + 1);
    if (event.bytes === undefined) continue;
    const incoming = READS.has(event.call);
    leg.bytes[incoming ? 'in' : 'out'] += event.bytes.length;
    (incoming ? leg.framesIn : leg.framesOut)?.feed(event.bytes);
  }
  return { legs, calls };
}
