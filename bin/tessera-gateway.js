#!/usr/bin/env node
// Launcher for the gateway on Node: the sources are TypeScript, run through tsx's loader (no build step).
import { register } from 'tsx/esm/api';

register();
const { runCli } = await import('../gateway/src/entry-node.ts');
await runCli(process.argv.slice(2));
process.exit(process.exitCode ?? 0);
