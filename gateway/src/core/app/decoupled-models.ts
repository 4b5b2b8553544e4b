/**
 * Which models are decoupled (`model_transaction_policy { decoupled: true }`: many responses per
 * request), for the gRPC front door, which streams those requests upstream instead of sending them as
 * unary calls the node refuses.
 *
 * Learned from the model config the dispatcher fetches from a node (as the sequence TTL learns the
 * idle time: core/sequences/sequence-ttl.ts), once per model and `ttlMs`, concurrent asks sharing one
 * fetch. It is the model's own fact, not the tenant's: read without the caller's key, so it costs no
 * tenant any rate-limit token (the request itself is authenticated and limited by the pipeline). Only
 * configs that came back are remembered (at most one entry per model the fleet serves); a failed read
 * answers "not decoupled", so the ordinary path answers the error (unknown model, no node).
 * Why not the load reports: they carry queue figures only, and adding the policy there would need
 * every node to change; the config is already there. A model reloaded with another policy is seen
 * within `ttlMs`.
 */
import type { GatewayDispatcher } from './gateway-deps.js';

export const DEFAULT_DECOUPLED_TTL_MS = 300_000;
/**
 * Longest a decoupled request may stream when its client set no deadline: its wait in the admission
 * queue is bounded by the tier's queue timeout as for any request, but a generation of many responses
 * runs far longer than a unary answer takes. The client cancels earlier at will.
 */
export const DECOUPLED_STREAM_TIMEOUT_MS = 600_000;
/** How long one config read may take. */
const CONFIG_TIMEOUT_MS = 5_000;

export type DecoupledCheck = (model: string, version: string | undefined) => Promise<boolean>;

/** `model_transaction_policy.decoupled` of a Triton config JSON. */
export function isDecoupledConfig(config: unknown): boolean {
  if (typeof config !== 'object' || config === null) return false;
  const policy = (config as { model_transaction_policy?: unknown }).model_transaction_policy;
  return typeof policy === 'object' && policy !== null && (policy as { decoupled?: unknown }).decoupled === true;
}

export function createDecoupledCheck(dispatcher: Pick<GatewayDispatcher, 'modelConfig'>, now: () => number, ttlMs = DEFAULT_DECOUPLED_TTL_MS): DecoupledCheck {
  const learned = new Map<string, { decoupled: boolean; at: number }>();
  const reading = new Map<string, Promise<boolean>>();
  return (model, version) => {
    const known = learned.get(model);
    if (known !== undefined && now() - known.at < ttlMs) return Promise.resolve(known.decoupled);
    const pending = reading.get(model);
    if (pending !== undefined) return pending;
    const read = dispatcher
      .modelConfig(model, version, { deadline: now() + CONFIG_TIMEOUT_MS })
      .then(
        (config) => {
          const decoupled = isDecoupledConfig(config);
          learned.set(model, { decoupled, at: now() });
          return decoupled;
        },
        () => known?.decoupled ?? false,
      )
      .finally(() => reading.delete(model));
    reading.set(model, read);
    return read;
  };
}
