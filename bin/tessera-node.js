#!/usr/bin/env node
// Launcher for the node agent: the sources are TypeScript, run through tsx's loader (no build step).
import { register } from 'tsx/esm/api';

register();
await import('../gpu-node/src/cli/main.ts');
