/**
 * What done rested on, said once: the line a finished run's outcome carries first, and with it
 * `vigil status`, `vigil report` (the outcome's journal event keeps it), the console, the Temporal
 * UI card and the delivered commit or pull request — the
 * baseline tests and how many passed, the acceptance tests (knob `acceptanceTests`) and how many
 * passed, the integrity and gaming findings, the test command and the tree it judged.
 *
 * Pure: the run's last test record and gate results come in as values.
 */
import type { AcceptanceState } from '../schemas/acceptance.js';
import type { GateResult } from '../schemas/gates.js';
import type { TestRunRecord } from '../schemas/run.js';

/** A gate's findings on the judged tree, as a count (null: the gate did not run on it). */
function findings(gates: readonly GateResult[], gate: GateResult['gate']): number | null {
  const g = gates.find((x) => x.gate === gate);
  if (!g || g.verdict === 'inconclusive') return null;
  return Math.max(g.findingCount, g.findings.length);
}

/** The acceptance tests' part: their last verdict (a run without them says nothing of them). */
function acceptancePart(acceptance: AcceptanceState | null): string | null {
  if (!acceptance) return null;
  const last = acceptance.last;
  if (!last) return 'acceptance tests: not run';
  const total = last.passed !== null && last.failed !== null ? last.passed + last.failed : null;
  if (last.verdict === 'pass') return total !== null ? `acceptance ${last.passed} of ${total} passed` : 'acceptance passed';
  return `acceptance ${last.verdict}${total !== null ? ` (${last.passed} of ${total} passed)` : ''}`;
}

/** The evidence line of a run that ended done (`evidence: …`). */
export function evidenceLine(
  tests: TestRunRecord | null,
  gates: readonly GateResult[],
  fallbackTree: string | null,
  acceptance: AcceptanceState | null = null,
): string {
  const parts: string[] = [];
  if (!tests || tests.runner === 'none') parts.push('no test runner');
  else if (tests.selected) parts.push(`no full test run (a partial one: ${tests.selected.files} of ${tests.selected.of} test files)`);
  else {
    const base =
      tests.baselineTotal !== null && tests.baselinePassed !== null
        ? `baseline tests ${tests.baselinePassed} of ${tests.baselineTotal} passed`
        : `tests ${tests.verdict === 'pass' || (tests.verdict === null && tests.passed) ? 'passed' : (tests.verdict ?? 'failed')} (no baseline report)`;
    const cmd = tests.command ? ` (\`${tests.command.slice(0, 120)}\`)` : tests.runner ? ` (${tests.runner})` : '';
    parts.push(`${base}${cmd}`);
  }
  const acc = acceptancePart(acceptance);
  if (acc) parts.push(acc);
  for (const [gate, label] of [
    ['test_mutation', 'integrity findings'],
    ['test_gaming', 'gaming findings'],
  ] as const) {
    const n = findings(gates, gate);
    parts.push(n === null ? `${label}: not checked` : `${label} ${n}`);
  }
  const tree = tests?.treeHash ?? fallbackTree;
  if (tree) parts.push(`tree ${tree.slice(0, 12)}`);
  return `evidence: ${parts.join(', ')}`;
}

/** The evidence line among an outcome's notes (null: the run did not end done, or ended before the line). */
export function evidenceNote(notes: readonly string[] | undefined): string | null {
  return notes?.find((n) => n.startsWith('evidence: ')) ?? null;
}
