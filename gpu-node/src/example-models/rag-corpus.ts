/**
 * The small corpus bundled with the `rag_pipeline` example: short passages about serving models with
 * Tessera, each on one topic so a question about that topic finds it. The writer embeds them with the
 * query encoder's arithmetic (rag-encoder.ts) and ships them, embeddings included, in the retriever's
 * version folder; replacing this list (and rerunning `npx tessera-models`) changes what it retrieves.
 */

export interface RagPassage {
  readonly id: string;
  readonly title: string;
  readonly text: string;
}

export const RAG_CORPUS: readonly RagPassage[] = [
  {
    id: 'dynamic-batching',
    title: 'Dynamic batching',
    text: 'The dynamic batcher holds requests for a few microseconds and merges them into one batch, so a GPU runs one large execution instead of many small ones. max_queue_delay_microseconds bounds the wait.',
  },
  {
    id: 'api-keys',
    title: 'Tenant API keys',
    text: 'Every tenant calls the gateway with its own API key in the Authorization header. The gateway stores only the SHA-256 hash of each key and maps it to the tenant and its tier.',
  },
  {
    id: 'rate-limits',
    title: 'Rate limits per tier',
    text: 'Each tier has token buckets for requests per second and for generated tokens per minute. A tenant over its budget receives HTTP 429 with a Retry-After header.',
  },
  {
    id: 'response-cache',
    title: 'Response cache',
    text: 'Identical deterministic requests can be answered from the Redis response cache. The x-cache header says HIT, MISS or BYPASS, and sampled completions are never cached.',
  },
  {
    id: 'ensembles',
    title: 'Ensembles',
    text: 'An ensemble chains composing models into a pipeline: each step runs as soon as its input tensors exist, and the last step may be a decoupled model that streams its answer.',
  },
  {
    id: 'decoupled-models',
    title: 'Decoupled models',
    text: 'A decoupled model sends zero, one or many responses per request and marks the last one final. Streaming token generation uses gRPC ModelStreamInfer or Server-Sent Events.',
  },
  {
    id: 'sequence-batching',
    title: 'Sequence batching',
    text: 'Stateful models keep state between requests of one sequence. The sequence batcher routes every request with the same correlation ID to the same slot until the END flag arrives.',
  },
  {
    id: 'instance-groups',
    title: 'Instance groups',
    text: 'instance_group sets how many copies of a model run and where: count instances of kind KIND_CPU or KIND_GPU, each one a worker thread with its own onnxruntime session.',
  },
  {
    id: 'model-repository',
    title: 'Model repository',
    text: 'Models live in a repository folder with one directory per model holding config.pbtxt and numbered version folders. In poll mode the node reloads changed models without downtime.',
  },
  {
    id: 'cancellation',
    title: 'Cancellation',
    text: 'When a client closes its stream or connection, the node aborts the request: a queued request leaves the queue and a running TypeScript model sees its AbortSignal fire.',
  },
  {
    id: 'metrics',
    title: 'Prometheus metrics',
    text: 'The node exports Prometheus metrics on /metrics: inference counts, queue and compute durations in microseconds, and a histogram of the time to the first response.',
  },
  {
    id: 'gpu-providers',
    title: 'GPU execution providers',
    text: 'A GPU instance of an ONNX model runs on the CUDA execution provider when its library is installed, otherwise on WebGPU; the chosen accelerator shows in the model config.',
  },
];

/** What is embedded and searched for a passage: its title and its text. */
export function passageText(passage: RagPassage): string {
  return `${passage.title}. ${passage.text}`;
}
