// What scripts/build.mjs bundles, apart from how: the docker tests read it without building.

/** Output name (no extension) -> source. Worker entries keep the basename siblingModule() asks for. */
export const ENTRIES = {
  'tessera-node': 'gpu-node/src/cli/main.ts',
  'tessera-gateway': 'scripts/bundle-entries/tessera-gateway.ts',
  'tessera-jobs': 'scripts/bundle-entries/tessera-jobs.ts',
  'tessera-models': 'scripts/bundle-entries/tessera-models.ts',
  'tessera-perf': 'scripts/bundle-entries/tessera-perf.ts',
  'onnxruntime-worker': 'gpu-node/src/backends/onnxruntime/onnxruntime-worker.ts',
  'typescript-worker': 'gpu-node/src/backends/typescript/typescript-worker.ts',
  'llm-worker': 'gpu-node/src/backends/onnxruntime-llm/llm-worker.ts',
};

/** Read at run time through new URL('./<file>', import.meta.url): copied beside the bundles. */
export const RUNTIME_FILES = [
  { from: 'gateway/src/adapters/redis/lua', to: 'lua' },
  { from: 'gpu-node/src/example-models/ts-scale-model.js', to: 'ts-scale-model.js' },
  { from: 'gpu-node/src/example-models/mlp-preprocess-model.js', to: 'mlp-preprocess-model.js' },
  { from: 'gpu-node/src/example-models/mlp-postprocess-model.js', to: 'mlp-postprocess-model.js' },
  { from: 'gpu-node/src/example-models/token-stream-model.js', to: 'token-stream-model.js' },
  { from: 'gpu-node/src/example-models/rag-query-model.js', to: 'rag-query-model.js' },
  { from: 'gpu-node/src/example-models/rag-retriever-model.js', to: 'rag-retriever-model.js' },
];

