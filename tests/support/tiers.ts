/**
 * The suite's tiers. `npm test` (the README's test command) runs every `tests/**\/*.test.ts` file
 * but these; `npm run test:slow` runs these alone, then the real-CLI suite; `.ci/run` runs both.
 * A file belongs here when it spends minutes on one long external job (packing and installing the
 * package, a chaos schedule of kills and restarts) that would starve the timing-sensitive workflow
 * tests running beside it on a two-core machine, and that nothing else in the main suite depends on;
 * or when it is a whole matrix of complete runs whose minutes would push `npm test` well past a
 * quarter of an hour (the default-knobs matrix, about 6.5 minutes; the escalation runs, which wait
 * out real notification and pause timers, about 3.5; the parallel streams, whose child runs keep
 * both cores busy): those run here, one file at a time, and
 * `.ci/run` still runs them on every change.
 */
export const SLOW_TIER: readonly string[] = [
  'tests/e2e/package.test.ts',
  'tests/chaos/chaos.test.ts',
  'tests/workflow/default-knobs.test.ts',
  'tests/workflow/escalation.test.ts',
  // Parallel streams: three child runs' agents at once, and a worker SIGKILLed mid fan-out (about 3 minutes).
  'tests/workflow/streams.test.ts',
  'tests/workflow/streams-crash.test.ts',
  // A stream's worktree deleted mid-run, resumed from its checkpoint; a stream stopped and retried (two whole runs).
  'tests/workflow/streams-recovery.test.ts',
  // Three streams ending while the event store is down for 30 s, then its catch-up (about a minute).
  'tests/workflow/streams-journal.test.ts',
  // The silence watchdog's whole runs use the claude preset with its breaker, one entity on the
  // whole server, as tests/workflow/sandbox-limits.test.ts's do: the two never run side by side
  // (harness.ts claimBreaker).
  'tests/workflow/silence.test.ts',
  // The cheat corpus: forty whole runs with the default knobs, four test runners in the sandbox.
  'tests/workflow/cheat-corpus.test.ts',
];
