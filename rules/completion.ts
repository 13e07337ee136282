/**
 * The minimal completion check: a completion claim is honoured when the repository differs from
 * the run-start commit and the configured test command passed (or no test command is configured).
 * Empty diff wins over red tests when both hold, since there is nothing to test.
 */
import type { CompletionVerdict } from '../schemas/run.js';

export interface CompletionFacts {
  iteration: number;
  filesChangedSinceStart: number;
  /** null when no test command is configured. */
  tests: { passed: boolean; logPath: string } | null;
}

export function judgeCompletion(f: CompletionFacts): CompletionVerdict {
  const base = {
    iteration: f.iteration,
    testsConfigured: f.tests !== null,
    testsPassed: f.tests ? f.tests.passed : null,
    filesChangedSinceStart: f.filesChangedSinceStart,
    testLogPath: f.tests ? f.tests.logPath : null,
  };
  if (f.filesChangedSinceStart === 0) return { ...base, accepted: false, reason: 'empty_diff' };
  if (f.tests && !f.tests.passed) return { ...base, accepted: false, reason: 'tests_red' };
  return { ...base, accepted: true, reason: 'accepted' };
}

/** One paragraph for the next prompt explaining why a claim was refused. */
export function describeRefusal(v: CompletionVerdict): string {
  if (v.reason === 'empty_diff') {
    return (
      `Your completion claim in iteration ${v.iteration} was refused: the repository has no changes since the run started. ` +
      `Implement the requirements before claiming completion.`
    );
  }
  if (v.reason === 'tests_red') {
    return (
      `Your completion claim in iteration ${v.iteration} was refused: the test command ` +
      `failed${v.testLogPath ? ` (log: ${v.testLogPath})` : ''}. Make the tests pass before claiming completion.`
    );
  }
  return '';
}
