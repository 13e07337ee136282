/**
 * Judgement on the memory that outlives a run (docs/memory.md, Judgement): after the
 * deterministic consolidation, one agent call (role `memory`) phrases a one-line lesson for each
 * pattern or anti-pattern a run made or changed, and merges near-duplicates. These are its rules:
 * which items it is shown (the run's own, and the items whose keywords overlap theirs), whether a
 * call is worth making at all, its prompt, and how its answer is read. An answer that is not
 * exactly the documented JSON, or that names an item it was not shown, changes nothing.
 *
 * Pure: no clock, randomness, environment or I/O (activities/memory-judge.ts reads the rows,
 * calls the agent and writes what these return).
 */
import { MemoryJudgeAnswerSchema } from '../schemas/lasting-memory.js';
import { clean } from './lasting-memory.js';

/** A pattern or anti-pattern as the judge sees it. */
export interface JudgeItem {
  id: number;
  repo: string | null;
  kind: 'pattern' | 'anti_pattern';
  title: string;
  body: string;
  keywords: readonly string[];
  lesson: string | null;
}

export const JUDGE_LIMITS = {
  /** Items in one call, at most (the run's own first). */
  items: 20,
  /** Near-duplicates shown per item of the run, at most. */
  nearPerItem: 3,
  /** Characters of an item's body in the prompt. */
  bodyChars: 600,
} as const;

/** How much two items' keywords overlap: the shared words over the smaller set (0 to 1). */
export function keywordOverlap(a: readonly string[], b: readonly string[]): number {
  if (a.length === 0 || b.length === 0) return 0;
  const set = new Set(a);
  const shared = new Set(b.filter((w) => set.has(w))).size;
  return shared / Math.min(set.size, new Set(b).size);
}

/** Near-duplicates: the same kind, in the same scope, sharing at least two keywords and half of the smaller item's. */
export function nearDuplicate(a: JudgeItem, b: JudgeItem): boolean {
  if (a.id === b.id || a.kind !== b.kind || a.repo !== b.repo) return false;
  const set = new Set(a.keywords);
  const shared = new Set(b.keywords.filter((w) => set.has(w))).size;
  return shared >= 2 && keywordOverlap(a.keywords, b.keywords) >= 0.5;
}

export interface JudgeSelection {
  /** What the call is shown: the run's items, then their near-duplicates. */
  items: JudgeItem[];
  /** Pairs of near-duplicates among them (the run's item first). */
  pairs: [number, number][];
  /** A call is made only when there is something to judge: an item of the run without a lesson, or a near-duplicate. */
  worthACall: boolean;
}

/** The items a run's judgement is shown: `changed` (made or changed by the run) and, of `all`, their near-duplicates. */
export function judgeSelection(changed: readonly JudgeItem[], all: readonly JudgeItem[]): JudgeSelection {
  const own = [...changed].sort((a, b) => a.id - b.id).slice(0, JUDGE_LIMITS.items);
  const shown = new Map(own.map((i) => [i.id, i]));
  const pairs: [number, number][] = [];
  for (const c of own) {
    const near = all
      .filter((o) => nearDuplicate(c, o))
      .sort((a, b) => keywordOverlap(c.keywords, b.keywords) - keywordOverlap(c.keywords, a.keywords) || a.id - b.id)
      .slice(0, JUDGE_LIMITS.nearPerItem);
    for (const n of near) {
      if (!shown.has(n.id) && shown.size >= JUDGE_LIMITS.items) continue;
      shown.set(n.id, n);
      if (!pairs.some(([x, y]) => (x === n.id && y === c.id) || (x === c.id && y === n.id))) pairs.push([c.id, n.id]);
    }
  }
  const items = [...shown.values()];
  return { items, pairs, worthACall: own.some((i) => !i.lesson) || pairs.length > 0 };
}

const KIND = { pattern: 'pattern', anti_pattern: 'anti-pattern' } as const;

/** The judge's prompt: what it is shown and the one answer it owes. */
export function judgePrompt(sel: JudgeSelection): string {
  const lines = [
    "You are Vigil's memory judge. Below are patterns (what fixed a failure) and anti-patterns (a " +
      'failure that repeated) that runs of this installation consolidated from what their agents did. Do ' +
      'not change any file.',
    '',
    '1. For each item, write one lesson: one line (at most 300 characters), an instruction a later agent ' +
      'can follow ("Return a + b from add(); do not add an offset").',
    '2. Merge near-duplicates: items of the same kind that say the same thing. Name the item to keep and ' +
      'the items it replaces. Merge only items of the same kind and scope.',
    '',
    'Answer with one JSON object and nothing else, in a ```json fenced block:',
    '```json',
    '{"lessons": [{"id": 12, "lesson": "..."}], "merges": [{"keep": 12, "merge": [15], "reason": "..."}]}',
    '```',
    '`merges` may be empty. Use only the ids below.',
    '',
    '## Items',
  ];
  for (const i of sel.items) {
    lines.push(
      '',
      `### #${i.id} ${KIND[i.kind]} (${i.repo === null ? 'all repositories' : 'this repository'})`,
      i.title,
      clean(i.body, JUDGE_LIMITS.bodyChars),
    );
    if (i.lesson) lines.push(`Current lesson: ${i.lesson}`);
  }
  if (sel.pairs.length) {
    lines.push('', '## Possible near-duplicates (by shared keywords)', ...sel.pairs.map(([a, b]) => `- #${a} and #${b}`));
  }
  return `${lines.join('\n')}\n`;
}

export type JudgePlan =
  { ok: true; lessons: { id: number; lesson: string }[]; merges: { keep: number; merge: number[] }[] } | { ok: false; error: string };

/** The answer's JSON: the last fenced block, else the text from its first `{` to its last `}`. */
function jsonOf(text: string): string | null {
  const fenced = [...text.matchAll(/```(?:json)?[ \t]*\r?\n([\s\S]*?)```/g)]
    .map((m) => (m[1] ?? '').trim())
    .filter((b) => b.startsWith('{'));
  if (fenced.length) return fenced.at(-1) ?? null;
  const a = text.indexOf('{');
  const b = text.lastIndexOf('}');
  return a >= 0 && b > a ? text.slice(a, b + 1) : null;
}

/**
 * The judge's answer as a plan, or why it changes nothing: not JSON, not the documented shape,
 * an id it was not shown, a merge across kinds or scopes, an item in two merges.
 */
export function parseJudgeAnswer(text: string, items: readonly JudgeItem[]): JudgePlan {
  const raw = jsonOf(text);
  if (raw === null) return { ok: false, error: 'no JSON object in the answer' };
  let value: unknown;
  try {
    value = JSON.parse(raw);
  } catch (err) {
    return { ok: false, error: `the answer's JSON does not parse: ${err instanceof Error ? err.message : String(err)}`.slice(0, 300) };
  }
  const parsed = MemoryJudgeAnswerSchema.safeParse(value);
  if (!parsed.success)
    return {
      ok: false,
      error:
        `the answer is not the documented JSON: ${parsed.error.issues.map((i) => `${i.path.join('.') || '(top)'}: ${i.message}`).join('; ')}`.slice(
          0,
          500,
        ),
    };
  const byId = new Map(items.map((i) => [i.id, i]));
  const unknown = [...parsed.data.lessons.map((l) => l.id), ...parsed.data.merges.flatMap((m) => [m.keep, ...m.merge])].filter(
    (id) => !byId.has(id),
  );
  if (unknown.length)
    return { ok: false, error: `the answer names items it was not shown: ${[...new Set(unknown)].map((i) => `#${i}`).join(', ')}` };
  const seen = new Set<number>();
  for (const m of parsed.data.merges) {
    const keep = byId.get(m.keep) as JudgeItem;
    for (const id of [m.keep, ...m.merge]) {
      if (seen.has(id)) return { ok: false, error: `item #${id} is in two merges (or merged into itself)` };
      seen.add(id);
      const other = byId.get(id) as JudgeItem;
      if (other.kind !== keep.kind || other.repo !== keep.repo)
        return { ok: false, error: `merge of #${id} into #${m.keep}: not the same kind and scope` };
    }
  }
  const lessons = new Map<number, string>();
  for (const l of parsed.data.lessons) {
    const lesson = clean(l.lesson, 300);
    if (lesson) lessons.set(l.id, lesson);
  }
  return {
    ok: true,
    lessons: [...lessons.entries()].map(([id, lesson]) => ({ id, lesson })),
    merges: parsed.data.merges.map((m) => ({ keep: m.keep, merge: [...new Set(m.merge)] })),
  };
}
