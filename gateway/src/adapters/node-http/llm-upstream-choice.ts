/**
 * Which upstream carries a node's next LLM request: the raw HTTP/1.1 one (llm-raw-upstream.ts) while
 * the node has fewer than `rawBelowStreams` of this gateway's streams in flight, the multiplexed one
 * (HTTP/2, or node:http) from there on. Why: at few streams the raw write gets the request to the node
 * sooner (its first token), while at many streams HTTP/2 reads the events of many streams per socket
 * read and costs less per token (docs/benchmarks.md, issue 20).
 */
import { Readable } from 'node:stream';
import type { LlmUpstream, LlmUpstreamResponse, NodeView } from '../../core/ports/index.js';

export interface LlmUpstreamChoiceOptions {
  readonly raw: LlmUpstream;
  readonly multiplexed: LlmUpstream;
  /** Streams in flight to one node under which the raw upstream is used; 0: never. */
  readonly rawBelowStreams: number;
}

export function createLlmUpstreamChoice(options: LlmUpstreamChoiceOptions): LlmUpstream {
  const { raw, multiplexed, rawBelowStreams } = options;
  const inFlight = new Map<string, number>();

  const done = (id: string): void => {
    const left = (inFlight.get(id) ?? 1) - 1;
    if (left <= 0) inFlight.delete(id);
    else inFlight.set(id, left);
  };

  return {
    async send(node: NodeView, request): Promise<LlmUpstreamResponse> {
      const count = inFlight.get(node.id) ?? 0;
      const upstream = count < rawBelowStreams && node.httpAddress !== null ? raw : multiplexed;
      inFlight.set(node.id, count + 1);
      let response: LlmUpstreamResponse;
      try {
        response = await upstream.send(node, request);
      } catch (error) {
        done(node.id);
        throw error;
      }
      // Every upstream here answers with a Readable; the stream counts until it closes.
      if (response.body instanceof Readable && !response.body.closed) response.body.once('close', () => done(node.id));
      else done(node.id);
      return response;
    },
  };
}
