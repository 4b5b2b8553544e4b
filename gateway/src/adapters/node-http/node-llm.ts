/**
 * The LLM routes' dependencies on Node (core/llm/llm-deps.ts): the router over the gateway's fleet
 * view and breakers, raw HTTP/1.1 writes to a node with few streams in flight, HTTP/2 to the nodes' LLM
 * ports where they advertise one (node:http to their HTTP ports otherwise), the response store for deterministic
 * completions, and the cl100k_base tokenizer (shared/src/llm/cl100k-counter.ts).
 */
import { loadCl100kCounter } from '../../../../shared/src/llm/cl100k-counter.js';
import type { GatewayConfig } from '../../config/index.js';
import { LlmRouter, type LlmDeps } from '../../core/llm/index.js';
import type { AdmissionObserver, FleetChangeSource, NodeDirectory, ResponseCache } from '../../core/ports/index.js';
import type { NodeBreakers } from '../grpc/node-breakers.js';
import { createLlmH2Upstream } from './llm-h2-upstream.js';
import { createLlmHttpUpstream } from './llm-http-upstream.js';
import { createLlmRawUpstream } from './llm-raw-upstream.js';
import { createLlmUpstreamChoice } from './llm-upstream-choice.js';

export interface NodeLlmOptions {
  readonly config: GatewayConfig;
  readonly directory: NodeDirectory;
  readonly breakers?: NodeBreakers;
  readonly fleetEvents?: FleetChangeSource;
  /** Where deterministic completions are cached (the infer cache's store); absent: no completion cache. */
  readonly store?: ResponseCache;
  readonly observer?: AdmissionObserver;
}

export function createNodeLlm(options: NodeLlmOptions): { readonly deps: LlmDeps; close(): void } {
  const { config } = options;
  const router = new LlmRouter({
    directory: options.directory,
    ...(options.breakers === undefined ? {} : { breakers: options.breakers }),
    ...(options.fleetEvents === undefined ? {} : { fleetEvents: options.fleetEvents }),
    ...(options.observer === undefined ? {} : { observer: options.observer }),
    maxStreamsPerNode: config.llm.maxStreamsPerNode,
  });
  const breakers = options.breakers === undefined ? {} : { breakers: options.breakers };
  const http1 = createLlmHttpUpstream({ ...breakers, maxSockets: config.llm.maxStreamsPerNode });
  // Nodes advertising an HTTP/2 address for their LLM routes get one multiplexed session; others HTTP/1.1.
  const multiplexed = config.llm.nodeHttp2 ? createLlmH2Upstream({ ...breakers, fallback: http1, maxStreamsPerNode: config.llm.maxStreamsPerNode, ...(options.fleetEvents === undefined ? {} : { fleetEvents: options.fleetEvents }) }) : http1;
  // A node with few streams in flight gets raw HTTP/1.1 writes (its request leaves inside the call).
  const raw = config.llm.nodeRawBelowStreams > 0 ? createLlmRawUpstream(breakers) : undefined;
  const upstream = raw === undefined ? multiplexed : createLlmUpstreamChoice({ raw, multiplexed, rawBelowStreams: config.llm.nodeRawBelowStreams });
  const deps: LlmDeps = {
    router,
    upstream,
    tokenCounter: loadCl100kCounter,
    ...(options.store === undefined ? {} : { cache: { store: options.store, prefix: config.keyPrefix } }),
    settings: { maxPromptChars: config.llm.maxPromptChars, chargeEveryTokens: config.llm.chargeEveryTokens },
  };
  return {
    deps,
    close() {
      router.close();
      multiplexed.close();
      http1.close();
      raw?.close();
    },
  };
}
