#!/usr/bin/env node
// Launcher for the async-job workers (gateway/src/jobs-entry.ts): TypeScript run through tsx's loader.
import { register } from 'tsx/esm/api';

register();
const { runJobsCli } = await import('../gateway/src/jobs-entry.ts');
await runJobsCli(process.argv.slice(2));
process.exit(process.exitCode ?? 0);
