#!/usr/bin/env node
// Launcher for `tessera-models`: registers tsx so the TypeScript entry runs without a build step.
import { register } from 'tsx/esm/api';

register();
const { runCli } = await import('../gpu-node/src/example-models/cli.ts');
process.exitCode = await runCli(process.argv.slice(2));
