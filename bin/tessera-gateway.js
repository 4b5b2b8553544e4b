#!/usr/bin/env node
// Launcher for the gateway on Node: the production bundle when built (bin/launch.js), else the sources through tsx.
import { runBundle } from './launch.js';

if (!(await runBundle('tessera-gateway'))) {
  const { register } = await import('tsx/esm/api');
  register();
  const { runCli } = await import('../gateway/src/entry-node.ts');
  await runCli(process.argv.slice(2));
  process.exit(process.exitCode ?? 0);
}
