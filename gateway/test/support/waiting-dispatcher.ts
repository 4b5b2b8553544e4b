/**
 * A gateway dispatcher that never answers: it records each call's cancellation signal and, once that
 * aborts, the reason it gave, then rejects. For tests of how a client leaving (or a deadline passing)
 * reaches the upstream call, where a real node would answer too fast to leave a window; and the config
 * such tests serve it under.
 */
import { TesseraError } from '../../../shared/src/errors/index.js';
import type { InferRequest } from '../../../shared/src/tensors/index.js';
import type { CancelSignal } from '../../src/core/http/index.js';
import type { DispatchContext } from '../../src/core/ports/index.js';
import { loadGatewayConfig, type GatewayConfig } from '../../src/config/index.js';
import { sha256Hex } from '../../src/core/auth/index.js';
import { FakeModelDirectory } from '../app-fixtures.js';

export interface WaitingCall {
  readonly signal: CancelSignal | undefined;
  /** Resolves with the signal's reason once it aborts. */
  readonly aborted: Promise<unknown>;
}

export class WaitingDispatcher extends FakeModelDirectory {
  readonly calls: WaitingCall[] = [];

  async dispatch(_request: InferRequest, ctx: DispatchContext): Promise<never> {
    let seen!: (reason: unknown) => void;
    const aborted = new Promise<unknown>((resolve) => (seen = resolve));
    this.calls.push({ signal: ctx.signal, aborted });
    return new Promise((_resolve, reject) => {
      ctx.signal?.addEventListener('abort', () => {
        seen(ctx.signal!.reason);
        reject(ctx.signal!.reason instanceof TesseraError ? ctx.signal!.reason : TesseraError.cancelled('the client cancelled the request'));
      }, { once: true });
    });
  }
}

/** A gateway config with one tenant, 'a', whose key is `key`, on a tier with no effective limits; `extra` merged in. */
export async function unlimitedTenantConfig(key: string, extra: Record<string, unknown> = {}): Promise<GatewayConfig> {
  return loadGatewayConfig(
    JSON.stringify({
      tiers: {
        open: { priority: 1, queueTimeoutMs: 60_000, queueShare: 1, cacheTtlSeconds: 60, allowedModels: ['*'],
          rateLimits: { requestsPerSecond: 1e6, burst: 1e6, elementsPerSecond: 0, elementsBurst: 0 } },
      },
      tenants: [{ id: 'a', tier: 'open', keys: [{ id: 'a1', hash: await sha256Hex(key) }] }],
      ...extra,
    }),
  );
}
