/**
 * An upstream answer as the cache takes it, its KServe body encoded when first read. Why: a miss of a
 * front door that writes the answer from the response itself (the gRPC front door forwards the node's
 * message) and that the cache does not store (`no-store`, a TTL of 0) never reads the body; encoding
 * it was work thrown away on every such miss. The cache's store path and HTTP answers read it as before.
 */
import { encodeInferResponse, type ResponseEncodingOptions } from '../../../../shared/src/kserve/index.js';
import type { InferResponse } from '../../../../shared/src/tensors/index.js';
import type { AnsweredResponse } from './gateway-deps.js';

export class EncodedOnRead implements AnsweredResponse {
  private encoded: { readonly body: Uint8Array; readonly headers: Record<string, string> } | undefined = undefined;

  constructor(
    private readonly response: InferResponse,
    private readonly options: ResponseEncodingOptions,
    readonly computeUs: number,
  ) {}

  get modelVersion(): string {
    return this.response.modelVersion;
  }

  get body(): Uint8Array {
    return this.encode().body;
  }

  get headers(): Record<string, string> {
    return this.encode().headers;
  }

  /** Whether the body was encoded (tests: a gRPC miss that is not stored must not encode it). */
  get wasEncoded(): boolean {
    return this.encoded !== undefined;
  }

  private encode(): { readonly body: Uint8Array; readonly headers: Record<string, string> } {
    return (this.encoded ??= encodeInferResponse(this.response, this.options));
  }
}
