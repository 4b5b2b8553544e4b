/**
 * What the gateway's gRPC front door and the node's gRPC server share as listeners: the interface their
 * owners call, the address grpc-js binds (an IPv6 host in brackets), and grpc-js's message size options read
 * as byte counts.
 */

/** A gRPC port: grpc-js's server, with the raw HTTP/2 front ahead of it when configured. */
export interface GrpcListener {
  /** Binds and starts serving; port 0 picks a free port, which the result reports. */
  listen(port?: number, host?: string): Promise<{ port: number }>;
  /** Stops accepting calls, lets running ones finish for up to `graceMs`, then cancels the rest. */
  close(graceMs?: number): Promise<void>;
  /** Streams the raw HTTP/2 front has passed on to grpc-js so far (0 without the front). */
  relayedStreams(): number;
}

/** `host:port` as grpc-js binds it; an IPv6 host goes in brackets. */
export function grpcBindAddress(host: string, port: number): string {
  return host.includes(':') && !host.startsWith('[') ? `[${host}]:${port}` : `${host}:${port}`;
}

/** A grpc-js message size limit as a byte count (-1 is grpc-js's "no limit"). */
export function grpcMessageLimit(value: unknown): number {
  return typeof value === 'number' && value >= 0 ? value : Number.POSITIVE_INFINITY;
}
