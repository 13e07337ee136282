import { defineConfig } from 'vitest/config';

// The cluster suite (npm run test:cluster, scripts/test-cluster.sh): the real Temporal server
// binary on Postgres, started by the spec itself (tests/cluster/cluster.ts), not the main suite's
// dev server. Its files end in .spec.ts, so the main suite (tests/**/*.test.ts) never runs them.
// One file, one fork: it starts a server, Postgres and two worker processes of its own.
export default defineConfig({
  test: {
    include: ['tests/cluster/**/*.spec.ts'],
    pool: 'forks',
    poolOptions: { forks: { minForks: 1, maxForks: 1 } },
    fileParallelism: false,
    globalSetup: ['tests/cluster/global-setup.ts'],
    testTimeout: 600_000,
    hookTimeout: 240_000,
    reporters: ['default'],
  },
});
