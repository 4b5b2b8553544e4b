// What scripts/build.mjs bundles, apart from how: the docker tests read it without building.

import { readdirSync } from 'node:fs';

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

const EXAMPLE_MODELS_DIR = 'gpu-node/src/example-models';

/** Read at run time through new URL('./<file>', import.meta.url): copied beside the bundles. */
export const RUNTIME_FILES = [
  { from: 'gateway/src/adapters/redis/lua', to: 'lua' },
  // Every example model's module (`<name>-model.js`), which `tessera-models` copies into version folders.
  ...readdirSync(new URL(`../../${EXAMPLE_MODELS_DIR}/`, import.meta.url))
    .filter((file) => file.endsWith('-model.js'))
    .sort()
    .map((file) => ({ from: `${EXAMPLE_MODELS_DIR}/${file}`, to: file })),
];

