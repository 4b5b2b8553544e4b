#!/usr/bin/env node
// Launcher for the node agent: the production bundle when built (bin/launch.js), else the sources through tsx.
import { runBundle } from './launch.js';

if (!(await runBundle('tessera-node'))) {
  const { register } = await import('tsx/esm/api');
  register();
  await import('../gpu-node/src/cli/main.ts');
}
