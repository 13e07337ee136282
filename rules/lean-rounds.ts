/**
 * What a judgement already made still says about the tree the run has now, so that orchestration
 * does not pay again for an answer that cannot have changed (patch `vigil-lean-rounds-v1`):
 *
 * - the **early check** (the council convened because the tests turned green) convenes only when
 *   the tree changed, since the last round, in a way that could flip its verdict: a file the round
 *   had not seen, a change to a file a reviewer or member flagged, or to a file a checklist item
 *   that was not passing names. A claim, a tripped breaker, a person and the regular interval
 *   (`councilCheckInterval`) still convene whatever changed;
 * - a **passing code review** stands for a later tree that differs from the reviewed one only in
 *   files the review saw and no reviewer flagged (a new file, or a change to a flagged one, is
 *   reviewed);
 * - the **checklist verifier** re-checks only the items that could have changed: an item that
 *   passed stays passed while none of the files it names changed; items that name none of the
 *   run's changed files, or did not pass, are always asked again (one call asks them all).
 *
 * Each rests on a `ChangeMark`: the tree a judgement was made on, the run's changed files then,
 * and the paths changed since, accumulated from each inspection's `sinceLast` along an unbroken
 * chain of trees. Whenever the chain breaks (an inspection without `sinceLast`, more paths than
 * it lists, a tree the chain did not reach) the changes are unknown and every rule falls back to
 * asking again.
 *
 * Pure functions: no I/O, imported by the workflow.
 */
import type { ChangeMark, ChecklistState, ReviewRecord } from '../schemas/gates.js';
import type { Verdict } from '../schemas/run.js';
import { isTestPath } from './integrity.js';

/** Paths a mark follows before its changes count as unknown (the history stays small). */
export const MARK_PATHS = 100;

/** A mark on the tree a judgement was just made on: `files` are the run's changed files then (null when the inspection listed only some). */
export function markTree(tree: string, iteration: number, files: readonly string[] | null): ChangeMark {
  return { tree, iteration, files: files ? [...files] : null, since: [], head: tree };
}

/** What one inspection tells a mark: the tree before the iteration, the tree after, and the paths that differ between them (null: not listed in full). */
export interface TreeStep {
  from: string | null;
  to: string;
  paths: readonly string[] | null;
}

/** The mark after one more inspection: its changes grow by the step's paths, or become unknown when the chain breaks. */
export function advanceMark(mark: ChangeMark | null, step: TreeStep): ChangeMark | null {
  if (!mark) return null;
  if (step.to === mark.head) return mark;
  if (mark.since === null || step.from !== mark.head || step.paths === null) return { ...mark, since: null, head: step.to };
  const since = [...new Set([...mark.since, ...step.paths])];
  // Back on the marked tree: nothing differs from it any more.
  if (step.to === mark.tree) return { ...mark, since: [], head: step.to };
  return { ...mark, since: since.length > MARK_PATHS ? null : since, head: step.to };
}

/** The paths of `step` when the inspection listed all of them, else null. */
export function stepPaths(sinceLast: { files: number; paths: readonly string[] } | null | undefined): string[] | null {
  if (!sinceLast || sinceLast.paths.length < sinceLast.files) return null;
  return [...sinceLast.paths];
}

/**
 * Whether `file` is named in any of `texts`: its full path, or its base name when that has an
 * extension (`notes.txt`, not `Makefile`-like names that are also plain words).
 */
export function named(file: string, texts: readonly string[]): boolean {
  const base = file.split('/').pop() ?? file;
  const byBase = /\.[A-Za-z0-9]+$/.test(base) && base.length >= 4;
  return texts.some((t) => t.includes(file) || (byBase && t.includes(base)));
}

const LISTED = 3;
const list = (paths: readonly string[]): string =>
  `${paths.slice(0, LISTED).join(', ')}${paths.length > LISTED ? ` and ${paths.length - LISTED} more` : ''}`;

export interface Judged {
  /** True: the earlier judgement no longer holds (or cannot be shown to hold); ask again. */
  again: boolean;
  why: string;
}

/** Text of a review's findings (reviewers' and the devil's advocate's), for `named`. */
export function reviewTexts(review: ReviewRecord | null | undefined): string[] {
  if (!review) return [];
  return [...review.reviewers, ...(review.devilsAdvocate ? [review.devilsAdvocate] : [])].flatMap((r) => r.findings);
}

/** Checklist text of the items that are not passing (failing or unverified and not waived): a change to a file they name could flip them. */
export function openItemTexts(cl: ChecklistState | null | undefined): string[] {
  if (!cl) return [];
  const waived = new Set(cl.waivers.map((w) => w.item));
  return cl.items.filter((i) => !waived.has(i.id) && cl.status[i.id]?.status !== 'passing').map((i) => `${i.title} ${i.verify}`);
}

/** Every text that can flag a file for the early check: the last round's reasons, the last review's findings, the open checklist items. */
export function flaggedTexts(
  verdict: Verdict | null | undefined,
  review: ReviewRecord | null | undefined,
  cl: ChecklistState | null | undefined,
): string[] {
  const reasons = verdict
    ? [...verdict.votes.map((v) => v.reason), ...(verdict.devilsAdvocate ? [verdict.devilsAdvocate.reason] : [])]
    : [];
  return [...reasons, ...reviewTexts(review), ...openItemTexts(cl)];
}

/**
 * The early check on the current tree: convene (again) only when something a verdict rests on
 * changed since the last round. `flagged` are the texts that name files: the last round's
 * reasons, the last review's findings, the open checklist items.
 */
export function earlyCheckDue(mark: ChangeMark | null, flagged: readonly string[]): Judged {
  if (!mark) return { again: true, why: 'no council round yet' };
  const since = `since the round at iteration ${mark.iteration}`;
  if (mark.since === null || mark.files === null) return { again: true, why: `the changes ${since} are not known in full` };
  if (mark.since.length === 0) return { again: false, why: `nothing changed ${since}` };
  const seen = new Set(mark.files);
  const fresh = mark.since.filter((p) => !seen.has(p));
  if (fresh.length > 0) return { again: true, why: `new file(s) ${since}: ${list(fresh)}` };
  const touched = mark.since.filter((p) => named(p, flagged));
  if (touched.length > 0) return { again: true, why: `change(s) ${since} to flagged or open checklist files: ${list(touched)}` };
  return { again: false, why: `the changes ${since} (${list(mark.since)}) touch no new, flagged or open checklist file` };
}

/**
 * Whether the last passing code review still stands for the current tree: it passed, its mark is
 * on its tree, and everything changed since is a file it saw and no reviewer flagged.
 */
export function reviewStands(review: ReviewRecord | null | undefined, mark: ChangeMark | null, tree: string): Judged {
  if (!review || review.result !== 'pass') return { again: true, why: 'no passing review' };
  if (review.treeHash === tree) return { again: false, why: `this tree passed review round ${review.round}` };
  if (!mark || mark.tree !== review.treeHash || mark.head !== tree)
    return { again: true, why: 'the reviewed tree is not the one the changes are counted from' };
  const at = `since review round ${review.round} (iteration ${review.iteration})`;
  if (mark.since === null || mark.files === null) return { again: true, why: `the changes ${at} are not known in full` };
  const seen = new Set(mark.files);
  const fresh = mark.since.filter((p) => !seen.has(p));
  if (fresh.length > 0) return { again: true, why: `new file(s) ${at}: ${list(fresh)}` };
  const flagged = mark.since.filter((p) => named(p, reviewTexts(review)));
  if (flagged.length > 0) return { again: true, why: `change(s) ${at} to flagged file(s): ${list(flagged)}` };
  return {
    again: false,
    why: `review round ${review.round} stands: the changes ${at} (${list(mark.since)}) touch only reviewed files nobody flagged`,
  };
}

/** Documentation: a change to it alone never needs the code reviewed again. */
const DOC_PATH = /(?:^|\/)(?:docs?\/.*|[^/]*\.(?:md|mdx|rst|txt|adoc)|LICEN[CS]E[^/]*|CHANGELOG[^/]*|AUTHORS[^/]*)$/i;

/** Product code: a file that is neither a test (integrity.ts `isTestPath`) nor documentation. */
export function isProductPath(p: string): boolean {
  return !isTestPath(p) && !DOC_PATH.test(p);
}

/** What a completion check does about the code review (patch `vigil-judges-see-changes-v1`). */
export interface ReviewDue {
  /** `stands`: the last passing review holds; `delta`: review what changed since the reviewed tree; `full`: review everything since the run's start. */
  kind: 'stands' | 'delta' | 'full';
  why: string;
}

/**
 * The code review a check needs on `tree` (judges see what changed): a passing review stands only
 * for its own tree, or for a later one whose changes since touch no product code (tests, which the
 * integrity gate holds to the run's start, and docs) and no file a reviewer flagged; when the
 * changes since are known, anything else is a **delta review** of the diff between the reviewed
 * tree and this one (cheaper than the whole diff again); when they are not known, a full review. A review whose answers broke the agent
 * contract gave no verdict: it
 * never stands (asked again, each check counts on the contract's streak). Nor does an inconclusive
 * one (a reviewer that gave no answer: it crashed, timed out or fell silent): it says nothing of
 * the work, and the builder cannot change it, so standing on its own tree would refuse every later
 * claim on that tree until the iteration cap; the next claim asks again, as the original did.
 */
export function reviewDue(
  review: ReviewRecord | null | undefined,
  mark: ChangeMark | null,
  tree: string,
  contractOnly: boolean,
): ReviewDue {
  if (!review) return { kind: 'full', why: 'no review yet' };
  if (contractOnly) return { kind: 'full', why: `review round ${review.round} broke the agent contract: asked again` };
  if (review.result === 'inconclusive') return { kind: 'full', why: `review round ${review.round} was inconclusive: asked again` };
  if (review.treeHash === tree) return { kind: 'stands', why: `this tree had review round ${review.round}` };
  if (review.result !== 'pass') return { kind: 'full', why: 'no passing review' };
  if (!mark || mark.tree !== review.treeHash || mark.head !== tree)
    return { kind: 'full', why: 'the reviewed tree is not the one the changes are counted from' };
  const at = `since review round ${review.round} (iteration ${review.iteration})`;
  if (mark.since === null || mark.files === null) return { kind: 'full', why: `the changes ${at} are not known in full` };
  if (mark.since.length === 0) return { kind: 'stands', why: `nothing changed ${at}` };
  const product = mark.since.filter(isProductPath);
  if (product.length > 0) return { kind: 'delta', why: `product code changed ${at}: ${list(product)}` };
  const flagged = mark.since.filter((p) => named(p, reviewTexts(review)));
  if (flagged.length > 0) return { kind: 'delta', why: `change(s) ${at} to flagged file(s): ${list(flagged)}` };
  return { kind: 'stands', why: `review round ${review.round} stands: the changes ${at} (${list(mark.since)}) touch no product code` };
}

/**
 * The checklist items to ask the verifier about on the current tree: every item, unless the last
 * verification's mark shows exactly what changed; then only the items that did not pass or whose
 * named files changed (an item that names no file is always asked).
 */
export function itemsToRecheck(cl: ChecklistState, mark: ChangeMark | null, tree: string): { ids: string[]; why: string } {
  const all = cl.items.map((i) => i.id);
  if (!mark || mark.head !== tree) return { ids: all, why: 'no verification to build on' };
  if (mark.since === null || mark.files === null)
    return { ids: all, why: `the changes since the verification at iteration ${mark.iteration} are not known in full` };
  const seen = new Set(mark.files);
  const fresh = mark.since.filter((p) => !seen.has(p));
  if (fresh.length > 0) return { ids: all, why: `new file(s) since the verification at iteration ${mark.iteration}: ${list(fresh)}` };
  const diff = [...mark.files, ...mark.since];
  const changed = mark.since;
  const ids = cl.items
    .filter((i) => {
      if (cl.status[i.id]?.status !== 'passing') return true;
      const text = [`${i.title} ${i.verify}`];
      // An item that names none of the run's changed files cannot be tied to a change: asked again.
      if (!diff.some((p) => named(p, text))) return true;
      return changed.some((p) => named(p, text));
    })
    .map((i) => i.id);
  return {
    ids,
    why:
      ids.length === all.length
        ? 'every item could have changed'
        : `${all.length - ids.length} passing item(s) name no file changed since iteration ${mark.iteration}`,
  };
}
