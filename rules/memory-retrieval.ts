/**
 * Retrieval of the memory that outlives a run into an iteration's prompt (docs/memory.md), by
 * layer, each within its token budget (a token counted as four characters):
 *
 * - the index: topics and counts (what there is to know);
 * - the timeline: the repository's earlier runs, newest first, one line each;
 * - the entries: the patterns, anti-patterns and skills themselves, the most relevant first —
 *   relevance is how well they match the task at hand (the PRD, the checklist, the failing
 *   gates: a full-text score the store activity computes, else the keywords they share), then
 *   their importance and whether they are this repository's own. An item that matches nothing of
 *   the task is never loaded to fill the budget (the relevance floor): the index still counts it.
 *
 * The kind of task weighs the layers (`TASK_WEIGHTS`, the original's retrieval strategies):
 * debugging wants anti-patterns and no skills, implementation patterns and skills, exploration
 * the earlier runs.
 *
 * Lexical retrieval only: no embedding model is downloaded or run. Pure; the store activity
 * (lib/lasting-memory.ts) reads the candidates and writes what was retrieved.
 */
import type { MemoryLayers, MemoryRef } from '../schemas/lasting-memory.js';
import { keywordsOf } from './lasting-memory.js';

export const CHARS_PER_TOKEN = 4;

export interface StoredItem {
  ref: MemoryRef;
  /** null: across repositories. */
  repo: string | null;
  /** `pattern`, `anti_pattern`, `skill`. */
  kind: string;
  topic: string;
  title: string;
  body: string;
  keywords: readonly string[];
  evidence: number;
  importance: number;
  /**
   * The item's full-text score against the task, as the store activity ranked it
   * (lib/memory-rank.ts: BM25+ with prefix and fuzzy matching); absent: the keywords it
   * shares with the task count instead.
   */
  textScore?: number;
}

export interface TimelineRun {
  workflowId: string;
  startedAt: string | null;
  prdTitle: string | null;
  iterations: number;
  status: string | null;
  /** Failure signatures of the run with their counts, most frequent first. */
  failures: { what: string; count: number }[];
}

/** What the iteration is doing, as far as memory is concerned. */
export type TaskType = 'exploration' | 'implementation' | 'debugging' | 'review' | 'refactoring';

/**
 * The weight of each memory kind for each kind of task: the original's retrieval strategies
 * (episodic = the earlier runs, semantic = patterns, skills, and anti-patterns, which only debugging
 * weighs apart; elsewhere they weigh as the patterns they are). `review` is for reviewing roles;
 * today only the builder's prompt retrieves.
 */
export const TASK_WEIGHTS: Readonly<Record<TaskType, { episodic: number; semantic: number; skills: number; antiPatterns: number }>> = {
  exploration: { episodic: 0.6, semantic: 0.3, skills: 0.1, antiPatterns: 0.3 },
  implementation: { episodic: 0.15, semantic: 0.5, skills: 0.35, antiPatterns: 0.5 },
  debugging: { episodic: 0.4, semantic: 0.2, skills: 0, antiPatterns: 0.4 },
  review: { episodic: 0.3, semantic: 0.5, skills: 0.2, antiPatterns: 0.5 },
  refactoring: { episodic: 0.25, semantic: 0.45, skills: 0.3, antiPatterns: 0.45 },
};

/** The largest episodic weight: the task kind that gets the whole timeline budget. */
const MAX_EPISODIC = Math.max(...Object.values(TASK_WEIGHTS).map((w) => w.episodic));

/** A PRD whose title says it restructures code rather than adds behaviour. */
const REFACTOR = /\b(refactor\w*|restructur\w*|clean[ -]?up|renam\w+|extract\w*|simplif\w+|split\w*|reorganis\w+|reorganiz\w+)\b/i;

/**
 * The kind of an iteration's task: debugging while a gate or test of the last pass failed;
 * refactoring when the PRD's title says so; exploration at the first iteration (the first look at
 * the repository); implementation otherwise.
 */
export function taskTypeOf(t: { iteration: number; gateFindings?: string | null; prdTitle: string }): TaskType {
  if (t.gateFindings && t.gateFindings.trim()) return 'debugging';
  if (REFACTOR.test(t.prdTitle)) return 'refactoring';
  return t.iteration <= 1 ? 'exploration' : 'implementation';
}

/** The weight of a stored item's kind for a kind of task (0: not loaded at all). */
export function kindWeight(kind: string, task: TaskType): number {
  const w = TASK_WEIGHTS[task];
  if (kind === 'skill') return w.skills;
  if (kind === 'anti_pattern') return w.antiPatterns;
  return w.semantic;
}

export interface RetrievalInput {
  repo: string;
  task: string;
  /** What the iteration is doing (taskTypeOf); absent: implementation. */
  taskType?: TaskType;
  budgets: MemoryLayers;
  items: readonly StoredItem[];
  timeline: readonly TimelineRun[];
  episodes: { count: number; runs: number };
  /**
   * What the run's last call's token economics asked (rules/memory-economics.ts): entry bodies cut
   * to `entryChars` (layer 3 compressed), entries matching at least `floorShare` of the best match
   * (the relevance floor raised).
   */
  economy?: { entryChars?: number; floorShare?: number };
}

export interface Retrieved {
  /** The prompt section's body ('' when there is nothing to say). */
  text: string;
  refs: MemoryRef[];
  /** Characters per layer (each within its budget). */
  chars: { index: number; timeline: number; entries: number };
  /** The kind of task the layers were weighed for. */
  taskType: TaskType;
}

const KIND_LABEL: Record<string, string> = { anti_pattern: 'anti-pattern', pattern: 'pattern', skill: 'skill' };

/** Lines that fit in `budget` characters, joined by newlines (a first line too long is cut to fit). */
function fit(lines: readonly string[], budget: number): { text: string; taken: number } {
  const out: string[] = [];
  let used = 0;
  for (const l of lines) {
    const add = (out.length ? 1 : 0) + l.length;
    if (used + add > budget) {
      if (out.length === 0 && budget > 20) {
        out.push(`${l.slice(0, budget - 1)}…`);
        used = budget;
      }
      break;
    }
    out.push(l);
    used += add;
  }
  return { text: out.join('\n'), taken: out.length };
}

/** How much of the best full-text score one point of relevance is worth (the best match scores this many points). */
const TEXT_POINTS = 5;

/**
 * How well an item fits the task: its match first (its full-text score, the best one worth
 * TEXT_POINTS, when the activity ranked the items; else the keywords it shares with the task),
 * then importance, then being this repository's own.
 */
export function relevance(item: StoredItem, task: ReadonlySet<string>, repo: string, bestText = 0): number {
  return match(item, task, bestText) + item.importance + (item.repo === repo ? 0.5 : 0) + (item.kind === 'anti_pattern' ? 0.2 : 0);
}

/** How well an item matches the task alone (0: nothing of it). */
export function match(item: StoredItem, task: ReadonlySet<string>, bestText = 0): number {
  return item.textScore !== undefined && bestText > 0
    ? (TEXT_POINTS * item.textScore) / bestText
    : item.keywords.filter((k) => task.has(k)).length;
}

/** A topic of the memory's index: how many items of each kind it holds (kinds in the order first met). */
export interface MemoryTopic {
  topic: string;
  count: number;
  kinds: Record<string, number>;
}

/** The memory's index: its topics, the fullest first (then by name), each with its count per kind. */
export function memoryTopics(items: readonly { topic: string; kind: string }[]): MemoryTopic[] {
  const topics = new Map<string, MemoryTopic>();
  for (const i of items) {
    const t = topics.get(i.topic) ?? { topic: i.topic, count: 0, kinds: {} };
    t.count += 1;
    t.kinds[i.kind] = (t.kinds[i.kind] ?? 0) + 1;
    topics.set(i.topic, t);
  }
  return [...topics.values()].sort((a, c) => c.count - a.count || a.topic.localeCompare(c.topic));
}

export function retrieve(input: RetrievalInput): Retrieved {
  const task = new Set(keywordsOf(input.task, 400));
  const taskType = input.taskType ?? 'implementation';
  const b = input.budgets;
  const sections: string[] = [];
  const chars = { index: 0, timeline: 0, entries: 0 };
  const refs: MemoryRef[] = [];
  if (input.items.length === 0 && input.timeline.length === 0) return { text: '', refs, chars, taskType };

  if (b.indexTokens > 0) {
    const lines = [
      `Index: ${input.items.length} item(s) from ${input.episodes.runs} earlier run(s), ${input.episodes.count} episode(s).`,
      ...memoryTopics(input.items).map(
        ({ topic, kinds }) =>
          `- ${topic}: ${Object.entries(kinds)
            .map(([k, n]) => `${n} ${KIND_LABEL[k] ?? k}${n === 1 ? '' : 's'}`)
            .join(', ')}`,
      ),
    ];
    const f = fit(lines, b.indexTokens * CHARS_PER_TOKEN);
    if (f.text) {
      sections.push(f.text);
      chars.index = f.text.length;
    }
  }

  // The earlier runs weigh as the task's episodic weight: exploration reads the whole timeline budget.
  const timelineTokens = Math.floor((b.timelineTokens * TASK_WEIGHTS[taskType].episodic) / MAX_EPISODIC);
  if (timelineTokens > 0 && input.timeline.length > 0) {
    const lines = [
      'Timeline (earlier runs on this repository, newest first):',
      ...input.timeline.map((r) => {
        const fails = r.failures
          .slice(0, 3)
          .map((x) => `${x.what} ×${x.count}`)
          .join('; ');
        return (
          `- ${(r.startedAt ?? '').slice(0, 10) || '?'} "${r.prdTitle ?? r.workflowId}": ${r.iterations} iteration(s), ` +
          `${r.status ?? 'not ended'}${fails ? `; failed: ${fails}` : ''}`
        );
      }),
    ];
    const f = fit(lines, timelineTokens * CHARS_PER_TOKEN);
    if (f.taken > 1) {
      sections.push(f.text);
      chars.timeline = f.text.length;
    }
  }

  if (b.entriesTokens > 0 && input.items.length > 0) {
    const text = entriesLayer(input, task, taskType, refs);
    if (text) {
      sections.push(text);
      chars.entries = text.length;
    }
  }
  return { text: sections.join('\n'), refs, chars, taskType };
}

/** The entries layer (layer 3): the items that match, the most relevant first, within its budget; '' when none. */
function entriesLayer(input: RetrievalInput, task: ReadonlySet<string>, taskType: TaskType, refs: MemoryRef[]): string {
  const budget = input.budgets.entriesTokens * CHARS_PER_TOKEN;
  const best = Math.max(0, ...input.items.map((i) => i.textScore ?? 0));
  const score = (i: StoredItem): number => relevance(i, task, input.repo, best) * kindWeight(i.kind, taskType);
  const { entryChars, floorShare } = input.economy ?? {};
  const floor = floorShare ? floorShare * Math.max(0, ...input.items.map((i) => match(i, task, best))) : 0;
  const ranked = input.items
    .filter((i) => match(i, task, best) > 0 && match(i, task, best) >= floor && kindWeight(i.kind, taskType) > 0)
    .sort((x, y) => score(y) - score(x) || y.evidence - x.evidence || x.ref.id - y.ref.id);
  const how = [`weighed for ${taskType}`, ...(entryChars ? ['compressed'] : []), ...(floorShare ? ['the closest matches only'] : [])];
  const lines: string[] = [`Entries (most relevant to this task first; ${how.join('; ')}):`];
  let used = lines[0]?.length ?? 0;
  for (const i of ranked) {
    const body = entryChars && i.body.length > entryChars ? `${i.body.slice(0, entryChars - 1)}…` : i.body;
    const line = `- [${KIND_LABEL[i.kind] ?? i.kind} #${i.ref.id}, ${i.topic}${i.repo === null ? ', across repositories' : ''}] ${body}`;
    if (used + 1 + line.length > budget) continue;
    lines.push(line);
    used += 1 + line.length;
    refs.push(i.ref);
  }
  return lines.length > 1 ? lines.join('\n') : '';
}
