/**
 * The PRD checklist's shared parts: its limits, and the small readers every parser of untrusted
 * text uses (one line of a title, a priority word, an id made safe and unique).
 *
 * Sandbox-safe: pure functions, no Node imports.
 */
import { type ChecklistItem } from '../../schemas/gates.js';

export type ChecklistPriority = ChecklistItem['priority'];
export type ItemStatus = 'unverified' | 'passing' | 'failing';

/** Agent output and checklist files longer than this are cut (agent output keeps its tail). */
export const MAX_CHECKLIST_TEXT_CHARS = 1_048_576;
/** The most held-out items (the state schema allows 5). */
export const MAX_HELD_OUT = 5;
export const MAX_TITLE_CHARS = 300;
export const MAX_VERIFY_CHARS = 500;
export const MAX_EVIDENCE_CHARS = 300;

/** JSON.parse attempts per answer: each is linear, so reading stays linear in the input. */
export const MAX_PARSE_ATTEMPTS = 24;
/** Bracket nesting deeper than this is not a checklist: the scan forgets the outermost brackets. */
export const MAX_DEPTH = 64;
/** Array entries looked at in one answer (60 are kept). */
export const MAX_ENTRIES = 1000;
export const ID_RE = /^[A-Za-z0-9][A-Za-z0-9_.-]*$/;
export const MAX_ID_CHARS = 64;

// ---------------------------------------------------------------------------------------------
// Small helpers
// ---------------------------------------------------------------------------------------------

export const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** One line of at most `max` characters: whitespace runs become one space; a cut ends with `…`. */
export function oneLine(s: string, max: number): string {
  const t = s
    .slice(0, max * 4 + 64)
    .replace(/\s+/g, ' ')
    .trim();
  return t.length > max ? `${t.slice(0, max - 1)}…` : t;
}

const isAlnum = (c: string): boolean => (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');

/** The first string among `keys` of `o` that is not blank. */
export function firstString(o: Record<string, unknown>, keys: readonly string[]): string | null {
  for (const k of keys) {
    const v = o[k];
    if (typeof v === 'string' && v.trim() !== '') return v;
  }
  return null;
}

const PRIORITY_WORDS: Readonly<Record<string, ChecklistPriority>> = {
  critical: 'critical',
  high: 'high',
  medium: 'medium',
  low: 'low',
  must: 'high',
  should: 'medium',
  could: 'low',
};

/** `critical|high|medium|low`, or MoSCoW `must|should|could` (also `Must-have`), any case; else null. */
export function priorityOf(raw: string): ChecklistPriority | null {
  let w = raw.trim().toLowerCase();
  if (w.endsWith('-have') || w.endsWith(' have')) w = w.slice(0, -5).trim();
  return Object.hasOwn(PRIORITY_WORDS, w) ? (PRIORITY_WORDS[w] as ChecklistPriority) : null;
}

/** `base`, or `base-2`, `base-3`, ... (kept within 64 characters), whichever is not taken. */
export function uniqueId(base: string, taken: ReadonlySet<string>): string {
  if (!taken.has(base)) return base;
  for (let k = 2; ; k++) {
    const suffix = `-${k}`;
    const candidate = `${base.slice(0, MAX_ID_CHARS - suffix.length)}${suffix}`;
    if (!taken.has(candidate)) return candidate;
  }
}

/** An id made of the allowed characters (letters, digits, `_ . -`, a letter or digit first), or null. */
export function sanitizeId(raw: string): string | null {
  const s = raw
    .slice(0, 200)
    .trim()
    .replace(/[^A-Za-z0-9_.-]+/g, '-');
  let i = 0;
  while (i < s.length && !isAlnum(s[i] as string)) i++;
  let t = s.slice(i, i + MAX_ID_CHARS);
  let j = t.length;
  while (j > 0 && (t[j - 1] === '-' || t[j - 1] === '.')) j--;
  t = t.slice(0, j);
  return t === '' ? null : t;
}
