/**
 * The evidence gate (spec §3): completion is allowed only without positive disproof. Every axis is
 * judged, then the block decision is taken; "cannot tell" cases pass through but are recorded, and
 * the final outcome then says completion was not independently verified.
 *
 * Axes: diff (nothing changed since the run started, with a conclusive baseline), tests (the test
 * command failed on the current tree), secrets (a credential in a changed file's content).
 * Block reason precedence: empty_diff_and_tests_red > empty_diff > tests_red >
 * secret_leak_in_changed_files.
 */
export type Baseline = 'run_start_commit' | 'run_start_tree' | 'base_unreachable';

export interface EvidenceFacts {
  baseline: Baseline;
  filesChanged: number;
  /** null when no test command is configured. */
  tests: { passed: boolean; timedOut: boolean; logPath: string } | null;
  /** null when the secret scan is off. */
  secrets: { file: string; line: number; kind: string }[] | null;
}

export interface EvidenceKnobs {
  evidenceGate: boolean;
  /** Treat "no test command" as affirmative instead of inconclusive. */
  evidenceNoTestsAffirmative: boolean;
}

export type BlockReason = 'empty_diff_and_tests_red' | 'empty_diff' | 'tests_red' | 'secret_leak_in_changed_files';

export interface EvidenceVerdict {
  pass: boolean;
  reason: BlockReason | null;
  /** Up to 5 human-readable lines. */
  failures: string[];
  /** Why completion could not be fully verified (never blocks). */
  inconclusive: string[];
  enabled: boolean;
}

export function judgeEvidence(f: EvidenceFacts, k: EvidenceKnobs): EvidenceVerdict {
  if (!k.evidenceGate) return { pass: true, reason: null, failures: [], inconclusive: ['evidence_gate_disabled'], enabled: false };
  const inconclusive: string[] = [];
  const failures: string[] = [];

  if (f.baseline === 'base_unreachable') inconclusive.push('base_unreachable');
  const emptyDiff = f.baseline !== 'base_unreachable' && f.filesChanged === 0;
  if (emptyDiff) failures.push('no file differs from the run start');

  let testsRed = false;
  if (f.tests === null) {
    if (!k.evidenceNoTestsAffirmative) inconclusive.push('no_test_runner');
  } else if (!f.tests.passed) {
    testsRed = true;
    failures.push(`the test command ${f.tests.timedOut ? 'timed out' : 'failed'} (log: ${f.tests.logPath})`);
  }

  const secrets = f.secrets ?? [];
  if (f.secrets === null) inconclusive.push('secret_scan_disabled');
  for (const s of secrets.slice(0, 3)) failures.push(`possible ${s.kind} in ${s.file}:${s.line}`);

  const reason: BlockReason | null =
    emptyDiff && testsRed
      ? 'empty_diff_and_tests_red'
      : emptyDiff
        ? 'empty_diff'
        : testsRed
          ? 'tests_red'
          : secrets.length
            ? 'secret_leak_in_changed_files'
            : null;
  return { pass: reason === null, reason, failures: failures.slice(0, 5), inconclusive, enabled: true };
}

/** One paragraph for the next prompt explaining a block. */
export function describeBlock(v: EvidenceVerdict, iteration: number): string {
  if (v.pass) return '';
  const what: Record<BlockReason, string> = {
    empty_diff_and_tests_red: 'nothing changed since the run started and the tests fail',
    empty_diff: 'nothing changed since the run started',
    tests_red: 'the tests fail',
    secret_leak_in_changed_files:
      'a changed file appears to contain a credential; remove it and use configuration or environment variables',
  };
  return (
    `Completion was refused at iteration ${iteration} by the evidence gate: ` +
    `${what[v.reason as BlockReason]}.\n${v.failures.map((l) => `- ${l}`).join('\n')}`
  );
}
