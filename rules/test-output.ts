/**
 * How many tests failed, read from a test command's output: the summary lines of node's test
 * runner, pytest, vitest/jest, go test, cargo test and the plain "N passed, N failed" form. The
 * last summary wins; null when no known summary is present (the count is then unknown, not 0).
 */
const SUMMARIES: readonly RegExp[] = [
  // Line patterns never cross a newline (\s would, and make a run of blank lines quadratic).
  /^# fail (\d+)[ \t\r]*$/gm, // node --test (TAP)
  /^ℹ fail (\d+)[ \t\r]*$/gm, // node --test (spec reporter)
  /^[ \t]*Tests?:?[ \t]+(\d+) failed/gm, // vitest ("Tests  3 failed | 9 passed"), jest ("Tests: 3 failed, ...")
  /^=+ .*?(\d+) failed.* =+$/gm, // pytest final line
  /^test result: FAILED\. \d+ passed; (\d+) failed/gm, // cargo test
  /^(?:\w+: )?\d+ passed, (\d+) failed/gm, // plain closing line
];

export function countFailingTests(output: string): number | null {
  let best: { index: number; count: number } | null = null;
  for (const re of SUMMARIES) {
    for (const m of output.matchAll(re)) {
      const count = Number(m[1]);
      if (!Number.isSafeInteger(count)) continue; // a 400-digit "count" is noise, not a number of tests
      if (!best || (m.index ?? 0) >= best.index) best = { index: m.index ?? 0, count };
    }
  }
  if (best) return best.count;
  const goFails = output.match(/^--- FAIL: /gm); // go test: one line per failing test
  if (goFails) return goFails.length;
  return /^ok[ \t]+\S+/m.test(output) ? 0 : null; // go test, every package passing
}
