/**
 * One AbortSignal per client connection, aborted when the connection closes: every infer request read
 * from that connection takes it as its "client went away" signal. Before, each request made its own
 * AbortController plus a 'close' listener on its response (about 4% of the main thread for `simple`).
 *
 * Sharing is safe because every consumer of a request's signal removes its abort listener when the
 * request settles (the scheduler, the batcher, the worker forwarding, the backends:
 * connection-signal.test.ts counts them after many requests on one connection), and a closed connection
 * serves no further request. A request still in flight when its connection closes is cancelled, as before.
 */
import type { Socket } from 'node:net';
import { TesseraError } from '../../../../shared/src/errors/index.js';

const signals = new WeakMap<Socket, AbortSignal>();

/** The signal of `socket`, made on its first request; already aborted if the socket is already gone. */
export function connectionSignal(socket: Socket): AbortSignal {
  let signal = signals.get(socket);
  if (signal === undefined) {
    const controller = new AbortController();
    signal = controller.signal;
    signals.set(socket, signal);
    const abort = (): void => controller.abort(TesseraError.cancelled('the client closed the connection'));
    if (socket.destroyed) abort();
    else socket.once('close', abort);
  }
  return signal;
}
