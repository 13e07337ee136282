import { defineConfig } from 'vitest/config';
import LongestFirstSequencer from './tests/support/sequencer.js';
import { patient } from './tests/support/patience.js';
import { SLOW_TIER } from './tests/support/tiers.js';

// The Temporal SDK loads a native module and a process-wide runtime: test files run in forked
// processes against one dev server started by the global setup, longest first. Three at a time on
// the machines' two cores: with two, a sixth of the cores sat idle while tests waited on processes
// and timers (84 % busy, 1906 s); with three, 97 % busy and 1709 s, every test passing (the suite
// holds on a loaded machine, as it must). The slow tier (tests/support/tiers.ts) runs apart, in
// `npm run test:slow` (vitest.slow.config.ts). Timeouts are generous because the workflow tests drive real processes.
export default defineConfig({
  test: {
    include: ['tests/**/*.test.ts'],
    exclude: ['**/node_modules/**', ...SLOW_TIER],
    pool: 'forks',
    poolOptions: { forks: { minForks: 1, maxForks: 3 } },
    globalSetup: ['tests/support/global-setup.ts'],
    // Hang guards, not speed bars (tests/support/patience.ts).
    testTimeout: patient(180_000),
    hookTimeout: patient(180_000),
    reporters: ['default'],
    // Longest files first: the forks end together (tests/support/sequencer.ts).
    sequence: { sequencer: LongestFirstSequencer },
  },
});
