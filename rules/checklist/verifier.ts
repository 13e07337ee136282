/**
 * The checklist verifier's answer (`parseVerifierOutput`): `ITEM <id>: PASS|FAIL - evidence`
 * lines or a JSON array, held-out items named by their labels, the last answer for an item kept.
 *
 * Sandbox-safe: pure functions, no Node imports.
 */
import { MAX_CHECKLIST_TEXT_CHARS, MAX_ENTRIES, MAX_EVIDENCE_CHARS, isRecord, oneLine } from './common.js';
import { entriesOf, jsonValues, linesOf } from './json-scan.js';

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
