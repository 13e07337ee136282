/**
 * The PRD checklist (spec §2.12): verifiable requirements extracted from the PRD at run start,
 * a held-out share the builder never sees, a verifier agent's verdicts, and the completion rule.
 *
 * - Extraction: `checklistExtractionPrompt` asks an agent for a JSON array; `parseChecklistOutput`
 *   reads its untrusted answer. A person may supply the checklist instead (`parseChecklistFile`).
 * - Held out: `selectHeldOut` picks `heldOutCount(n)` items by SHA-256 of their ids, once. They are
 *   absent from everything built for the builder (`builderChecklist`, block reasons name them only
 *   as "held-out item N") and verified at completion with the rest (`checklistVerifierPrompt`).
 * - Verdicts: `parseVerifierOutput` reads `ITEM <id>: PASS|FAIL - evidence` lines or a JSON array.
 * - Completion: `checklistBlock` blocks on a failing critical item, or a held-out item that failed
 *   or was never verified, unless a person waived it (`waive`). `maskedChecklist` is a person's view.
 *
 * Agent output is parsed in linear time: inputs are capped, text is read line by line or with one
 * bracket-matching pass, and JSON.parse is tried on a bounded number of candidates.
 *
 * Sandbox-safe: pure functions, no Node imports.
 */
import { ChecklistItemSchema, ChecklistSchema, MAX_CHECKLIST_ITEMS, type ChecklistItem, type ChecklistState } from '../../schemas/gates.js';
import { sha256Hex } from './sha256.js';

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
const MAX_PARSE_ATTEMPTS = 24;
/** Bracket nesting deeper than this is not a checklist: the scan forgets the outermost brackets. */
const MAX_DEPTH = 64;
/** Array entries looked at in one answer (60 are kept). */
const MAX_ENTRIES = 1000;
const ID_RE = /^[A-Za-z0-9][A-Za-z0-9_.-]*$/;
const MAX_ID_CHARS = 64;

// ---------------------------------------------------------------------------------------------
// Small helpers
// ---------------------------------------------------------------------------------------------

const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** One line of at most `max` characters: whitespace runs become one space; a cut ends with `…`. */
function oneLine(s: string, max: number): string {
  const t = s
    .slice(0, max * 4 + 64)
    .replace(/\s+/g, ' ')
    .trim();
  return t.length > max ? `${t.slice(0, max - 1)}…` : t;
}

const isAlnum = (c: string): boolean => (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');

/** The first string among `keys` of `o` that is not blank. */
function firstString(o: Record<string, unknown>, keys: readonly string[]): string | null {
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
function priorityOf(raw: string): ChecklistPriority | null {
  let w = raw.trim().toLowerCase();
  if (w.endsWith('-have') || w.endsWith(' have')) w = w.slice(0, -5).trim();
  return Object.hasOwn(PRIORITY_WORDS, w) ? (PRIORITY_WORDS[w] as ChecklistPriority) : null;
}

/** `base`, or `base-2`, `base-3`, ... (kept within 64 characters), whichever is not taken. */
function uniqueId(base: string, taken: ReadonlySet<string>): string {
  if (!taken.has(base)) return base;
  for (let k = 2; ; k++) {
    const suffix = `-${k}`;
    const candidate = `${base.slice(0, MAX_ID_CHARS - suffix.length)}${suffix}`;
    if (!taken.has(candidate)) return candidate;
  }
}

/** An id made of the allowed characters (letters, digits, `_ . -`, a letter or digit first), or null. */
function sanitizeId(raw: string): string | null {
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

// ---------------------------------------------------------------------------------------------
// Held-out selection
// ---------------------------------------------------------------------------------------------

/**
 * How many of `n` checklist items are held out from the builder: `clamp(round(0.25 * n), 1, 5)`
 * (half rounds up: 6 → 2, 10 → 3) for n >= 4, and none below 4. With 1 to 3 items, holding one
 * back would hide a third or more of the requirements from the builder, which then builds nearly
 * blind and fails at completion for reasons it could not see; the original loop reserved one item
 * for 2 and 3 as well (spec §2.12), its own design notes said 4 or more, and so does this.
 */
export function heldOutCount(n: number): number {
  if (!Number.isFinite(n) || n < 4) return 0;
  return Math.min(MAX_HELD_OUT, Math.max(1, Math.round(0.25 * Math.floor(n))));
}

/**
 * The ids to hold out: rank ids by SHA-256 of the id (hex, ascending; ties by id), take the first
 * `heldOutCount(items.length)`, and return them in checklist order. Deterministic and independent
 * of the input order, so a replay or a continue-as-new chooses the same items; choose once at run
 * start and keep the result in the state.
 */
export function selectHeldOut(items: readonly ChecklistItem[]): string[] {
  const ids: string[] = [];
  const seen = new Set<string>();
  for (const it of items) {
    if (seen.has(it.id)) continue;
    seen.add(it.id);
    ids.push(it.id);
  }
  const k = heldOutCount(ids.length);
  if (k === 0) return [];
  const ranked = ids
    .map((id) => ({ id, h: sha256Hex(id) }))
    .sort((a, b) => (a.h < b.h ? -1 : a.h > b.h ? 1 : a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
  const chosen = new Set(ranked.slice(0, k).map((r) => r.id));
  return ids.filter((id) => chosen.has(id));
}

// ---------------------------------------------------------------------------------------------
// Finding JSON in untrusted text
// ---------------------------------------------------------------------------------------------

interface JsonCandidate {
  json: string;
  /** Where the candidate starts in the text (later answers win). */
  pos: number;
}

/** Lines of `text` with their offsets; a trailing `\r` is dropped from each line. */
function linesOf(text: string): { line: string; pos: number }[] {
  const out: { line: string; pos: number }[] = [];
  let pos = 0;
  for (const raw of text.split('\n')) {
    out.push({ line: raw.endsWith('\r') ? raw.slice(0, -1) : raw, pos });
    pos += raw.length + 1;
  }
  return out;
}

/** The contents of fenced code blocks tagged `json` (or untagged), last block first. */
function fencedJsonBlocks(text: string): JsonCandidate[] {
  const blocks: JsonCandidate[] = [];
  let open: { marker: string; json: boolean; start: number; body: string[] } | null = null;
  for (const { line, pos } of linesOf(text)) {
    const t = line.trimStart();
    if (open === null) {
      const fence = t.startsWith('```') ? '```' : t.startsWith('~~~') ? '~~~' : null;
      if (fence === null) continue;
      let n = 0;
      while (t[n] === fence[0]) n++;
      const info = t.slice(n).trim().toLowerCase();
      open = {
        marker: (fence[0] as string).repeat(n),
        json: info === '' || info === 'json' || info === 'jsonc' || info === 'json5',
        start: pos + line.length + 1,
        body: [],
      };
    } else if (t.trimEnd().startsWith(open.marker) && t.trimEnd().replaceAll(open.marker[0] as string, '') === '') {
      if (open.json) blocks.push({ json: open.body.join('\n'), pos: open.start });
      open = null;
    } else open.body.push(line);
  }
  if (open?.json) blocks.push({ json: open.body.join('\n'), pos: open.start }); // an answer cut off mid-block
  return blocks.reverse();
}

/**
 * Balanced `[...]`/`{...}` spans that start at the top level or as the first thing on a line,
 * last-ending first (so an outer array comes before its elements). One pass, string-aware; a
 * string never crosses a newline (JSON strings cannot), so a stray quote in prose spoils one line
 * only; a mismatched closer drops the open brackets, and nesting deeper than 64 drops the oldest
 * half of them (a checklist nests 3 deep; `[[[[...` junk before the answer must not swallow it).
 */
function bracketSpans(text: string): JsonCandidate[] {
  const spans: { start: number; end: number }[] = [];
  const stack: { pos: number; close: string; eligible: boolean }[] = [];
  let inString = false;
  let escaped = false;
  let atLineStart = true;
  for (let i = 0; i < text.length; i++) {
    const c = text[i] as string;
    if (c === '\n') {
      inString = false;
      escaped = false;
      atLineStart = true;
      continue;
    }
    if (inString) {
      if (escaped) escaped = false;
      else if (c === '\\') escaped = true;
      else if (c === '"') inString = false;
      continue;
    }
    if (c === '"') inString = true;
    else if (c === '[' || c === '{') {
      if (stack.length >= MAX_DEPTH) stack.splice(0, MAX_DEPTH / 2); // keep the newest half (amortized linear)
      stack.push({ pos: i, close: c === '[' ? ']' : '}', eligible: stack.length === 0 || atLineStart });
    } else if (c === ']' || c === '}') {
      const top = stack[stack.length - 1];
      if (top !== undefined) {
        if (top.close === c) {
          stack.pop();
          if (top.eligible) spans.push({ start: top.pos, end: i + 1 });
        } else stack.length = 0;
      }
    }
    if (c !== ' ' && c !== '\t' && c !== '\r') atLineStart = false;
  }
  const out: JsonCandidate[] = [];
  for (let k = spans.length - 1; k >= 0 && out.length < MAX_PARSE_ATTEMPTS; k--) {
    const s = spans[k] as { start: number; end: number };
    out.push({ json: text.slice(s.start, s.end), pos: s.start });
  }
  return out;
}

/** Parsed JSON values from the text: fenced json blocks first (last first), then bracket spans. */
function* jsonValues(text: string): Generator<{ value: unknown; pos: number }> {
  let attempts = 0;
  for (const candidate of [...fencedJsonBlocks(text).slice(0, 8), ...bracketSpans(text)]) {
    if (attempts++ >= MAX_PARSE_ATTEMPTS) return;
    const body = candidate.json.trim();
    if (!body.startsWith('[') && !body.startsWith('{')) continue;
    try {
      yield { value: JSON.parse(body) as unknown, pos: candidate.pos };
    } catch {
      // not JSON: try the next candidate
    }
  }
}

/** The entries of a checklist container: an array, or `{items|checklist|requirements: [...]}`. */
function entriesOf(v: unknown, keys: readonly string[]): unknown[] | null {
  if (Array.isArray(v)) return v;
  if (isRecord(v)) for (const k of keys) if (Array.isArray(v[k])) return v[k] as unknown[];
  return null;
}

// ---------------------------------------------------------------------------------------------
// Reading checklist entries
// ---------------------------------------------------------------------------------------------

const TITLE_KEYS = ['title', 'name', 'requirement', 'description', 'text'] as const;
const VERIFY_KEYS = ['verify', 'how_to_verify', 'verification', 'howToVerify'] as const;
const PRIORITY_KEYS = ['priority', 'severity'] as const;
const CONTAINER_KEYS = ['items', 'checklist', 'requirements'] as const;

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
function readEntry(x: unknown): Entry | string {
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
function finishItems(
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

function validated(items: ChecklistItem[], dropped: string[], where: string): ChecklistParseResult {
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

// ---------------------------------------------------------------------------------------------
// A person's checklist file
// ---------------------------------------------------------------------------------------------

/** The 1-based line of a JSON.parse error, from its message (`line N` or `position N`), or null. */
function jsonErrorLine(message: string, text: string): number | null {
  const byLine = /\bline (\d{1,9})/.exec(message);
  if (byLine) return Number(byLine[1]);
  const byPos = /\bposition (\d{1,9})/.exec(message);
  if (!byPos) return null;
  const p = Math.min(Number(byPos[1]), text.length);
  let line = 1;
  for (let i = 0; i < p; i++) if (text.charCodeAt(i) === 10) line++;
  return line;
}

const PRIORITY_HINT = 'use critical, high, medium or low (or must, should, could)';

function parseJsonFile(text: string, fileName: string): ChecklistParseResult {
  let value: unknown;
  try {
    value = JSON.parse(text) as unknown;
  } catch (e) {
    const message = e instanceof Error ? e.message : String(e);
    const line = jsonErrorLine(message, text);
    return { ok: false, error: `${fileName}${line === null ? '' : `:${line}`}: not valid JSON (${oneLine(message, 200)})` };
  }
  const entries = entriesOf(value, CONTAINER_KEYS);
  if (entries === null) return { ok: false, error: `${fileName}: expected a JSON array of items or {"items": [...]}` };
  if (entries.length === 0) return { ok: false, error: `${fileName}: the checklist is empty` };
  if (entries.length > MAX_CHECKLIST_ITEMS)
    return { ok: false, error: `${fileName}: ${entries.length} items; a checklist has at most ${MAX_CHECKLIST_ITEMS}` };
  const read: { id: string | null; title: string; priority: ChecklistPriority; verify: string }[] = [];
  const firstSeen = new Map<string, number>();
  for (let i = 0; i < entries.length; i++) {
    const where = `${fileName}: entry ${i + 1}`;
    const e = readEntry(entries[i]);
    if (typeof e === 'string') return { ok: false, error: `${where}: ${e} (each item needs a "title")` };
    const id = e.id?.trim() ?? null;
    if (id !== null) {
      if (id.length > MAX_ID_CHARS || !ID_RE.test(id))
        return {
          ok: false,
          error: `${where}: id ${JSON.stringify(id.slice(0, 80))} is not valid: ids are letters, digits, _, . and - (e.g. REQ-1)`,
        };
      const first = firstSeen.get(id);
      if (first !== undefined) return { ok: false, error: `${where}: duplicate id ${id} (also entry ${first})` };
      firstSeen.set(id, i + 1);
    }
    const priority = e.priority === null ? 'medium' : priorityOf(e.priority);
    if (priority === null)
      return { ok: false, error: `${where}: unknown priority ${JSON.stringify(e.priority?.slice(0, 40))}; ${PRIORITY_HINT}` };
    read.push({ id, title: e.title, priority, verify: e.verify });
  }
  return validated(finishItems(read), [], fileName);
}

/** `- `, `* `, `+ `, `1. ` or `1) ` at the start of `line` (indent below 2): the text after it, else null. */
function listItemText(line: string): string | null {
  let i = 0;
  while (i < line.length && line[i] === ' ') i++;
  if (i >= 2) return null; // nested bullets are details of the item above
  const c = line[i];
  if (c === '-' || c === '*' || c === '+') i++;
  else {
    const d = i;
    while (i < line.length && i - d < 5 && line[i] !== undefined && (line[i] as string) >= '0' && (line[i] as string) <= '9') i++;
    if (i === d || (line[i] !== '.' && line[i] !== ')')) return null;
    i++;
  }
  if (line[i] !== ' ' && line[i] !== '\t') return null;
  return line.slice(i).trim();
}

const ID_TOKEN_RE = /^[A-Za-z]{1,20}[-_.]?\d/;

/** The id-like token at the start of `s` (e.g. `REQ-1`, `**AUTH-2**`): [id, rest], else null. */
function leadingId(s: string): [string, string] | null {
  let end = 0;
  while (end < s.length && end < 80 && s[end] !== ' ' && s[end] !== '\t' && s[end] !== ':') end++;
  const token = s
    .slice(0, end)
    .replace(/^[*_`]+/, '')
    .replace(/[*_`]+$/, '');
  if (token.length > MAX_ID_CHARS || !ID_TOKEN_RE.test(token) || !ID_RE.test(token)) return null;
  const rest = s.slice(end).replace(/^[*_`]+/, '');
  const next = rest.trimStart()[0];
  // An id is followed by a colon, a priority tag or a dash; "- v2 API works" is a title.
  if (next !== ':' && next !== '(' && next !== '[' && next !== '-' && next !== '—' && next !== '–') return null;
  return [token, rest.trimStart()];
}

/** A `(word)` or `[word]` tag at the start of `s`: [word, rest], else null. */
function leadingTag(s: string): [string, string] | null {
  const open = s[0];
  if (open !== '(' && open !== '[') return null;
  const close = s.indexOf(open === '(' ? ')' : ']');
  if (close < 0 || close > 30) return null;
  return [s.slice(1, close).trim(), s.slice(close + 1).trimStart()];
}

/** The first ` — `, ` – ` or ` -- ` splits a title from how to verify it. */
function splitVerify(s: string): [string, string] {
  let at = -1;
  let len = 0;
  for (const sep of [' — ', ' – ', ' -- ']) {
    const p = s.indexOf(sep);
    if (p >= 0 && (at < 0 || p < at)) {
      at = p;
      len = sep.length;
    }
  }
  return at < 0 ? [s, ''] : [s.slice(0, at), s.slice(at + len)];
}

function parseMarkdownFile(text: string, fileName: string): ChecklistParseResult {
  const read: { id: string | null; title: string; priority: ChecklistPriority; verify: string }[] = [];
  const firstSeen = new Map<string, number>();
  let fence: string | null = null;
  const lines = linesOf(text);
  for (let n = 0; n < lines.length; n++) {
    const line = (lines[n] as { line: string }).line;
    const where = `${fileName}:${n + 1}`;
    const t = line.trimStart();
    if (fence !== null) {
      if (t.startsWith(fence)) fence = null;
      continue;
    }
    if (t.startsWith('```') || t.startsWith('~~~')) {
      fence = t.slice(0, 3);
      continue;
    }
    let rest = listItemText(line);
    if (rest === null) continue;
    if (rest.startsWith('[ ]') || rest.startsWith('[x]') || rest.startsWith('[X]')) rest = rest.slice(3).trimStart();
    let id: string | null = null;
    let priority: ChecklistPriority | null = null;
    for (let step = 0; step < 4; step++) {
      const tag = leadingTag(rest);
      if (tag !== null) {
        const p = priorityOf(tag[0]);
        if (p !== null) {
          priority = p;
          rest = tag[1];
          continue;
        }
        if (id !== null && tag[1].startsWith(':'))
          return { ok: false, error: `${where}: unknown priority ${JSON.stringify(tag[0])}; ${PRIORITY_HINT}` };
        break;
      }
      if (id === null) {
        const lead = leadingId(rest);
        if (lead !== null) {
          [id, rest] = lead;
          continue;
        }
      }
      break;
    }
    if (id !== null || priority !== null) {
      let i = 0;
      while (i < rest.length && ' \t:-—–'.includes(rest[i] as string)) i++;
      rest = rest.slice(i);
    }
    const [title, verify] = splitVerify(rest);
    if (title.trim() === '') return { ok: false, error: `${where}: checklist item without a title` };
    if (id !== null) {
      const first = firstSeen.get(id);
      if (first !== undefined) return { ok: false, error: `${where}: duplicate id ${id} (first on line ${first})` };
      firstSeen.set(id, n + 1);
    }
    if (read.length >= MAX_CHECKLIST_ITEMS)
      return { ok: false, error: `${where}: more than ${MAX_CHECKLIST_ITEMS} checklist items (the limit)` };
    read.push({ id, title, priority: priority ?? 'medium', verify });
  }
  if (read.length === 0) {
    return {
      ok: false,
      error: `${fileName}: no checklist items found (expected JSON, or Markdown list lines like "- [ ] REQ-1 (critical): title — how to verify")`,
    };
  }
  return validated(finishItems(read), [], fileName);
}

/**
 * Reads a checklist a person supplied: JSON (an array of items or `{"items": [...]}`) when the
 * file starts with `[` or `{`, else Markdown list lines: `- [ ] REQ-1 (critical): title — how to
 * verify`, `- [high] title`, or plain `- title` (id `REQ-<n>`, priority medium). Nested bullets,
 * headings, prose and code blocks are skipped. A person's file is not repaired: a bad line, an
 * invalid or repeated id, an unknown priority or more than 60 items is an error naming the file
 * and the line (JSON: the line of a syntax error, else the entry number).
 */
export function parseChecklistFile(text: string, fileName: string): ChecklistParseResult {
  if (text.length > MAX_CHECKLIST_TEXT_CHARS)
    return { ok: false, error: `${fileName}: larger than ${MAX_CHECKLIST_TEXT_CHARS} characters` };
  const body = text.startsWith('\ufeff') ? text.slice(1) : text;
  const first = body.trimStart()[0];
  return first === '[' || first === '{' ? parseJsonFile(body, fileName) : parseMarkdownFile(body, fileName);
}

// ---------------------------------------------------------------------------------------------
// Verifier answers
// ---------------------------------------------------------------------------------------------

export interface VerifierVerdict {
  status: 'passing' | 'failing';
  evidence: string;
}

const STATUS_WORDS: Readonly<Record<string, 'passing' | 'failing'>> = {
  pass: 'passing',
  passed: 'passing',
  passing: 'passing',
  ok: 'passing',
  fail: 'failing',
  failed: 'failing',
  failing: 'failing',
};
const STATUS_SYMBOLS: Readonly<Record<string, 'passing' | 'failing'>> = {
  '✓': 'passing',
  '✔': 'passing',
  '✅': 'passing',
  '✗': 'failing',
  '✘': 'failing',
  '❌': 'failing',
};

function statusOf(v: unknown): 'passing' | 'failing' | null {
  if (v === true) return 'passing';
  if (v === false) return 'failing';
  if (typeof v !== 'string') return null;
  const w = v.trim();
  const lower = w.toLowerCase();
  if (Object.hasOwn(STATUS_WORDS, lower)) return STATUS_WORDS[lower] as 'passing' | 'failing';
  return Object.hasOwn(STATUS_SYMBOLS, w) ? (STATUS_SYMBOLS[w] as 'passing' | 'failing') : null;
}

const skipChars = (s: string, i: number, chars: string): number => {
  while (i < s.length && chars.includes(s[i] as string)) i++;
  return i;
};

/** One verdict line: `ITEM <id>: PASS - evidence` (decorations and variants allowed), else null. */
function verdictLine(line: string, resolve: (id: string) => string | null): { id: string; verdict: VerifierVerdict } | null {
  let i = skipChars(line, 0, ' \t*_>#-•');
  const d = i;
  while (i < line.length && i - d < 4 && (line[i] as string) >= '0' && (line[i] as string) <= '9') i++;
  if (i > d && (line[i] === '.' || line[i] === ')')) i = skipChars(line, i + 1, ' \t*_');
  else i = d;
  let prefixed = false;
  if (line.slice(i, i + 4).toUpperCase() === 'ITEM' && ' \t*_:`'.includes(line[i + 4] ?? '\n')) {
    prefixed = true;
    i = skipChars(line, i + 4, ' \t*_`');
  }
  const idStart = i;
  while (i < line.length && i - idStart < 80 && /[A-Za-z0-9_.-]/.test(line[i] as string)) i++;
  let token = line.slice(idStart, i);
  let id = resolve(token);
  while (id === null && token.endsWith('.')) {
    token = token.slice(0, -1);
    id = resolve(token);
  }
  if (id === null) return null;
  const afterId = idStart + token.length;
  i = skipChars(line, afterId, ' \t*_`:-—–=');
  // Without the ITEM prefix a colon must follow the id: "REQ-1 failing tests were fixed" is prose.
  if (!prefixed && !line.slice(afterId, i).includes(':')) return null;
  let status: 'passing' | 'failing' | null = null;
  const symbol = line[i] ?? '';
  if (Object.hasOwn(STATUS_SYMBOLS, symbol)) {
    status = STATUS_SYMBOLS[symbol] as 'passing' | 'failing';
    i++;
    if (line[i] === '\ufe0f') i++; // emoji presentation selector
  } else {
    const w = i;
    while (i < line.length && /[A-Za-z]/.test(line[i] as string)) i++;
    status = statusOf(line.slice(w, i));
  }
  if (status === null) return null;
  i = skipChars(line, i, ' \t*_');
  if ('-—–:'.includes(line[i] ?? '\n')) i++;
  return { id, verdict: { status, evidence: oneLine(line.slice(i, i + MAX_EVIDENCE_CHARS * 4), MAX_EVIDENCE_CHARS) } };
}

/**
 * Reads the verifier's answer (untrusted): lines `ITEM <id>: PASS - evidence` (also `PASSED`,
 * `PASSING`, `OK`, `FAIL`, `FAILED`, `FAILING`, `✓`, `✗`; separators `-`, `—`, `:`; markdown
 * decoration; `ITEM` may be left out), or a JSON array `[{id, status, evidence}]` (also wrapped in
 * `{"results": [...]}`). Ids are matched exactly, else case-insensitively; unknown ids are ignored;
 * when an id is answered twice, the later answer in the text wins. Evidence is one line of at most
 * 300 characters. Items without an answer are absent from the result.
 */
export function parseVerifierOutput(text: string, ids: readonly string[]): Record<string, VerifierVerdict> {
  const input = text.length > MAX_CHECKLIST_TEXT_CHARS ? text.slice(text.length - MAX_CHECKLIST_TEXT_CHARS) : text;
  const exact = new Set(ids);
  const folded = new Map<string, string | null>();
  for (const id of ids) {
    const k = id.toLowerCase();
    folded.set(k, folded.has(k) && folded.get(k) !== id ? null : id); // ambiguous when two ids fold together
  }
  const resolve = (token: string): string | null =>
    token === '' ? null : exact.has(token) ? token : (folded.get(token.toLowerCase()) ?? null);

  const answers: { pos: number; id: string; verdict: VerifierVerdict }[] = [];
  for (const { value, pos } of jsonValues(input)) {
    const entries = entriesOf(value, ['results', 'items', 'verdicts', 'checklist']);
    if (entries === null) continue;
    const found: { pos: number; id: string; verdict: VerifierVerdict }[] = [];
    for (const e of entries.slice(0, MAX_ENTRIES)) {
      if (!isRecord(e)) continue;
      const rawId = e['id'];
      const id = typeof rawId === 'string' ? resolve(rawId.trim()) : null;
      const status = statusOf(e['status'] ?? e['verdict'] ?? e['result']);
      if (id === null || status === null) continue;
      const ev = e['evidence'] ?? e['reason'] ?? e['note'];
      found.push({ pos, id, verdict: { status, evidence: typeof ev === 'string' ? oneLine(ev, MAX_EVIDENCE_CHARS) : '' } });
    }
    if (found.length > 0) {
      answers.push(...found);
      break;
    }
  }
  for (const { line, pos } of linesOf(input)) {
    const v = verdictLine(line, resolve);
    if (v !== null) answers.push({ pos, ...v });
  }
  answers.sort((a, b) => a.pos - b.pos); // stable: within one JSON array, later entries stay later
  const out = new Map<string, VerifierVerdict>();
  for (const a of answers) out.set(a.id, a.verdict);
  return Object.fromEntries(out);
}

// ---------------------------------------------------------------------------------------------
// State: blocking, waivers, views
// ---------------------------------------------------------------------------------------------

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
      const line = `critical item ${it.id} is failing: ${oneLine(it.title, MAX_TITLE_CHARS)}${evidence === '' ? '' : ` (${oneLine(evidence, MAX_EVIDENCE_CHARS)})`}`;
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
      error: `no checklist item ${JSON.stringify(item.trim().slice(0, 80))}: the checklist has ${n} item${n === 1 ? '' : 's'} (use an id from the checklist status, or held-out-N for a held-out item)`,
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

// ---------------------------------------------------------------------------------------------
// Prompts
// ---------------------------------------------------------------------------------------------

/** Asks an agent to read the PRD and answer with only a JSON array of verifiable requirements. */
export function checklistExtractionPrompt(opts: { prdPath: string; maxItems: number }): string {
  const max = Math.min(MAX_CHECKLIST_ITEMS, Math.max(1, Math.floor(Number.isFinite(opts.maxItems) ? opts.maxItems : MAX_CHECKLIST_ITEMS)));
  return [
    `Read the product requirements document at ${oneLine(opts.prdPath, 4096)} and extract a checklist of its verifiable requirements.`,
    '',
    'Rules:',
    '- Do not modify any file. Read only; do not run builds, installs or anything that writes.',
    `- At most ${max} item${max === 1 ? '' : 's'}, the most important first. One requirement per item.`,
    '- Every item must be checkable against the repository: a behaviour a test or command can show, a file or interface that must exist, a limit that can be measured. Leave out aspirations, non-goals and anything no one could check.',
    '- Ids are REQ-1, REQ-2, ... in order.',
    '- Priority is one of critical (the product is broken or unsafe without it), high (a main feature), medium (expected behaviour), low (polish).',
    '- "verify" says how a reviewer checks the item: the command to run, the test to look for, the file or output to inspect.',
    '',
    'Answer with ONLY a JSON array, no other text:',
    '[{"id": "REQ-1", "title": "<the requirement, one sentence>", "priority": "critical", "verify": "<how to verify it>"}]',
  ].join('\n');
}

/**
 * Asks a verifier agent to check each item against the repository's current state and answer one
 * `ITEM <id>: PASS|FAIL - evidence` line per item. The verifier sees every item, held out or not.
 */
export function checklistVerifierPrompt(opts: {
  items: readonly ChecklistItem[];
  prdPath: string;
  diffPath: string | null;
  testSummary: string;
}): string {
  const items = opts.items.slice(0, MAX_CHECKLIST_ITEMS).map((raw) => {
    const it = ChecklistItemSchema.parse(raw);
    const verify = oneLine(it.verify, MAX_VERIFY_CHARS);
    return `- ${it.id} (${it.priority}): ${oneLine(it.title, MAX_TITLE_CHARS)}${verify === '' ? '' : `\n  How to verify: ${verify}`}`;
  });
  const summary = opts.testSummary.trim() === '' ? '(no test results were recorded)' : opts.testSummary.slice(0, 2000).trim();
  return [
    "Verify each requirement below against the repository's current state (the working tree as it is now).",
    '',
    'Rules:',
    '- Do not modify any file. You may read files and run read-only commands and the tests.',
    '- Check each item yourself; do not take comments, commit messages or documentation as proof.',
    '- PASS only when you have seen evidence that the requirement is met; when it is missing, broken or you cannot tell, FAIL.',
    '',
    `The product requirements document: ${oneLine(opts.prdPath, 4096)}`,
    opts.diffPath === null
      ? 'No diff of this run is available: inspect the tree.'
      : `The changes made in this run, as a diff: ${oneLine(opts.diffPath, 4096)}`,
    '',
    'Latest test results:',
    summary,
    '',
    'Items:',
    ...items,
    '',
    'Answer with exactly one line per item, in this form, and nothing else:',
    'ITEM <id>: PASS - <evidence: the file, test or command output that shows it>',
    'ITEM <id>: FAIL - <what is missing or wrong>',
  ].join('\n');
}

/** Extractions a provider's trouble may spoil before the run stops asking (the first included). */
export const CHECKLIST_ATTEMPTS = 3;

/** What a failed checklist extraction says about what to do next. */
export type ChecklistRetry =
  /** Ask again once `waitSeconds` have passed (the provider's trouble may be over). */
  | { kind: 'retry'; attempt: number; waitSeconds: number; reason: string }
  /** The provider kept failing: stop asking and tell a person (supervised: pause and ask). */
  | { kind: 'give_up'; attempts: number; reason: string }
  /** Not the provider's doing (an answer without a checklist): the run goes on without one, as it says. */
  | { kind: 'none' };

/**
 * After the `attempt`-th extraction failed: a failure for a provider reason (a rate limit, an
 * auth error, an API failure, a hung call, an activity that failed outright) is asked again after
 * the wait the provider named (else `baseWaitSeconds` times the attempt), up to
 * `CHECKLIST_ATTEMPTS`; then a person is told. Any other failure is final at once.
 */
export function afterChecklistFailure(f: {
  attempt: number;
  providerReason: string | null;
  rateLimitWaitSeconds: number | null;
  baseWaitSeconds: number;
}): ChecklistRetry {
  if (f.providerReason === null) return { kind: 'none' };
  if (f.attempt >= CHECKLIST_ATTEMPTS) return { kind: 'give_up', attempts: f.attempt, reason: f.providerReason };
  const waitSeconds = Math.max(1, f.rateLimitWaitSeconds ?? f.baseWaitSeconds * f.attempt);
  return { kind: 'retry', attempt: f.attempt, waitSeconds, reason: f.providerReason };
}
