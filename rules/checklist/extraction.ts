/**
 * The extraction agent's answer read into checklist items (`parseChecklistOutput`): a JSON array
 * found anywhere in its untrusted output, each entry's title, verification and priority read
 * under several names, bad entries dropped and named.
 *
 * Sandbox-safe: pure functions, no Node imports.
 */
import { type ChecklistItem, ChecklistSchema, MAX_CHECKLIST_ITEMS } from '../../schemas/gates.js';
import {
  type ChecklistPriority,
  MAX_CHECKLIST_TEXT_CHARS,
  MAX_ENTRIES,
  MAX_TITLE_CHARS,
  MAX_VERIFY_CHARS,
  firstString,
  isRecord,
  oneLine,
  priorityOf,
  sanitizeId,
  uniqueId,
} from './common.js';
import { entriesOf, jsonValues } from './json-scan.js';

const TITLE_KEYS = ['title', 'name', 'requirement', 'description', 'text'] as const;
const VERIFY_KEYS = ['verify', 'how_to_verify', 'verification', 'howToVerify'] as const;
const PRIORITY_KEYS = ['priority', 'severity'] as const;
export const CONTAINER_KEYS = ['items', 'checklist', 'requirements'] as const;

export type ChecklistParseResult = { ok: true; items: ChecklistItem[]; dropped: string[] } | { ok: false; error: string };

interface Entry {
  /** The id as written (null: none given). */
  id: string | null;
  title: string;
  /** The priority as written (null: none given). */
  priority: string | null;
  verify: string;
}

/** One array entry as an Entry, or why it is not one. A bare string is a title. */
export function readEntry(x: unknown): Entry | string {
  if (typeof x === 'string') return x.trim() === '' ? 'empty entry' : { id: null, title: x, priority: null, verify: '' };
  if (!isRecord(x)) return 'not an object';
  const title = firstString(x, TITLE_KEYS);
  if (title === null) return 'no title';
  const rawId = x['id'];
  const id =
    typeof rawId === 'string' && rawId.trim() !== '' ? rawId : typeof rawId === 'number' && Number.isFinite(rawId) ? String(rawId) : null;
  return { id, title, priority: firstString(x, PRIORITY_KEYS), verify: firstString(x, VERIFY_KEYS) ?? '' };
}

const looksLikeEntry = (x: unknown): boolean => isRecord(x) && firstString(x, TITLE_KEYS) !== null;

/** Final shape: generated ids for the missing ones, titles and verify texts cut to their limits. */
export function finishItems(
  entries: readonly { id: string | null; title: string; priority: ChecklistPriority; verify: string }[],
): ChecklistItem[] {
  const reserved = new Set<string>();
  for (const e of entries) if (e.id !== null) reserved.add(e.id);
  const taken = new Set<string>();
  const items: ChecklistItem[] = [];
  entries.forEach((e, i) => {
    const id = e.id !== null ? uniqueId(e.id, taken) : uniqueId(`REQ-${i + 1}`, new Set([...taken, ...reserved]));
    taken.add(id);
    items.push({ id, title: oneLine(e.title, MAX_TITLE_CHARS), priority: e.priority, verify: oneLine(e.verify, MAX_VERIFY_CHARS) });
  });
  return items;
}

export function validated(items: ChecklistItem[], dropped: string[], where: string): ChecklistParseResult {
  const r = ChecklistSchema.safeParse(items);
  if (!r.success) return { ok: false, error: `${where}: ${r.error.issues[0]?.message ?? 'invalid checklist'}` };
  return { ok: true, items: r.data, dropped };
}

/**
 * Reads the extraction agent's answer (untrusted). The checklist is the last fenced ```json block
 * that holds one, else the last top-level JSON array (or `{"items": [...]}` / `{"checklist": [...]}`)
 * in the text. Entries are repaired rather than refused: a missing id becomes `REQ-<n>` (n: the
 * entry's position), an id outside the allowed characters is sanitized, a repeated id gets `-2`,
 * `-3`; unknown priorities are `medium`; titles are cut to 300 characters and verify texts to 500.
 * Past 60 items the rest are listed in `dropped` (their ids), as are entries without a title
 * (`entry N: no title`). Text over 1 MiB keeps its last 1 MiB.
 */
export function parseChecklistOutput(text: string): ChecklistParseResult {
  const input = text.length > MAX_CHECKLIST_TEXT_CHARS ? text.slice(text.length - MAX_CHECKLIST_TEXT_CHARS) : text;
  let entries: unknown[] | null = null;
  let sawEmpty = false;
  for (const { value } of jsonValues(input)) {
    const found = entriesOf(value, CONTAINER_KEYS);
    if (found === null) continue;
    if (found.some(looksLikeEntry)) {
      entries = found;
      break;
    }
    if (found.length === 0) sawEmpty = true;
  }
  if (entries === null) {
    return {
      ok: false,
      error: sawEmpty
        ? 'the checklist answer holds an empty list: no checklist items'
        : 'no checklist found in the answer: expected a JSON array of {id, title, priority, verify} items',
    };
  }
  const dropped: string[] = [];
  const read: { id: string | null; title: string; priority: ChecklistPriority; verify: string }[] = [];
  entries.slice(0, MAX_ENTRIES).forEach((x, i) => {
    const e = readEntry(x);
    if (typeof e === 'string') {
      dropped.push(`entry ${i + 1}: ${e}`);
      return;
    }
    read.push({
      id: e.id === null ? null : sanitizeId(e.id),
      title: e.title,
      priority: (e.priority === null ? null : priorityOf(e.priority)) ?? 'medium',
      verify: e.verify,
    });
  });
  if (entries.length > MAX_ENTRIES) dropped.push(`${entries.length - MAX_ENTRIES} more entries not read`);
  if (read.length === 0) return { ok: false, error: 'the checklist answer has no usable items (every entry lacks a title)' };
  const all = finishItems(read);
  for (const it of all.slice(MAX_CHECKLIST_ITEMS)) dropped.push(it.id);
  return validated(all.slice(0, MAX_CHECKLIST_ITEMS), dropped, 'the checklist answer');
}
