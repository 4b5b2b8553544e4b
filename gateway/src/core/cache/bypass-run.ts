/**
 * A produced response served without the cache (BYPASS), its body and headers read from it only when
 * something reads them. Why: the answer of a bypassed miss may be written from the response itself (the
 * gRPC front door forwards the node's message), and a produced response may encode its KServe body on
 * first read (core/app/encoded-on-read.ts): copying `body` into a new object here would encode it for
 * nothing.
 */
import type { CacheRunResult, ProducedResponse } from './cache-types.js';

class BypassRun implements CacheRunResult {
  readonly status = 'BYPASS' as const;
  readonly computeUs: number;

  constructor(private readonly produced: ProducedResponse) {
    this.computeUs = Number.isFinite(produced.computeUs) && produced.computeUs > 0 ? produced.computeUs : 0;
  }

  get body(): Uint8Array {
    return this.produced.body;
  }

  get headers(): Readonly<Record<string, string>> {
    return this.produced.headers;
  }
}

export function bypassRunOf(produced: ProducedResponse): CacheRunResult {
  return new BypassRun(produced);
}
