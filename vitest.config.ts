import { defineConfig } from 'vitest/config';
import LongestFirstSequencer from './tests/support/sequencer.js';
import { SLOW_TIER } from './tests/support/tiers.js';

// The Temporal SDK loads a native module and a process-wide runtime: test files run in forked
// processes, two at a time (the machines have two cores), against one dev server started by the
// global setup, longest first. The slow tier (tests/support/tiers.ts) runs apart, in
// `npm run test:slow` (vitest.slow.config.ts). Timeouts are generous because the workflow tests drive real processes.
export default defineConfig({
  test: {
    include: ['tests/**/*.test.ts'],
    exclude: ['**/node_modules/**', ...SLOW_TIER],
    pool: 'forks',
    poolOptions: { forks: { minForks: 1, maxForks: 2 } },
    globalSetup: ['tests/support/global-setup.ts'],
    testTimeout: 180_000,
    hookTimeout: 180_000,
    reporters: ['default'],
    // Longest files first: the forks end together (tests/support/sequencer.ts).
    sequence: { sequencer: LongestFirstSequencer },
  },
});
