/**
 * Finding JSON in untrusted text in linear time: fenced blocks and bracket-matched spans, each
 * tried with JSON.parse a bounded number of times, the input read line by line.
 *
 * Sandbox-safe: pure functions, no Node imports.
 */
import { MAX_DEPTH, MAX_PARSE_ATTEMPTS, isRecord } from './common.js';

interface JsonCandidate {
  json: string;
  /** Where the candidate starts in the text (later answers win). */
  pos: number;
}

/** Lines of `text` with their offsets; a trailing `\r` is dropped from each line. */
export function linesOf(text: string): { line: string; pos: number }[] {
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
export function* jsonValues(text: string): Generator<{ value: unknown; pos: number }> {
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
export function entriesOf(v: unknown, keys: readonly string[]): unknown[] | null {
  if (Array.isArray(v)) return v;
  if (isRecord(v)) for (const k of keys) if (Array.isArray(v[k])) return v[k] as unknown[];
  return null;
}
