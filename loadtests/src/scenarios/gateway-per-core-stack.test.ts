import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { GATEWAY_IMAGE_NODE_FLAGS } from './gateway-per-core-stack.js';

describe('the per-core bench gateway', () => {
  it('starts with the node flags of the gateway image, so the bench measures what production runs', () => {
    const dockerfile = readFileSync(fileURLToPath(new URL('../../../infra/docker/gateway.Dockerfile', import.meta.url)), 'utf8');
    const entrypoint = /^ENTRYPOINT (\[.*\])$/m.exec(dockerfile)?.[1];
    expect(entrypoint).toBeDefined();
    const args = JSON.parse(entrypoint ?? '[]') as string[];
    expect(args.filter((arg) => arg.startsWith('--'))).toEqual(GATEWAY_IMAGE_NODE_FLAGS);
  });
});
