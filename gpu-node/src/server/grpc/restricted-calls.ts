/**
 * `--grpc-restricted-protocol` on the grpc-js handlers: each RPC belongs to one of Triton's categories
 * (restricted-apis.ts); a call of a restricted category without metadata `triton-grpc-protocol-<key>:
 * <value>` is refused UNAVAILABLE "This protocol is restricted, expecting header '...'" before its
 * handler runs. The ModelInfer fast path (h2-model-infer.ts) leaves such calls to grpc-js, so this is
 * the one place they are refused.
 */
import { Metadata, status as GrpcCode } from '@grpc/grpc-js';
import type { ServerErrorResponse } from '@grpc/grpc-js';
import { allowedBy, grpcRestrictedMessage, type RestrictedCategory, type Restriction, type Restrictions } from '../restricted-apis.js';

/** The method of GRPCInferenceService (by its handler name) → Triton's category. */
export const INFERENCE_SERVICE_CATEGORIES: Readonly<Record<string, RestrictedCategory>> = {
  serverLive: 'health',
  serverReady: 'health',
  modelReady: 'health',
  serverMetadata: 'metadata',
  modelMetadata: 'metadata',
  modelInfer: 'inference',
  modelStreamInfer: 'inference',
  modelConfig: 'model-config',
  modelStatistics: 'statistics',
  repositoryIndex: 'model-repository',
  repositoryModelLoad: 'model-repository',
  repositoryModelUnload: 'model-repository',
  systemSharedMemoryStatus: 'shared-memory',
  systemSharedMemoryRegister: 'shared-memory',
  systemSharedMemoryUnregister: 'shared-memory',
  cudaSharedMemoryStatus: 'shared-memory',
  cudaSharedMemoryRegister: 'shared-memory',
  cudaSharedMemoryUnregister: 'shared-memory',
  traceSetting: 'trace',
  logSettings: 'logging',
};

interface CallLike {
  readonly metadata: Metadata;
  emit(event: 'error', error: ServerErrorResponse): boolean;
}

type AnyHandler = (call: CallLike, callback?: (error: ServerErrorResponse) => void) => void;

/** Whether a call's metadata carries the restriction's key with its value (exactly one value). */
export function metadataAllows(restriction: Restriction | undefined, metadata: Metadata): boolean {
  if (restriction === undefined) return true;
  const values = metadata.get(restriction.header).filter((v): v is string => typeof v === 'string');
  return allowedBy(restriction, values.length === 0 ? undefined : values);
}

/** The handlers, each wrapped with its category's check; unrestricted categories are left untouched. */
export function restrictHandlers<T extends Record<string, unknown>>(
  handlers: T,
  categories: Readonly<Record<string, RestrictedCategory>>,
  restrictions: Restrictions,
): T {
  if (restrictions.size === 0) return handlers;
  const wrapped: Record<string, unknown> = {};
  for (const [name, handler] of Object.entries(handlers)) {
    const category = categories[name];
    const restriction = category === undefined ? undefined : restrictions.get(category);
    wrapped[name] = restriction === undefined ? handler : guard(restriction, handler as AnyHandler);
  }
  return wrapped as T;
}

function guard(restriction: Restriction, handler: AnyHandler): AnyHandler {
  return (call, callback) => {
    if (metadataAllows(restriction, call.metadata)) {
      handler(call, callback);
      return;
    }
    const details = grpcRestrictedMessage(restriction);
    const error = Object.assign(new Error(details), { code: GrpcCode.UNAVAILABLE, details, metadata: new Metadata() });
    // Unary calls answer through their callback; streams end with the error as their status.
    if (typeof callback === 'function') callback(error);
    else call.emit('error', error);
  };
}
