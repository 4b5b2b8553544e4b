#!/usr/bin/env node
// Launcher for the async-job workers (gateway/src/jobs-entry.ts): the bundle when built, else the sources through tsx.
import { runBundle } from './launch.js';

if (!(await runBundle('tessera-jobs'))) {
  const { register } = await import('tsx/esm/api');
  register();
  const { runJobsCli } = await import('../gateway/src/jobs-entry.ts');
  await runJobsCli(process.argv.slice(2));
  process.exit(process.exitCode ?? 0);
}
