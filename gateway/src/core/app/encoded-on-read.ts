/**
 * An upstream answer as the cache takes it, its KServe body encoded when first read. Why: a miss of a
 * front door that writes the answer from the response itself (the gRPC front door forwards the node's
 * message) and that the cache does not store (`no-store`, a TTL of 0) never reads the body; encoding
 * it was work thrown away on every such miss. The cache's store path and HTTP answers read it as before.
 *
 * An HTTP answer the cache does not keep is framed once with the client's id in it (`answerWithId`),
 * not framed without and copied whole to put the id in. The node's answer (a response the h2 transport
 * recorded, shared/src/grpc/forwarded-response.ts) was checked against its shapes when it was decoded:
 * its outputs are not walked again, and its binary sections are views of the received message.
 */
import { receivedResponseOf } from '../../../../shared/src/grpc/forwarded-response.js';
import { encodeInferResponse, type ResponseEncodingOptions } from '../../../../shared/src/kserve/index.js';
import type { InferResponse } from '../../../../shared/src/tensors/index.js';
import type { AnsweredResponse } from './gateway-deps.js';

interface Encoded {
  readonly body: Uint8Array;
  readonly headers: Record<string, string>;
}

export class EncodedOnRead implements AnsweredResponse {
  private encoded: Encoded | undefined = undefined;
  private readonly checked: boolean;

  constructor(
    private readonly response: InferResponse,
    private readonly options: ResponseEncodingOptions,
    readonly computeUs: number,
  ) {
    this.checked = receivedResponseOf(response) !== undefined;
  }

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

  /**
   * The answer for a client whose request id is `id`, framed once, its headers a new object; undefined
   * when the id-less body was already read (the cache took it): withResponseId puts the id in that one.
   */
  answerWithId(id: string): Encoded | undefined {
    if (this.encoded !== undefined) return undefined;
    return encodeInferResponse(this.response, this.options, { id, checked: this.checked });
  }

  private encode(): Encoded {
    return (this.encoded ??= encodeInferResponse(this.response, this.options, { checked: this.checked }));
  }
}
