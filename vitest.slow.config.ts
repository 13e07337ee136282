import { defineConfig } from 'vitest/config';
import { patient } from './tests/support/patience.js';
import ListedOrderSequencer from './tests/support/listed-order-sequencer.js';
import { SLOW_TIER } from './tests/support/tiers.js';

// The slow tier (npm run test:slow): the files tests/support/tiers.ts lists, two at a time in the
// order listed (the list says why that order), against the same global setup as the main suite.
export default defineConfig({
  test: {
    include: [...SLOW_TIER],
    pool: 'forks',
    poolOptions: { forks: { minForks: 1, maxForks: 2 } },
    globalSetup: ['tests/support/global-setup.ts'],
    // Hang guards, not speed bars (tests/support/patience.ts).
    testTimeout: patient(300_000),
    hookTimeout: patient(480_000),
    reporters: ['default'],
    sequence: { sequencer: ListedOrderSequencer },
  },
});
