/**
 * The node id used when none is configured: the hostname (a pod name under Kubernetes, unique
 * there) plus the pid, so two nodes on one host do not overwrite each other's key. Characters a
 * node id may not hold (see NODE_ID_PATTERN) become '-'.
 */
import { hostname } from 'node:os';

export function defaultNodeId(host: string = hostname(), pid: number = process.pid): string {
  const safeHost = host.replace(/[^A-Za-z0-9._-]/g, '-').slice(0, 100) || 'node';
  return `${safeHost}-${pid}`;
}
