import { defineConfig } from 'vitest/config';
import { SLOW_TIER } from './tests/support/tiers.js';

// The slow tier (npm run test:slow): the files tests/support/tiers.ts lists, one at a time so that
// each long job (packing and installing the package, the chaos schedule) has the machine to itself,
// against the same global setup as the main suite.
export default defineConfig({
  test: {
    include: [...SLOW_TIER],
    pool: 'forks',
    poolOptions: { forks: { minForks: 1, maxForks: 1 } },
    fileParallelism: false,
    globalSetup: ['tests/support/global-setup.ts'],
    testTimeout: 300_000,
    hookTimeout: 480_000,
    reporters: ['default'],
  },
});
