/**
 * One closed-loop call that also checks the answer's size: a node answering fast with the wrong
 * output would otherwise count as served.
 */
import type { InferRequest } from '../../../../shared/src/tensors/index.js';
import type { InferClient } from '../clients/infer-client.js';

export function checkedInferCall(client: InferClient, request: InferRequest, outputBytes: number): () => ReturnType<InferClient['infer']> {
  return async () => {
    const result = await client.infer(request);
    const bytes = result.response.outputs[0]?.data.length;
    if (bytes !== outputBytes) throw new Error(`expected ${outputBytes} output bytes, got ${bytes}`);
    return result;
  };
}
