import { defineConfig } from 'vitest/config';

// Integration suites start real servers (redis-server, node HTTP/gRPC), so allow generous timeouts
// on a busy 2-core CI box; timing *targets* live in loadtests/, never here.
export default defineConfig({
  test: {
    include: [
      'shared/**/*.test.ts',
      'gpu-node/**/*.test.ts',
      'gateway/**/*.test.ts',
      'loadtests/**/*.test.ts',
      'infra/**/*.test.ts',
      'terraform/**/*.test.ts',
      'tests/**/*.test.ts',
    ],
    testTimeout: 60_000,
    hookTimeout: 120_000,
    // bin/ launchers run the sources under test, never a production bundle left in dist/ (bin/launch.js).
    env: { TESSERA_FROM_SOURCE: '1' },
    pool: 'forks',
    maxWorkers: 2,
  },
});
