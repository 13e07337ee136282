/**
 * The evidence line a finished run carries (rules/evidence-line.ts), and the same
 * line where a person meets it: `vigil status`, the console's run header, the outcome's journal
 * event that `vigil report` reads, and the delivered commit and pull request body.
 */
import { describe, expect, it } from 'vitest';
import { runSummary } from '../../cli/console/pages.js';
import { printStatus } from '../../cli/status.js';
import type { GateResult } from '../../schemas/gates.js';
import { OutcomeSchema, type TestRunRecord } from '../../schemas/run.js';
import { deliveryMessage, runReportMarkdown } from '../../rules/delivery.js';
import { evidenceLine, evidenceNote } from '../../rules/evidence-line.js';
import { outcomeEvent } from '../../rules/journal.js';

const tests = (over: Partial<TestRunRecord> = {}): TestRunRecord => ({
  treeHash: 'abcdef0123456789',
  iteration: 3,
  passed: true,
  timedOut: false,
  exitCode: 0,
  logPath: '/l',
  failures: 0,
  runner: 'pytest',
  verdict: 'pass',
  reason: 'pytest: 2 passed',
  baselineTotal: 2,
  baselinePassed: 2,
  command: 'python3 -m pytest -q',
  ...over,
});
const gate = (g: GateResult['gate'], verdict: GateResult['verdict'], n: number): GateResult => ({
  gate: g,
  verdict,
  reason: '',
  findings: [],
  findingCount: n,
  missingTools: [],
  durationMs: 0,
  reportPath: null,
  treeHash: '',
  iteration: 3,
});

describe('the evidence line', () => {
  it('says the baseline tally, the command, the integrity and gaming findings and the tree', () => {
    expect(evidenceLine(tests(), [gate('test_mutation', 'pass', 0), gate('test_gaming', 'pass', 0)], null)).toBe(
      'evidence: baseline tests 2 of 2 passed (`python3 -m pytest -q`), integrity findings 0, gaming findings 0, tree abcdef012345',
    );
  });

  it('says what was not checked rather than a zero it does not know', () => {
    expect(evidenceLine(null, [], 'fedcba9876543210')).toBe(
      'evidence: no test runner, integrity findings: not checked, gaming findings: not checked, tree fedcba987654',
    );
    expect(
      evidenceLine(tests({ baselineTotal: null, baselinePassed: null, command: null }), [gate('test_mutation', 'inconclusive', 0)], null),
    ).toBe(
      'evidence: tests passed (no baseline report) (pytest), integrity findings: not checked, gaming findings: not checked, tree abcdef012345',
    );
  });

  it('never counts a partial test run (affected tests) as what done rested on', () => {
    expect(evidenceLine(tests({ selected: { files: 1, of: 4 }, baselineTotal: 2, baselinePassed: 2 }), [], null)).toMatch(
      /^evidence: no full test run \(a partial one: 1 of 4 test files\), /,
    );
  });

  it('counts every finding, not only the ones the result kept', () => {
    const g = { ...gate('test_gaming', 'fail', 30), findings: [] };
    expect(evidenceLine(tests(), [g], null)).toMatch(/gaming findings 30/);
  });

  it('says how many acceptance tests passed on the judged tree, when the run has them', () => {
    const sealed = { files: [], sealedAt: '2026-11-29T00:00:00Z' };
    const last = {
      treeHash: 'abcdef0123456789',
      iteration: 3,
      verdict: 'pass' as const,
      reason: 'acceptance: 2 passed',
      passed: 2,
      failed: 0,
      failing: [],
    };
    const both = [gate('test_mutation', 'pass', 0), gate('test_gaming', 'pass', 0)];
    expect(evidenceLine(tests(), both, null, { ...sealed, last })).toBe(
      'evidence: baseline tests 2 of 2 passed (`python3 -m pytest -q`), acceptance 2 of 2 passed, integrity findings 0, gaming findings 0, tree abcdef012345',
    );
    expect(evidenceLine(tests(), both, null, { ...sealed, last: null })).toMatch(/, acceptance tests: not run,/);
    expect(evidenceLine(tests(), both, null, null)).not.toMatch(/acceptance/);
  });
});

describe('the same line wherever a person looks', () => {
  const line = evidenceLine(tests(), [gate('test_mutation', 'pass', 0), gate('test_gaming', 'pass', 0)], null);
  const outcome = OutcomeSchema.parse({
    status: 'council_approved',
    reason: 'council approved at iteration 3',
    exitCode: 0,
    iteration: 3,
    at: '2026-11-30T00:00:00Z',
    notes: [line, 'delivered on branch vigil/run-7 (commit 0123456789ab, 1 file(s))'],
  });
  const view = { kind: 'finished' as const, workflowId: 'run-7', temporalStatus: 'COMPLETED', outcome, snapshot: null, iteration: 3 };

  it('status, the console, the journal event report reads, the commit and the pull request body', async () => {
    expect(evidenceNote(outcome.notes)).toBe(line);
    const status: string[] = [];
    printStatus(view, (l = '') => status.push(l));
    expect(status).toContain(`  note      : ${line}`);
    expect(String(await runSummary(view, null, null, new Date('2026-11-30T00:01:00Z')))).toContain(`<p class="evidence">${line}</p>`);
    expect(outcomeEvent(outcome)).toMatchObject({ kind: 'outcome', evidence: line });
    const facts = {
      prdTitle: 'Gap',
      workflowId: 'run-7',
      status: outcome.status,
      reason: outcome.reason,
      iterations: 3,
      spendUsd: 0,
      calls: 0,
    };
    expect(deliveryMessage({ ...facts, notes: outcome.notes }).split('\n')).toContain(`- ${line}`);
    expect(runReportMarkdown({ ...facts, notes: outcome.notes, council: null, gates: [], checklist: [] }).split('\n')).toContain(
      `- ${line}`,
    );
  });

  it('a run that ended otherwise has none to show', () => {
    expect(evidenceNote(['completion not independently verified: no test runner'])).toBeNull();
    expect(evidenceNote(undefined)).toBeNull();
    expect(outcomeEvent({ ...outcome, status: 'stopped', notes: [] })).not.toHaveProperty('evidence');
  });
});
