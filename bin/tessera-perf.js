#!/usr/bin/env node
// Launcher for `tessera-perf`, the load tool: registers tsx so the TypeScript entry runs without a build step.
import { register } from 'tsx/esm/api';

register();
const { runPerfCli } = await import('../loadtests/src/perf/cli.ts');
process.exitCode = await runPerfCli(process.argv.slice(2));
