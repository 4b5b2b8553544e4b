#!/usr/bin/env node
// Launcher for `tessera-models`: the bundle when built (bin/launch.js), else the sources through tsx.
import { runBundle } from './launch.js';

if (!(await runBundle('tessera-models'))) {
  const { register } = await import('tsx/esm/api');
  register();
  const { runCli } = await import('../gpu-node/src/example-models/cli.ts');
  process.exitCode = await runCli(process.argv.slice(2));
}
