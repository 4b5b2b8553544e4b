#!/usr/bin/env node
// `npm start`: the local stack on embedded defaults (see scripts/start-local-stack.ts).
import { register } from 'tsx/esm/api';

register();
await import('../scripts/start-local-stack.ts');
