#!/usr/bin/env node
// Launcher for `tessera-perf`, the load tool: the bundle when built (bin/launch.js), else the sources through tsx.
import { runBundle } from './launch.js';

if (!(await runBundle('tessera-perf'))) {
  const { register } = await import('tsx/esm/api');
  register();
  const { runPerfCli } = await import('../loadtests/src/perf/cli.ts');
  process.exitCode = await runPerfCli(process.argv.slice(2));
}
