/**
 * System and CUDA shared-memory extensions. Tessera registers no regions (its nodes are reached over
 * the network, where client shared memory cannot work), so: the status of all regions is `[]`, the
 * status of a named region is 404 (it cannot exist), register is 501, and unregister succeeds (200)
 * because removing what is not there is already done — Triton's unregister is idempotent too.
 */
import { TesseraError } from '../../../../shared/src/errors/index.js';
import { emptyResponse, jsonResponse } from './responses.js';

export type SharedMemoryKind = 'system' | 'cuda';

const LABEL: Record<SharedMemoryKind, string> = { system: 'system', cuda: 'cuda' };

export function handleSharedMemoryStatus(kind: SharedMemoryKind, region?: string): Response {
  if (region !== undefined) {
    throw TesseraError.notFound(`Unable to find ${LABEL[kind]} shared memory region: '${region}'`);
  }
  return jsonResponse([]);
}

export function handleSharedMemoryRegister(kind: SharedMemoryKind): Response {
  throw TesseraError.unsupported(`${LABEL[kind]} shared memory is not supported by Tessera`);
}

export function handleSharedMemoryUnregister(): Response {
  return emptyResponse(200);
}
