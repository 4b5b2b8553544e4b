/** Listening on a port and answering the address it got (port 0 picks a free one), for the node's HTTP servers. */
import type { AddressInfo, Server } from 'node:net';

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
