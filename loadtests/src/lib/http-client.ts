/**
 * KServe v2 HTTP client with the binary tensor extension (inputs and outputs as raw sections, like
 * perf_analyzer's default for HTTP). node:http with a keep-alive agent of `connections` sockets, one per
 * concurrent caller as perf_analyzer opens, rather than fetch: fetch sends `Accept-Encoding: gzip`, which
 * would have the node compress every response and bench the compressor.
 *
 * Client send is the time to encode the body and client recv the time to decode the answer (codec
 * time in this process, not socket time).
 *
 * `json: true` sends inputs as JSON `data` and asks for JSON outputs (perf_analyzer without binary
 * data), which measures the server's JSON codec too. `headers` go on every request (an API key).
 */
import { Agent, request as httpRequest } from 'node:http';
import {
  INFERENCE_HEADER_CONTENT_LENGTH,
  decodeInferResponseBody,
  encodeInferRequestBody,
  httpErrorFromResponse,
} from '../../../shared/src/kserve/index.js';
import type { InferRequest } from '../../../shared/src/tensors/index.js';
import type { InferClient, InferResult } from './infer-client.js';

const elapsedUs = (since: number): number => (performance.now() - since) * 1000;

export interface HttpClientOptions {
  readonly json?: boolean;
  readonly headers?: Readonly<Record<string, string>>;
}

export function createHttpInferClient(host: string, port: number, connections: number, options: HttpClientOptions = {}): InferClient {
  const json = options.json === true;
  const extraHeaders = options.headers ?? {};
  const agent = new Agent({ keepAlive: true, maxSockets: connections, maxFreeSockets: connections });

  const post = (path: string, body: Uint8Array, headers: Record<string, string>) =>
    new Promise<{ status: number; headerLength: string | undefined; body: Buffer }>((resolve, reject) => {
      const req = httpRequest(
        { host, port, path, method: 'POST', agent, headers: { ...headers, 'Content-Length': String(body.length) } },
        (res) => {
          const chunks: Buffer[] = [];
          res.on('data', (chunk: Buffer) => chunks.push(chunk));
          res.on('error', reject);
          res.on('end', () => {
            const value = res.headers[INFERENCE_HEADER_CONTENT_LENGTH.toLowerCase()];
            resolve({
              status: res.statusCode ?? 0,
              headerLength: Array.isArray(value) ? value[0] : value,
              body: chunks.length === 1 ? (chunks[0] as Buffer) : Buffer.concat(chunks),
            });
          });
        },
      );
      req.on('error', reject);
      req.end(body);
    });

  return {
    protocol: 'http',
    async infer(request: InferRequest): Promise<InferResult> {
      const t0 = performance.now();
      const encoded = encodeInferRequestBody(request, { binaryInputs: !json, binaryDataOutput: !json });
      const sendUs = elapsedUs(t0);
      const path = `/v2/models/${encodeURIComponent(request.modelName)}/infer`;
      const answer = await post(path, encoded.body, { ...extraHeaders, ...encoded.headers });
      const t1 = performance.now();
      if (answer.status !== 200) throw httpErrorFromResponse(answer.status, answer.body);
      const response = decodeInferResponseBody(answer.body, answer.headerLength);
      return { response, sendUs, recvUs: elapsedUs(t1) };
    },
    async close() {
      agent.destroy();
    },
  };
}
