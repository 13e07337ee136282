/**
 * A person's checklist file (`vigil start --checklist FILE`, `parseChecklistFile`): JSON, or a
 * Markdown list with optional ids, priority tags and "verify:" parts; errors name the line.
 *
 * Sandbox-safe: pure functions, no Node imports.
 */
import { MAX_CHECKLIST_ITEMS } from '../../schemas/gates.js';
import { type ChecklistPriority, ID_RE, MAX_CHECKLIST_TEXT_CHARS, MAX_ID_CHARS, oneLine, priorityOf } from './common.js';
import { CONTAINER_KEYS, type ChecklistParseResult, finishItems, readEntry, validated } from './extraction.js';
import { entriesOf, linesOf } from './json-scan.js';

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

/** `[ ]`, `[x]` or `[X]` at the start of a list item's text: a task-list box. */
const isBox = (rest: string): boolean => rest.startsWith('[ ]') || rest.startsWith('[x]') || rest.startsWith('[X]');

/**
 * The items of Markdown list lines, or null when there is none. `tasksOnly`: only task-list lines
 * (`- [ ] …`) are items, every other list line is prose (an issue).
 */
function parseMarkdownFile(text: string, fileName: string, tasksOnly = false): ChecklistParseResult | null {
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
    if (isBox(rest)) rest = rest.slice(3).trimStart();
    else if (tasksOnly) continue;
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
  if (read.length === 0) return null;
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
  if (first === '[' || first === '{') return parseJsonFile(body, fileName);
  return (
    parseMarkdownFile(body, fileName) ?? {
      ok: false,
      error: `${fileName}: no checklist items found (expected JSON, or Markdown list lines like "- [ ] REQ-1 (critical): title — how to verify")`,
    }
  );
}

/**
 * The checklist of an issue (`vigil start --issue FILE`): its task-list lines (`- [ ] …`, `- [x] …`,
 * read as `parseChecklistFile` reads Markdown lines: ids, priority tags and "— how to verify"
 * included), every other line skipped (prose, plain bullets, headings, code blocks, nested
 * boxes). A ticked box stays a requirement: the run verifies that it holds. Null when the issue
 * has no task list at all (its checklist is then extracted from its text, as a PRD's is).
 */
export function parseIssueChecklist(text: string, fileName: string): ChecklistParseResult | null {
  if (text.length > MAX_CHECKLIST_TEXT_CHARS)
    return { ok: false, error: `${fileName}: larger than ${MAX_CHECKLIST_TEXT_CHARS} characters` };
  const body = text.startsWith('\ufeff') ? text.slice(1) : text;
  return parseMarkdownFile(body, fileName, true);
}
