/**
 * The suite's tiers. `npm test` (the README's test command) runs every `tests/**\/*.test.ts` file
 * but these; `npm run test:slow` runs these alone, then the real-CLI suite; `.ci/run` runs both.
 * A file belongs here when it spends minutes on one long external job (packing and installing the
 * package, a chaos schedule of kills and restarts) that would starve the timing-sensitive workflow
 * tests running beside it on a two-core machine, and that nothing else in the main suite depends on;
 * or when it is a whole matrix of complete runs whose minutes would push `npm test` well past a
 * quarter of an hour (the default-knobs matrix, about 7 minutes; the escalation runs, which wait
 * out real notification and pause timers, about 1.5; the parallel streams, whose child runs keep
 * both cores busy): those run here, and `.ci/run` still runs them on every change.
 *
 * The slow tier runs two files at a time (vitest.slow.config.ts), in the order listed. Most of its
 * files are of two kinds: whole-run matrices that keep both cores busy (the default-knobs matrix,
 * the cheat corpus, the streams), and files that mostly wait (on a killed server's restart, a
 * packed package's install, notification and pause timers, a silence limit, an event store held
 * down for 30 s). Two CPU-bound files side by side take as long as one after the other (the
 * default-knobs matrix beside the cheat corpus: 858 s against 828 s), so the order pairs the
 * longest CPU-bound file with the waiting ones: while the matrix runs, the other fork goes through
 * every file that waits; the CPU-bound rest follows.
 */
export const SLOW_TIER: readonly string[] = [
  // Fork one: the matrix (about 7 minutes of both cores).
  'tests/workflow/default-knobs.test.ts',
  // Fork two, meanwhile: the files that mostly wait.
  'tests/chaos/chaos.test.ts',
  'tests/e2e/package.test.ts',
  'tests/workflow/escalation.test.ts',
  // The silence watchdog's whole runs use the claude preset with its breaker, one entity on the
  // whole server, as tests/workflow/sandbox-limits.test.ts's do: the two never run side by side
  // (harness.ts claimBreaker); no other file of this tier uses the claude preset.
  'tests/workflow/silence.test.ts',
  // Three streams ending while the event store is down for 30 s, then its catch-up (about a minute).
  'tests/workflow/streams-journal.test.ts',
  // A stream's worktree deleted mid-run, resumed from its checkpoint; a stream stopped and retried (two whole runs).
  'tests/workflow/streams-recovery.test.ts',
  // Then the CPU-bound rest. The cheat corpus: fifty whole runs with the default knobs, four test runners in the sandbox.
  'tests/workflow/cheat-corpus.test.ts',
  // Parallel streams: three child runs' agents at once, and a worker SIGKILLed mid fan-out (about 3 minutes).
  'tests/workflow/streams.test.ts',
  'tests/workflow/streams-crash.test.ts',
];
