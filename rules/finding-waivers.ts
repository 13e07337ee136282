/**
 * Lifting the findings of the run's integrity gates (`test_mutation`, `test_gaming`): each blocks
 * completion until a person waives it by its id (`vigil waive <run> <id>`), or a PRD checklist
 * item asks for that change — an item whose title or check names the finding's file and a change
 * to tests ("update the expected value in tests/test_gap.py"). A lifted finding stays in the
 * result, marked, so the council sees it beside what lifted it; a gate whose every finding is
 * lifted passes. The council's evidence pack lists the lifted findings, each beside the waiver or
 * the checklist item's own words (`liftedForCouncil`).
 *
 * Pure: the results, the waivers and the checklist come in as values.
 */
import type { ChecklistState, GateResult } from '../schemas/gates.js';

/** The gates whose findings a waiver or a checklist item may lift. */
export const WAIVABLE_GATES: ReadonlySet<GateResult['gate']> = new Set(['test_mutation', 'test_gaming']);

/** A finding id as status shows it and `vigil waive` takes it: its kind, then a short hash. */
export const FINDING_ID =
  /^(?:test_deleted|skip_added|assertion_changed|harness_changed|passes_before|reads_caller|probes_runner|exits|opens_tests|hard_codes_input)-[0-9a-f]{8}$/;

export interface FindingWaiver {
  id: string;
  by: string;
  reason: string;
  at: string;
}

const CHANGE_WORDS = new RegExp(
  String.raw`\b(?:${[
    /tests?|assert(?:ion)?s?|expect(?:ed|ation)?s?|skip(?:ped|s)?|remove[ds]?|delete[ds]?|rename[ds]?/.source,
    /update[ds]?|change[ds]?|rewrite|harness|config(?:uration)?|fixtures?/.source,
  ].join('|')})\b`,
  'i',
);

/** The checklist item that asks for a change to `file` (null: none). */
export function liftingItem(checklist: ChecklistState | null, file: string | null): string | null {
  if (!checklist || !file) return null;
  const base = file.split('/').pop() ?? file;
  for (const item of checklist.items) {
    const text = `${item.title} ${item.verify}`;
    if ((text.includes(file) || (base.length >= 4 && text.includes(base))) && CHANGE_WORDS.test(text)) return item.id;
  }
  return null;
}

/** A gate result with its waived or asked-for findings lifted (a result of another gate unchanged). */
export function liftFindings(result: GateResult, waivers: readonly FindingWaiver[], checklist: ChecklistState | null): GateResult {
  if (!WAIVABLE_GATES.has(result.gate) || result.verdict !== 'fail' || result.findings.length === 0) return result;
  const waived = new Map(waivers.map((w) => [w.id, w]));
  let lifted = 0;
  const findings = result.findings.map((f) => {
    // Lifted already (info, marked); a mark in a still-blocking finding's text is the agent's, not a lift.
    if (f.severity === 'info' && f.message.includes(' [lifted: ')) {
      lifted += 1;
      return f;
    }
    const w = f.id ? waived.get(f.id) : undefined;
    const item = w ? null : liftingItem(checklist, f.file);
    if (!w && !item) return f;
    lifted += 1;
    const why = w ? `waived by ${w.by}${w.reason ? `: ${w.reason}` : ''}` : `asked for by checklist item ${item}`;
    return { ...f, severity: 'info' as const, message: `${f.message} [lifted: ${why}]`.slice(0, 500) };
  });
  if (lifted === 0) return result;
  // Findings the capped result left out are not known: they still block.
  const rest = Math.max(result.findingCount, result.findings.length) - lifted;
  const blocking = findings.some((f) => f.severity === 'high' || f.severity === 'critical') || rest > 0;
  return {
    ...result,
    findings,
    verdict: blocking ? 'fail' : 'pass',
    reason: result.reason.includes(' lifted by a waiver or the checklist)')
      ? result.reason
      : `${result.reason} (${lifted} lifted by a waiver or the checklist)`.slice(0, 500),
  };
}

/** Every waivable result of `latest` again, after a waiver. */
export function liftLatest(
  latest: readonly GateResult[],
  waivers: readonly FindingWaiver[],
  checklist: ChecklistState | null,
): GateResult[] {
  return latest.map((r) => liftFindings(r, waivers, checklist));
}

/** What `liftFindings` appends (the message may be cut after it). */
const LIFTED = / \[lifted: (?:waived by |asked for by checklist item ([\w.-]{1,60}))/;
const MAX_LIFTED_LINES = 20;

/**
 * The lifted findings of the latest integrity and gaming results, for the council's evidence pack:
 * each finding with what lifted it and, for a checklist item, the item's title and check, so the
 * members judge whether the PRD really asks for that change. Null when none is lifted.
 */
export function liftedForCouncil(latest: readonly GateResult[], checklist: ChecklistState | null): string | null {
  const out: string[] = [];
  for (const r of latest) {
    if (!WAIVABLE_GATES.has(r.gate)) continue;
    for (const f of r.findings) {
      // Lifted findings only: `liftFindings` made them info (an agent's own text in a message lifts nothing).
      // The last mark is liftFindings' own: one earlier in the message is the agent's text.
      const at = f.severity === 'info' ? f.message.lastIndexOf(' [lifted: ') : -1;
      const m = at >= 0 ? LIFTED.exec(f.message.slice(at)) : null;
      if (!m) continue;
      const item = m[1] ? checklist?.items.find((i) => i.id === m[1]) : undefined;
      const words = item ? ` — ${item.id}: ${item.title}${item.verify ? ` (check: ${item.verify})` : ''}` : '';
      out.push(`- ${r.gate}: ${f.message}${words}`.replace(/\s+/g, ' ').slice(0, 600));
    }
  }
  if (out.length === 0) return null;
  const more = out.length > MAX_LIFTED_LINES ? [`- … and ${out.length - MAX_LIFTED_LINES} more`] : [];
  return [...out.slice(0, MAX_LIFTED_LINES), ...more].join('\n');
}
