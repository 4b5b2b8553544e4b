/**
 * KServe v2 HTTP client with the binary tensor extension (inputs and outputs as raw sections, like
 * perf_analyzer's default for HTTP), on the raw HTTP/1.1 engine (raw-http.ts): `connections` keep-alive
 * sockets, one per concurrent caller as perf_analyzer opens. Not node:http (~70 us of CPU per request,
 * taken from the servers under test on a shared machine) and not fetch, which also sends
 * `Accept-Encoding: gzip` and would have the node compress every response and bench the compressor.
 *
 * The encoded request (request line, headers, body) is cached per InferRequest object, as perf_analyzer
 * prepares its inputs once: a closed loop re-sending the same object costs no encoding, and its
 * `sendUs` is then ~0 (only the first call of each object measures the encoder). A request object must
 * therefore not be mutated once sent (InferRequest is readonly). Client recv is the time to decode the
 * answer (codec time in this process, not socket time).
 *
 * `json: true` sends inputs as JSON `data` and asks for JSON outputs (perf_analyzer without binary
 * data), which measures the server's JSON codec too. `headers` go on every request (an API key).
 */
import {
  decodeInferResponseBody,
  encodeInferRequestBody,
  httpErrorFromResponse,
  INFER_HEADER_LENGTH,
} from '../../../../shared/src/kserve/index.js';
import type { InferRequest } from '../../../../shared/src/tensors/index.js';
import type { InferClient, InferResult } from './infer-client.js';
import { createRawHttpPool, encodeRawRequest, hostHeader } from './raw-http.js';

const elapsedUs = (since: number): number => (performance.now() - since) * 1000;
export interface HttpClientOptions {
  readonly json?: boolean;
  readonly headers?: Readonly<Record<string, string>>;
}

export function createHttpInferClient(host: string, port: number, connections: number, options: HttpClientOptions = {}): InferClient {
  const json = options.json === true;
  const extraHeaders = options.headers ?? {};
  const authority = hostHeader(host, port);
  const pool = createRawHttpPool({ host, port, connections });
  const encodedRequests = new WeakMap<InferRequest, Buffer>();

  const encode = (request: InferRequest): Buffer => {
    const encoded = encodeInferRequestBody(request, { binaryInputs: !json, binaryDataOutput: !json });
    const path = `/v2/models/${encodeURIComponent(request.modelName)}/infer`;
    return encodeRawRequest('POST', path, authority, { ...extraHeaders, ...encoded.headers }, encoded.body);
  };

  return {
    protocol: 'http',
    async infer(request: InferRequest): Promise<InferResult> {
      const t0 = performance.now();
      let bytes = encodedRequests.get(request);
      if (bytes === undefined) {
        bytes = encode(request);
        encodedRequests.set(request, bytes);
      }
      const sendUs = elapsedUs(t0);
      const answer = await pool.request(bytes);
      const t1 = performance.now();
      if (answer.status !== 200) throw httpErrorFromResponse(answer.status, answer.body);
      const response = decodeInferResponseBody(answer.body, answer.headers[INFER_HEADER_LENGTH]);
      return { response, sendUs, recvUs: elapsedUs(t1) };
    },
    async close() {
      pool.close();
    },
  };
}
