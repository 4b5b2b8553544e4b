/** Listening and closing, for the node's HTTP servers (the HTTP port and the LLM h2c port). */
import type { AddressInfo, Server } from 'node:net';

/** Listens on `port` (0 picks a free one) and answers the address it got. */
export function listenAddress(server: Server, port: number, host: string): Promise<{ port: number; host: string }> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      const address = server.address() as AddressInfo;
      resolve({ port: address.port, host: address.address });
    });
  });
}

/**
 * Stops accepting and resolves once every connection has ended: `letFinish` asks open ones to finish
 * what they are doing; those still open after `graceMs` are cut by `cut`.
 */
export function closeWithin(server: Server, graceMs: number, letFinish: () => void, cut: () => void): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(cut, graceMs);
    timer.unref();
    server.close(() => {
      clearTimeout(timer);
      resolve();
    });
    letFinish();
  });
}
