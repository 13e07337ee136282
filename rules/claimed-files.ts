/**
 * What a completion claim says it changed, held to the diff since the run's start (issue "done
 * means done": a claim that names files the run never touched is refused, "claimed changes to X
 * not in the diff").
 *
 * The rule, chosen against false positives (a claim may name files it only read, ran or was told
 * about):
 *
 * - a file counts as claimed only in a **change phrase**: a change verb (`changed`, `modified`,
 *   `fixed`, `updated`, `added`, `edited`, `rewrote`, `created`, `patched`, `refactored`,
 *   `implemented`, `corrected`; `changes to`) followed, within six words and the same sentence, by
 *   the path, or a list of paths joined by commas, `and`, `&` or list bullets after a colon
 *   (`Files changed: a.py, b.py`). `read`, `ran`, `saw`, `see`, `per`, `as`, `like`, `because`,
 *   `according`, `mentioned`, `from`, `after`, `while`, `by`, `via` or `using` between the verb and
 *   the path end the phrase ("fixed the bug after reading tests/test_a.py" claims nothing);
 * - a phrase whose verb follows a negation within three words (`not`, `n't`, `never`, `no`,
 *   `without`: "did not modify tests/test_a.py") claims nothing;
 * - a path is a token of path characters with a known source, config or document extension
 *   (`src/slug.py`, `package.json`, `README.md`), possibly in backticks or quotes, with a
 *   `:line` suffix dropped; `Foo.bar`, `os.path`, URLs, absolute paths, `..` and version numbers
 *   are not paths; Vigil's own files (`.vigil/…`, `CONTINUITY.md`, `learnings.md`) are never in
 *   the diff and never claimed;
 * - a claimed path is in the diff when a changed path equals it or ends with `/<it>` (a claim may
 *   give a base name: `slug.py` for `src/slug.py`).
 *
 * The `vigil_task_complete` evidence lines and summary, and the builder's final answer, are read
 * alike. Pure functions: no I/O, imported by the workflow and the agent activity.
 */

/** Extensions a claimed path may have (lower case). */
export const PATH_EXTENSIONS: ReadonlySet<string> = new Set(
  (
    'py pyi ipynb js mjs cjs jsx ts mts cts tsx vue svelte go rs java kt kts scala rb php c h cc cpp cxx hpp hh cs fs swift m mm ' +
    'dart lua pl pm r jl ex exs erl hs ml clj sh bash zsh ps1 sql graphql proto ' +
    'json jsonc yaml yml toml ini cfg conf env lock xml html htm css scss sass less md mdx rst txt csv tsv gradle mk cmake tf'
  ).split(' '),
);

const VERB =
  /\b(?:changed|changes\s+to|modified|fixed|updated|added|edited|rewrote|rewritten|created|patched|refactored|implemented|corrected)\b/gi;
const NEGATION = /\b(?:not|never|no|without|nothing)\b|n't\b/i;
const STOP_WORDS = new Set([
  'read',
  'reading',
  'ran',
  'running',
  'run',
  'saw',
  'see',
  'seen',
  'per',
  'as',
  'like',
  'because',
  'according',
  'mentioned',
  'from',
  'after',
  'while',
  'by',
  'via',
  'using',
  'than',
]);
const JOINERS = new Set(['and', '&', 'also', '-', '*', '•']);
const WORDS_BEFORE_PATH = 6;
const MAX_CLAIMED = 20;
const MAX_PATH = 300;
const VIGIL_OWN = new Set(['CONTINUITY.md', 'learnings.md']);

/** The path a token names, or null: quotes, backticks, brackets and a `:line` suffix stripped. */
export function pathOf(token: string): string | null {
  let t = token.replace(/^[`'"([{<*_]+/, '').replace(/[`'")\]}>*_,;:!?]+$/, '');
  t = t.replace(/\.$/, '').replace(/:\d+(?::\d+)?$/, '');
  if (t.startsWith('./')) t = t.slice(2);
  if (t.length === 0 || t.length > MAX_PATH || t.startsWith('/') || t.includes('://')) return null;
  if (!/^[\w.@+-]+(?:\/[\w.@+-]+)*$/.test(t) || t.split('/').some((p) => p === '..' || p === '.')) return null;
  const base = t.split('/').pop() ?? t;
  const dot = base.lastIndexOf('.');
  if (dot <= 0 && !base.startsWith('.')) return null;
  const ext = base.slice(dot + 1).toLowerCase();
  if (!PATH_EXTENSIONS.has(ext) || /^\d+(?:\.\d+)+$/.test(base)) return null;
  if (t.startsWith('.vigil/') || t === '.vigil' || VIGIL_OWN.has(base)) return null;
  return t;
}

/** The end of the sentence that starts at `from`: a full stop, `!` or `?` before a space or the end, a `;`, or a line that is not a list item. */
function sentenceEnd(text: string, from: number): number {
  const re = /[.!?](?=\s|$)|;|\n(?!\s*(?:[-*•]|\d+[.)])\s)/g;
  re.lastIndex = from;
  const m = re.exec(text);
  return m ? m.index : text.length;
}

/** The paths one change phrase names (the text after its verb, up to the sentence's end). */
function phrasePaths(rest: string): string[] {
  const tokens = rest.split(/\s+/).filter(Boolean);
  const out: string[] = [];
  let words = 0;
  let listing = false;
  for (const raw of tokens) {
    const p = pathOf(raw);
    if (p !== null) {
      out.push(p);
      listing = true;
      continue;
    }
    const w = raw.toLowerCase().replace(/[^\w&*•-]/g, '');
    if (listing) {
      // A list goes on through its joiners; any other word ends it.
      if (JOINERS.has(w) || w === '' || /^[,:]+$/.test(raw)) continue;
      break;
    }
    if (STOP_WORDS.has(w)) break;
    if (w !== '' && ++words > WORDS_BEFORE_PATH) break;
  }
  return out;
}

/** The paths a claim's texts say were changed, in order, each once (at most 20). */
export function claimedPaths(texts: readonly string[]): string[] {
  const found: string[] = [];
  for (const text of texts) {
    for (const m of text.matchAll(VERB)) {
      const start = (m.index ?? 0) + m[0].length;
      const before = text
        .slice(Math.max(0, (m.index ?? 0) - 40), m.index ?? 0)
        .split(/\s+/)
        .slice(-3)
        .join(' ');
      if (NEGATION.test(before)) continue;
      for (const p of phrasePaths(text.slice(start, sentenceEnd(text, start)))) if (!found.includes(p)) found.push(p);
      if (found.length >= MAX_CLAIMED) return found.slice(0, MAX_CLAIMED);
    }
  }
  return found;
}

/** The texts of a `vigil_task_complete` claim file (its summary and evidence lines), or [] for any other body. */
export function claimFileTexts(body: string): string[] {
  try {
    const v = JSON.parse(body) as { summary?: unknown; evidence?: unknown };
    const texts = typeof v.summary === 'string' ? [v.summary] : [];
    if (Array.isArray(v.evidence)) for (const e of v.evidence) if (typeof e === 'string') texts.push(e);
    return texts;
  } catch {
    return [body];
  }
}

/** The claimed paths no changed path matches (equal, or a changed path ending with `/<claimed>`). */
export function claimsNotInDiff(claimed: readonly string[], changed: readonly string[]): string[] {
  return claimed.filter((c) => !changed.some((p) => p === c || p.endsWith(`/${c}`)));
}

/** The refusal's reason: `claimed changes to a.py, b.py not in the diff`. */
export function describeFalseClaim(missing: readonly string[]): string {
  const shown = missing.slice(0, 5).join(', ');
  return `claimed changes to ${shown}${missing.length > 5 ? ` and ${missing.length - 5} more` : ''} not in the diff since the run started`;
}
