/**
 * Kept-alive sockets to the nodes' HTTP/1.1 ports for the raw LLM upstream (llm-raw-upstream.ts): per
 * address, the sockets whose last answer ended cleanly. An idle socket keeps reading so that the node
 * closing it, an error, or bytes nobody asked for (a second answer) are seen at once: any of them
 * destroys the socket and takes it out. One idle for IDLE_MS is closed, under node's 5 s keep-alive
 * timeout, so the gateway rarely writes into a socket the node is closing.
 */
import { connect, type Socket } from 'node:net';
import { splitHostPort } from '../../../../shared/src/http/index.js';

const IDLE_MS = 3_000;

export class RawSocketPool {
  private readonly idle = new Map<string, Socket[]>();
  /** What takes an idle socket out of its list; removed when the socket is taken. */
  private readonly drops = new Map<Socket, () => void>();

  constructor(
    private readonly maxIdlePerAddress: number,
    private readonly idleMs = IDLE_MS,
  ) {}

  /** An idle socket to `address`, most recently used first; undefined when none. */
  take(address: string): Socket | undefined {
    const list = this.idle.get(address);
    const socket = list?.pop();
    if (socket === undefined) return undefined;
    this.unwatch(socket);
    socket.ref();
    return socket;
  }

  /** A new connection (Nagle off: a request is one small write that must not wait for an ACK). */
  open(address: string): Socket {
    const socket = connect({ ...splitHostPort(address), noDelay: true });
    // Whoever holds the socket reads its errors; between holders an error must not reach the process.
    socket.on('error', () => {});
    return socket;
  }

  /** Keeps a socket whose answer ended cleanly and carried nothing after its end. */
  giveBack(address: string, socket: Socket): void {
    let list = this.idle.get(address);
    if (list === undefined) this.idle.set(address, (list = []));
    if (socket.destroyed || list.length >= this.maxIdlePerAddress) {
      socket.destroy();
      return;
    }
    const idle = list;
    const drop = (): void => {
      this.unwatch(socket);
      socket.destroy();
      const at = idle.indexOf(socket);
      if (at >= 0) idle.splice(at, 1);
    };
    this.drops.set(socket, drop);
    socket.on('data', drop);
    socket.on('end', drop);
    socket.on('error', drop);
    socket.on('close', drop);
    // A 'timeout' listener of its own, taken off with the others (setTimeout's callback form would pile up one per reuse).
    socket.on('timeout', drop);
    socket.setTimeout(this.idleMs);
    socket.unref(); // an idle pool does not keep the process alive
    socket.resume();
    idle.push(socket);
  }

  close(): void {
    for (const list of this.idle.values()) for (const socket of list.splice(0)) socket.destroy();
    this.drops.clear();
  }

  private unwatch(socket: Socket): void {
    const drop = this.drops.get(socket);
    if (drop === undefined) return;
    this.drops.delete(socket);
    socket.off('data', drop);
    socket.off('end', drop);
    socket.off('error', drop);
    socket.off('close', drop);
    socket.off('timeout', drop);
    socket.setTimeout(0);
  }
}
