/**
 * `ts_scale`, the example model for the `typescript` backend: config plus the module in
 * `ts-scale-model.js` (which documents the module contract), copied into the version folder.
 */
import { readFile } from 'node:fs/promises';
import { configText } from './config-text.js';
import type { ExampleModel } from './example-model.js';

export const TS_SCALE_FACTOR = '2';

/** The module's source lives next to this file, so it is linted and tested where it is written. */
const MODULE_SOURCE = new URL('./ts-scale-model.js', import.meta.url);

/**
 * A repository can live anywhere (/tmp, /models) with no package.json above it. Node before 20.19 then
 * reads `model.js` as CommonJS (later ones detect ESM syntax, after a failed CommonJS parse); this
 * marker makes the version folder's `.js` files ES modules on every Node the project supports.
 */
export const ESM_PACKAGE_JSON = `${JSON.stringify({ type: 'module' }, null, 2)}\n`;

export function tsScaleConfigText(): string {
  return configText({
    name: 'ts_scale',
    backend: 'typescript',
    defaultModelFilename: 'model.js',
    maxBatchSize: 8,
    inputs: [{ name: 'INPUT0', dataType: 'TYPE_FP32', dims: [-1] }],
    outputs: [{ name: 'OUTPUT0', dataType: 'TYPE_FP32', dims: [-1] }],
    parameters: { factor: TS_SCALE_FACTOR },
  });
}

export const tsScaleModel: ExampleModel = {
  name: 'ts_scale',
  description: `FP32 [-1] → INPUT0 × factor (${TS_SCALE_FACTOR}), a JavaScript module on the typescript backend`,
  build: async () => [
    { path: 'config.pbtxt', contents: tsScaleConfigText() },
    { path: '1/model.js', contents: await readFile(MODULE_SOURCE, 'utf8') },
    { path: '1/package.json', contents: ESM_PACKAGE_JSON },
  ],
};
