/**
 * How long a test waits before it calls something hung. Every limit in the suite (a test's timeout,
 * a wait for a status, a CLI process's run) is a hang guard, never a speed bar: how fast Vigil is
 * lives in the benchmarks (`npm run bench`). A limit is written as what a run takes on an idle
 * machine with room to spare, and waited PATIENCE times as long, so that a loaded machine (two
 * suites at once on two cores, where whole runs took three times as long) only waits longer and
 * never fails for it; a test that does hang takes that much longer to say so.
 * `VIGIL_TEST_PATIENCE` sets another factor (at least 1).
 */
export const PATIENCE = Math.max(1, Number(process.env.VIGIL_TEST_PATIENCE) || 3);

/** A limit written for an idle machine, as the suite waits it. */
export function patient(ms: number): number {
  return ms * PATIENCE;
}
