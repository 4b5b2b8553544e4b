// Runs only the infra suite: `npx vitest run --config infra/vitest.config.ts`. The root config picks
// these tests up too once `infra/**/*.test.ts` is in its include list.
import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    root: fileURLToPath(new URL('..', import.meta.url)),
    include: ['infra/**/*.test.ts'],
    testTimeout: 60_000,
    hookTimeout: 120_000,
    pool: 'forks',
    maxWorkers: 2,
  },
});
