/**
 * HTTP/2 receive windows for the gRPC server.
 *
 * grpc-js's server keeps HTTP/2's defaults: 64 KiB per stream and 64 KiB for the whole connection, and
 * it has no option to change them (its `grpc-node.flow_control_window` is a client option). A client
 * that sends a burst of requests on one connection, as Triton's clients and perf_analyzer do with
 * concurrency N on one channel, then stalls every 64 KiB until the server's event loop has read enough
 * to send a WINDOW_UPDATE: with 64 callers of a 4 KiB tensor (mlp_large), a quarter of each burst can
 * go before the rest waits. gRPC's C++ server (Triton's) sizes its windows by bandwidth-delay probing,
 * to megabytes.
 *
 * We reach grpc-js's http2 servers (shared/src/grpc/grpc-js-internals.ts; flow-control.test.ts fails if they move) and
 * use Node's public API on them: `updateSettings` for the per-stream window every new connection is
 * offered, and `setLocalWindowSize` for each connection's own window.
 */
import type { ServerHttp2Session } from 'node:http2';
import type { Server } from '@grpc/grpc-js';
import { http2ServersOf } from '../../../../shared/src/grpc/index.js';

/** Default receive window, per stream and per connection: 8 MiB (memory is only used by data in flight). */
export const DEFAULT_FLOW_CONTROL_WINDOW = 8 * 1024 * 1024;

/**
 * Widens the windows of every http2 server of `server` (call it after bindAsync). Returns how many
 * servers it changed, so the caller can tell (and log) when grpc-js's internals moved.
 */
export function widenFlowControlWindows(server: Server, windowBytes = DEFAULT_FLOW_CONTROL_WINDOW): number {
  const servers = http2ServersOf(server);
  for (const h2 of servers) {
    h2.updateSettings({ initialWindowSize: windowBytes });
    h2.on('session', (session: ServerHttp2Session) => {
      // The connection window starts at 64 KiB whatever SETTINGS say; only a WINDOW_UPDATE widens it.
      try {
        session.setLocalWindowSize(windowBytes);
      } catch {
        // A session that is already closing has no window to widen.
      }
    });
  }
  return servers.length;
}
