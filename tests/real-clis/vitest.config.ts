import { defineConfig } from 'vitest/config';
import { patient } from '../support/patience.js';
import LongestFirstSequencer from '../support/sequencer.js';

// The real-CLI suite (npm run test:real-clis): two spec files per agent CLI (its complete run, its
// API faults: suite.ts), against its own Temporal dev server (the main suite's global setup). Its
// files end in .spec.ts, so the main suite (tests/**/*.test.ts) never runs them. Three forks,
// longest first: aider's and opencode's faults, which mostly wait out the CLIs' own retries (a
// minute or more per fault), start first and run beside the complete runs, which keep a core busy.
export default defineConfig({
  test: {
    include: ['tests/real-clis/**/*.spec.ts'],
    pool: 'forks',
    poolOptions: { forks: { minForks: 1, maxForks: 3 } },
    globalSetup: ['tests/support/global-setup.ts'],
    // Hang guards, waited patiently like the main suite's (tests/support/patience.ts): a complete run
    // through aider, a Python CLI that starts for every call, took over 420 s beside a loaded suite.
    testTimeout: patient(200_000),
    hookTimeout: patient(60_000),
    reporters: ['default'],
    sequence: { sequencer: LongestFirstSequencer },
  },
});
