/**
 * A gateway dispatcher that never answers: it records each call's cancellation signal and, once that
 * aborts, the reason it gave, then rejects. For tests of how a client leaving (or a deadline passing)
 * reaches the upstream call, where a real node would answer too fast to leave a window.
 */
import { TesseraError } from '../../../shared/src/errors/index.js';
import type { GatewayDispatcher } from '../../src/core/app/index.js';
import type { CancelSignal } from '../../src/core/http/index.js';
import type { DispatchContext } from '../../src/core/ports/index.js';

export interface WaitingCall {
  readonly signal: CancelSignal | undefined;
  /** Resolves with the signal's reason once it aborts. */
  readonly aborted: Promise<unknown>;
}

export class WaitingDispatcher implements GatewayDispatcher {
  readonly calls: WaitingCall[] = [];

  async dispatch(_request: unknown, ctx: DispatchContext): Promise<never> {
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

  async modelConfig(model: string) {
    return { name: model };
  }

  async modelMetadata(model: string) {
    return { name: model, versions: ['1'], platform: 'fake' };
  }

  modelReady(model: string) {
    return model === 'simple';
  }
}
