/**
 * Kept-alive sockets to the nodes' HTTP/1.1 ports for the raw LLM and infer upstreams
 * (llm-raw-upstream.ts, raw-infer-upstream.ts): per address, the sockets whose last answer ended
 * cleanly. An idle socket keeps reading so that the node closing it, an error, or bytes nobody asked
 * for (a second answer) are seen at once: any of them destroys the socket and takes it out. One idle
 * for IDLE_MS is closed (one sweep for all, within 1.25 IDLE_MS), under node's 5 s keep-alive timeout,
 * so the gateway rarely writes into a socket the node is closing. A socket's watch is added once for
 * its life, not per use: five listeners on and off and two socket timers per request were ~40 µs of a
 * 150/s miss in issue 17's profile. */
import { connect, type Socket } from 'node:net';
import { splitHostPort } from '../../../../shared/src/http/index.js';

const IDLE_MS = 3_000;

/**
 * Who holds a socket and takes its events through the pool's own listeners (raw-infer-exchange.ts), so
 * that a use adds and removes none. A holder that listens itself (llm-raw-upstream.ts) passes none.
 */
export interface SocketHolder {
  onData(chunk: Buffer): void;
  onError(error: Error): void;
  onClose(): void;
}

/** A socket of the pool: its listeners are added once, when it is opened or first kept, for its whole life. */
interface Watch {
  readonly address: string;
  /** When it was last given back (ms, Date.now); 0 while someone holds it. */
  idleSince: number;
  holder: SocketHolder | undefined;
}

export class RawSocketPool {
  private readonly idle = new Map<string, Socket[]>();
  private readonly watches = new Map<Socket, Watch>();
  /** One timer for every idle socket, running only while some socket is idle: no timer per socket and use. */
  private sweeper: ReturnType<typeof setInterval> | undefined = undefined;

  constructor(
    private readonly maxIdlePerAddress: number,
    private readonly idleMs = IDLE_MS,
  ) {}

  /** An idle socket to `address`, most recently used first; undefined when none. `holder` gets its events until `letGo`. */
  take(address: string, holder?: SocketHolder): Socket | undefined {
    const list = this.idle.get(address);
    const socket = list?.pop();
    if (socket === undefined) return undefined;
    const watch = this.watches.get(socket)!;
    watch.idleSince = 0;
    watch.holder = holder;
    socket.ref();
    return socket;
  }

  /** A new connection (Nagle off: a request is one small write that must not wait for an ACK); `holder` as for `take`. */
  open(address: string, holder?: SocketHolder): Socket {
    const socket = connect({ ...splitHostPort(address), noDelay: true });
    // Whoever holds the socket reads its errors; between holders an error must not reach the process.
    socket.on('error', () => {});
    this.watch(address, socket).holder = holder;
    return socket;
  }

  /** The holder no longer wants the socket's events (before giving it back or destroying it). */
  letGo(socket: Socket): void {
    const watch = this.watches.get(socket);
    if (watch !== undefined) watch.holder = undefined;
  }

  /** Keeps a socket whose answer ended cleanly and carried nothing after its end. */
  giveBack(address: string, socket: Socket): void {
    let list = this.idle.get(address);
    if (list === undefined) this.idle.set(address, (list = []));
    if (socket.destroyed || list.length >= this.maxIdlePerAddress) {
      socket.destroy();
      return;
    }
    const watch = this.watches.get(socket) ?? this.watch(address, socket);
    watch.holder = undefined;
    watch.idleSince = Date.now();
    socket.unref(); // an idle pool does not keep the process alive
    socket.resume();
    list.push(socket);
    if (this.sweeper === undefined) {
      // Every quarter of idleMs: a socket idle idleMs is closed within 1.25 idleMs (3.75 s, under the node's 5 s).
      this.sweeper = setInterval(() => this.sweep(), Math.max(1, Math.floor(this.idleMs / 4)));
      this.sweeper.unref();
    }
  }

  close(): void {
    for (const list of this.idle.values()) for (const socket of list.splice(0)) socket.destroy();
    this.stopSweeping();
  }

  /**
   * The socket's listeners, added once: while it is idle, bytes nobody asked for, the node's end or close,
   * or an error destroy it and take it out; while held, they go to its holder (if it has one).
   */
  private watch(address: string, socket: Socket): Watch {
    const watch: Watch = { address, idleSince: 0, holder: undefined };
    this.watches.set(socket, watch);
    socket.on('data', (chunk: Buffer) => {
      if (watch.idleSince !== 0) this.drop(socket, watch);
      else watch.holder?.onData(chunk);
    });
    socket.on('end', () => {
      if (watch.idleSince !== 0) this.drop(socket, watch);
    });
    socket.on('error', (error: Error) => {
      if (watch.idleSince !== 0) this.drop(socket, watch);
      else watch.holder?.onError(error);
    });
    socket.once('close', () => {
      if (watch.idleSince !== 0) this.drop(socket, watch);
      else watch.holder?.onClose();
      this.watches.delete(socket);
    });
    return watch;
  }

  private drop(socket: Socket, watch: Watch): void {
    watch.idleSince = 0;
    socket.destroy();
    const list = this.idle.get(watch.address);
    const at = list?.indexOf(socket) ?? -1;
    if (at >= 0) list!.splice(at, 1);
  }

  /** Closes the sockets idle for idleMs or more: the oldest are first in each list (given back in order, taken from the end). */
  private sweep(): void {
    const oldest = Date.now() - this.idleMs;
    let left = 0;
    for (const list of this.idle.values()) {
      while (list.length > 0 && this.watches.get(list[0]!)!.idleSince <= oldest) this.drop(list[0]!, this.watches.get(list[0]!)!);
      left += list.length;
    }
    if (left === 0) this.stopSweeping();
  }

  private stopSweeping(): void {
    if (this.sweeper !== undefined) clearInterval(this.sweeper);
    this.sweeper = undefined;
  }
}
