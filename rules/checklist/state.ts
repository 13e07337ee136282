/**
 * The checklist's state judged: what blocks completion (`checklistBlock`, `checklistStop`), a
 * person's waiver (`waive`), and the views of it a person and the builder get (`maskedChecklist`,
 * `builderChecklist`: held-out items never shown to the builder).
 *
 * Sandbox-safe: pure functions, no Node imports.
 */
import { type ChecklistItem, type ChecklistState } from '../../schemas/gates.js';
import { type ChecklistPriority, type ItemStatus, MAX_EVIDENCE_CHARS, MAX_TITLE_CHARS, oneLine } from './common.js';

/** Held-out item ids in checklist order, each with its label `held-out-N` (N from 1). */
function heldOutLabels(state: ChecklistState): Map<string, string> {
  const held = new Set(state.heldOut);
  const labels = new Map<string, string>();
  for (const it of state.items) if (held.has(it.id) && !labels.has(it.id)) labels.set(it.id, `held-out-${labels.size + 1}`);
  return labels;
}

/** The real id an item reference names: an id, a mask label, or an id in another case. */
function resolveItem(state: ChecklistState, ref: string): string | null {
  const r = ref.trim();
  if (state.items.some((it) => it.id === r)) return r;
  for (const [id, label] of heldOutLabels(state)) if (label === r.toLowerCase()) return id;
  const matches = state.items.filter((it) => it.id.toLowerCase() === r.toLowerCase());
  return matches.length === 1 ? (matches[0] as ChecklistItem).id : null;
}

function waivedIds(state: ChecklistState): Set<string> {
  const out = new Set<string>();
  for (const w of state.waivers) {
    const id = resolveItem(state, w.item);
    if (id !== null) out.add(id);
  }
  return out;
}

const statusFor = (state: ChecklistState, id: string): ItemStatus => state.status[id]?.status ?? 'unverified';

export interface ChecklistBlock {
  blocked: boolean;
  /** For people: held-out items by their label. */
  reasons: string[];
  /**
   * For the builder: visible items as in `reasons`; held-out items not even counted — one
   * line says that requirements of the PRD verified independently are not met.
   */
  builderReasons: string[];
}

/** What the builder is told when held-out items block: no text, no count, no label. */
export const HELD_OUT_BUILDER_REASON =
  'the independent verification found requirements of the PRD that are not met yet: re-read the whole PRD and check every requirement, not only the checklist';

/**
 * Whether the checklist blocks completion. Blocks on each item not waived that is (a) visible,
 * critical and failing: named by id and title, with the evidence; or (b) held out and failing or
 * never verified (fail-closed): named only `held-out item N` (its place among the held-out items),
 * never by title or id, because these reasons reach the builder's prompt.
 */
export function checklistBlock(state: ChecklistState): ChecklistBlock {
  const labels = heldOutLabels(state);
  const waived = waivedIds(state);
  const reasons: string[] = [];
  const builderReasons: string[] = [];
  let heldOutBlocks = false;
  for (const it of state.items) {
    if (waived.has(it.id)) continue;
    const status = statusFor(state, it.id);
    const label = labels.get(it.id);
    if (label !== undefined) {
      const n = label.slice('held-out-'.length);
      if (status === 'failing') reasons.push(`held-out item ${n} failed verification`);
      else if (status === 'unverified') reasons.push(`held-out item ${n} has not been verified`);
      heldOutBlocks ||= status !== 'passing';
    } else if (it.priority === 'critical' && status === 'failing') {
      const evidence = state.status[it.id]?.evidence ?? '';
      const line =
        `critical item ${it.id} is failing: ` +
        `${oneLine(it.title, MAX_TITLE_CHARS)}${evidence === '' ? '' : ` (${oneLine(evidence, MAX_EVIDENCE_CHARS)})`}`;
      reasons.push(line);
      builderReasons.push(line);
    }
  }
  if (heldOutBlocks) builderReasons.push(HELD_OUT_BUILDER_REASON);
  return { blocked: reasons.length > 0, reasons, builderReasons };
}

/**
 * What a verification of the `asked` items must answer for the checklist not to block completion,
 * the items not asked keeping the status they have (a council round that carries the checklist
 * verifier asks its members only when the answer leaves the checklist unblocked):
 * - `blockedAnyway`: an item that is not asked blocks already, whatever the answer;
 * - `mustPass`: items that block now (a held-out item not passing, a critical item failing) and
 *   must come back passing;
 * - `mustNotFail`: items that do not block now (a held-out item passing, a critical item not
 *   failing) and must not come back failing.
 * Waived items and items that never block (not held out, not critical) are in neither list. Agrees
 * with `checklistBlock` on the state the verification leaves (tests/unit/checklist-stop.test.ts).
 */
export interface ChecklistStop {
  blockedAnyway: boolean;
  mustPass: string[];
  mustNotFail: string[];
}

export function checklistStop(state: ChecklistState, asked: readonly string[]): ChecklistStop {
  const held = new Set(state.heldOut);
  const waived = waivedIds(state);
  const ask = new Set(asked);
  const stop: ChecklistStop = { blockedAnyway: false, mustPass: [], mustNotFail: [] };
  for (const it of state.items) {
    if (waived.has(it.id)) continue;
    const status = statusFor(state, it.id);
    const heldOut = held.has(it.id);
    if (!heldOut && it.priority !== 'critical') continue;
    const blocksNow = heldOut ? status !== 'passing' : status === 'failing';
    if (!ask.has(it.id)) stop.blockedAnyway ||= blocksNow;
    else if (blocksNow) stop.mustPass.push(it.id);
    else stop.mustNotFail.push(it.id);
  }
  return stop;
}

/** Whether a verification's answers (by item id) leave the checklist blocked, by the rule `checklistStop` made. */
export function verificationBlocks(stop: ChecklistStop, answers: Readonly<Record<string, { status: ItemStatus }>>): boolean {
  if (stop.blockedAnyway) return true;
  return stop.mustPass.some((id) => answers[id]?.status !== 'passing') || stop.mustNotFail.some((id) => answers[id]?.status === 'failing');
}

export type WaiveResult = { ok: true; state: ChecklistState } | { ok: false; error: string };

/**
 * A person waives an item (by its id, or `held-out-N` from the status view): it no longer blocks
 * completion. Waiving an item already waived is ok and leaves the state as it was. `by` and
 * `reason` are cut to the state's limits (200 and 500 characters). The waiver records the real id.
 */
export function waive(state: ChecklistState, item: string, by: string, reason: string, at: string): WaiveResult {
  const id = resolveItem(state, item);
  if (id === null) {
    const n = state.items.length;
    return {
      ok: false,
      error:
        `no checklist item ${JSON.stringify(item.trim().slice(0, 80))}: the checklist has ${n} item${n === 1 ? '' : 's'} (use an ` +
        `id from the checklist status, or held-out-N for a held-out item)`,
    };
  }
  if (waivedIds(state).has(id)) return { ok: true, state };
  return {
    ok: true,
    state: { ...state, waivers: [...state.waivers, { item: id, by: by.slice(0, 200), reason: reason.slice(0, 500), at }] },
  };
}

export interface MaskedChecklistItem {
  id: string;
  title: string;
  priority: ChecklistPriority;
  status: ItemStatus;
  waived: boolean;
  heldOut: boolean;
}

export const HELD_OUT_TITLE = '(held out: verified at completion)';

/**
 * A person's view of the checklist, in checklist order: held-out items appear as `held-out-N`
 * (numbered in order of appearance) with the title `(held out: verified at completion)`.
 */
export function maskedChecklist(state: ChecklistState): MaskedChecklistItem[] {
  const labels = heldOutLabels(state);
  const waived = waivedIds(state);
  return state.items.map((it) => {
    const label = labels.get(it.id);
    return {
      id: label ?? it.id,
      title: label === undefined ? it.title : HELD_OUT_TITLE,
      priority: it.priority,
      status: statusFor(state, it.id),
      waived: waived.has(it.id),
      heldOut: label !== undefined,
    };
  });
}

/**
 * The checklist as Markdown for the builder's prompt: the visible items only (held-out items,
 * and their number, are never mentioned), one line each: `[x]` passing, `[ ]` not verified yet,
 * `[!]` failing with the verifier's evidence; `(waived)` after a waived item. Cut at a line
 * boundary to at most `maxChars` characters, ending with `… N more` when items were left out
 * (an empty string when not even that fits).
 */
export function builderChecklist(state: ChecklistState, maxChars: number): string {
  const held = new Set(state.heldOut);
  const waived = waivedIds(state);
  const lines: string[] = [];
  for (const it of state.items) {
    if (held.has(it.id)) continue;
    const s = state.status[it.id];
    const status = s?.status ?? 'unverified';
    const mark = status === 'passing' ? '[x]' : status === 'failing' ? '[!]' : '[ ]';
    let line = `- ${mark} ${it.id} (${it.priority}): ${oneLine(it.title, MAX_TITLE_CHARS)}`;
    if (status === 'failing') line += ` — failing: ${oneLine(s?.evidence ?? '', MAX_EVIDENCE_CHARS) || 'no evidence given'}`;
    if (waived.has(it.id)) line += ' (waived)';
    lines.push(line);
  }
  const max = Math.floor(maxChars);
  const all = lines.join('\n');
  if (all.length <= max) return all;
  let best = '';
  let used = 0; // length of lines[0..k) joined
  for (let k = 0; k <= lines.length; k++) {
    const more = `… ${lines.length - k} more`;
    const candidateLength = used + (k > 0 ? 1 : 0) + more.length;
    if (k < lines.length && candidateLength <= max) best = k === 0 ? more : `${lines.slice(0, k).join('\n')}\n${more}`;
    if (k < lines.length) used += (k > 0 ? 1 : 0) + (lines[k] as string).length;
    if (used > max) break;
  }
  return best;
}
