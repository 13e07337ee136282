import { defineConfig } from 'vitest/config';
import LongestFirstSequencer from '../support/sequencer.js';

// The real-CLI suite (npm run test:real-clis): one spec file per agent CLI, against its own
// Temporal dev server (the main suite's global setup). Its files end in .spec.ts, so the main
// suite (tests/**/*.test.ts) never runs them. Two forks: two CLIs at a time on two cores, longest
// first (aider's and opencode's own retries make theirs the longest: they start together).
export default defineConfig({
  test: {
    include: ['tests/real-clis/**/*.spec.ts'],
    pool: 'forks',
    poolOptions: { forks: { minForks: 1, maxForks: 2 } },
    globalSetup: ['tests/support/global-setup.ts'],
    testTimeout: 420_000,
    hookTimeout: 180_000,
    reporters: ['default'],
    sequence: { sequencer: LongestFirstSequencer },
  },
});
