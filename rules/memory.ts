/**
 * The run memory's rules (schemas/memory.ts): what one iteration and each decision around it
 * leave in the memory, how the memory stays bounded, and how it is rendered into the prompt as
 * "the run so far" (newest first, within a character budget). Pure: the workflow calls these; the
 * files the agent keeps (`.vigil/CONTINUITY.md`, `.vigil/learnings.md`, `.vigil/signals/SUMMARY`)
 * are read by activities and arrive here as text.
 *
 * Not the event journal (decisions/journal.ts): that one feeds the event store; this one feeds
 * the agent.
 */
import type { RunEvent } from '../schemas/events.js';
import { MEMORY_LIMITS, type MemoryEntry, type MemoryKind, type PromptMemory, type RunMemory } from '../schemas/memory.js';

const oneLine = (s: string): string => s.replace(/\s+/g, ' ').trim();

function cut(s: string, n: number): string {
  return s.length <= n ? s : `${s.slice(0, Math.max(0, n - 1))}…`;
}

/** Kinds whose entries of one iteration merge into one line (six gates are one line, not six). */
const MERGED: ReadonlySet<MemoryKind> = new Set(['gates']);

/** Appends an entry; the oldest entries go first when the memory is full. */
export function appendMemory(m: RunMemory, entry: MemoryEntry): RunMemory {
  const text = cut(oneLine(entry.text), MEMORY_LIMITS.entryChars);
  if (!text) return m;
  const last = m.entries.at(-1);
  if (last && MERGED.has(entry.kind) && last.kind === entry.kind && last.iteration === entry.iteration) {
    const merged = { ...last, text: cut(`${last.text}; ${text}`, MEMORY_LIMITS.entryChars) };
    return { ...m, entries: [...m.entries.slice(0, -1), merged] };
  }
  const entries = [...m.entries, { iteration: entry.iteration, kind: entry.kind, text }];
  const over = Math.max(0, entries.length - MEMORY_LIMITS.entries);
  return { ...m, entries: entries.slice(over), dropped: m.dropped + over };
}

/** The facts of one finished agent call and what it left in the repository. */
export interface IterationFacts {
  iteration: number;
  phase: string | null;
  exitCode: number;
  timedOut: boolean;
  changed: boolean;
  /** Paths this iteration changed (vs the previous tree), when known. */
  paths: readonly string[] | null;
  /** Lines this iteration changed, when known. */
  lines: number | null;
  filesChangedSinceStart: number;
  insertions: number;
  deletions: number;
  /** The tests' verdict on this iteration's tree, when they ran on it. */
  tests: 'pass' | 'fail' | 'inconclusive' | null;
  claimed: boolean;
  provider: string | null;
  /** The agent's own summary (`.vigil/signals/SUMMARY`), when it wrote one. */
  summary: string | null;
}

export function iterationMemory(f: IterationFacts): MemoryEntry {
  const parts: string[] = [];
  if (f.phase) parts.push(f.phase);
  parts.push(f.timedOut ? `timed out (exit ${f.exitCode})` : f.exitCode === 0 ? 'exit 0' : `FAILED (exit ${f.exitCode})`);
  if (!f.changed) {
    parts.push('no change');
  } else if (f.paths && f.paths.length > 0) {
    const named = f.paths.slice(0, MEMORY_LIMITS.filesNamed).join(', ');
    const more = f.paths.length > MEMORY_LIMITS.filesNamed ? ` +${f.paths.length - MEMORY_LIMITS.filesNamed} more` : '';
    parts.push(`changed ${f.paths.length} file(s): ${named}${more}${f.lines !== null ? ` (${f.lines} line(s))` : ''}`);
  } else {
    parts.push('changed the tree');
  }
  parts.push(`${f.filesChangedSinceStart} file(s) vs run start (+${f.insertions} -${f.deletions})`);
  if (f.tests) parts.push(`tests ${f.tests}`);
  if (f.claimed) parts.push('claimed completion');
  const summary = f.summary ? oneLine(f.summary) : '';
  const text = parts.join(' · ');
  // The agent's summary is the most useful part; the facts are cut first, never the summary's start.
  if (!summary) return { iteration: f.iteration, kind: 'iteration', text };
  const said = ` — agent: "${cut(summary, MEMORY_LIMITS.summaryChars)}"`;
  return { iteration: f.iteration, kind: 'iteration', text: `${cut(text, Math.max(80, MEMORY_LIMITS.entryChars - said.length))}${said}` };
}

export function directiveMemory(iteration: number, d: { text: string; by: string }): MemoryEntry {
  return { iteration, kind: 'directive', text: `directive from ${d.by}: "${cut(oneLine(d.text), 300)}"` };
}

export function contextClearMemory(iteration: number, reason: string): MemoryEntry {
  return { iteration, kind: 'context', text: `context cleared (${reason}): the next iteration starts a fresh session` };
}

/** What a run event leaves in the memory (null: nothing worth a line). */
export function memoryFromEvent(event: RunEvent): MemoryEntry | null {
  switch (event.kind) {
    case 'council_round': {
      const against = event.votes.find((v) => !v.approves && v.reason.trim());
      const why = against ? ` — ${against.recorded}: ${against.reason}` : '';
      return {
        iteration: event.iteration,
        kind: 'council',
        text:
          `council round ${event.round} (${event.trigger.replace(/_/g, ' ')}): ${event.result} · ${event.approve} of ` +
          `${event.approve + event.reject} approve, ${event.threshold} needed${why}`,
      };
    }
    case 'gate':
      // Failures, and the tests' verdict either way (the tests are what a person asks about first).
      if (event.verdict === 'pass' && event.gate !== 'tests') return null;
      if (event.verdict === 'pass') return { iteration: event.iteration, kind: 'gates', text: 'gate tests passed' };
      return { iteration: event.iteration, kind: 'gates', text: `gate ${event.gate.replace(/_/g, ' ')} ${event.verdict}: ${event.reason}` };
    case 'review': {
      const blocking = event.reviewers.filter((r) => r.blocking).map((r) => r.reviewer);
      return {
        iteration: event.iteration,
        kind: 'review',
        text:
          `code review ${event.round}: ${event.result} · mergeability ${event.mergeability}` +
          (blocking.length ? ` · blocking: ${blocking.join(', ')}` : ''),
      };
    }
    case 'escalation':
      return {
        iteration: event.iteration,
        kind: 'escalation',
        text: `escalated to a person (${event.reason.replace(/_/g, ' ')})${event.paused ? ', run paused' : ''}: ${event.detail}`,
      };
    case 'tier_change':
      return { iteration: event.iteration, kind: 'tier', text: `model tier ${event.from} -> ${event.to}: ${event.trigger}` };
    default:
      return null;
  }
}

/** A completion refused before the council was asked (quality gates, code review, checklist). */
export function refusalMemory(iteration: number, reason: string): MemoryEntry {
  return { iteration, kind: 'refusal', text: `completion refused before the council: ${reason}` };
}

/** Room kept at the end for the line that says how much older memory there is. */
const OLDER_RESERVE = 72;

function line(e: MemoryEntry): string {
  return `- iteration ${e.iteration}: ${e.text}`;
}

/**
 * "The run so far": the entries newest first, as many whole lines as fit in `budgetChars`, then
 * one line saying how much older memory there is. Empty when the budget is 0 or nothing happened.
 */
export function renderRunSoFar(m: RunMemory, budgetChars: number): string {
  if (budgetChars <= 0 || m.entries.length === 0) return '';
  const lines: string[] = [];
  let used = 0;
  let i = m.entries.length - 1;
  for (; i >= 0; i--) {
    const l = line(m.entries[i] as MemoryEntry);
    const reserve = i + m.dropped > 0 ? OLDER_RESERVE : 0;
    const sep = lines.length > 0 ? 1 : 0;
    if (used + sep + l.length + reserve > budgetChars) {
      if (lines.length === 0) {
        // Not even the newest line fits whole: its beginning, rather than nothing.
        const first = cut(l, Math.max(1, budgetChars - reserve));
        lines.push(first);
        used = first.length;
        i -= 1;
      }
      break;
    }
    lines.push(l);
    used += sep + l.length;
  }
  const hidden = i + 1 + m.dropped;
  if (hidden > 0) {
    const oldest = i >= 0 ? m.entries[i]?.iteration : undefined;
    const note = `- … ${hidden} older entr${hidden === 1 ? 'y' : 'ies'} not shown${oldest !== undefined ? ` (iteration ${oldest} and before)` : ''}`;
    if (used + 1 + note.length <= budgetChars) lines.push(note);
  }
  return lines.join('\n');
}

/** The memory as an iteration prompt carries it; null when there is nothing to carry. */
export function promptMemory(m: RunMemory, budgetChars: number): PromptMemory | null {
  const runSoFar = renderRunSoFar(m, budgetChars);
  if (!runSoFar && !m.continuity && !m.learnings) return null;
  return { runSoFar, continuity: m.continuity, learnings: m.learnings };
}

/** `.vigil/CONTINUITY.md` as carried: its beginning, bounded (null when empty). */
export function boundedContinuity(text: string | null): string | null {
  const t = text?.trim() ?? '';
  if (!t) return null;
  return t.length <= MEMORY_LIMITS.continuityChars
    ? t
    : `${t.slice(0, MEMORY_LIMITS.continuityChars - 40).trimEnd()}\n… (cut: the file is longer)`;
}

/** `.vigil/learnings.md` as carried: its end (the newest lessons), bounded (null when empty). */
export function boundedLearnings(text: string | null): string | null {
  const t = text?.trim() ?? '';
  if (!t) return null;
  if (t.length <= MEMORY_LIMITS.learningsChars) return t;
  const tail = t.slice(t.length - (MEMORY_LIMITS.learningsChars - 40));
  const nl = tail.indexOf('\n');
  return `(older learnings cut)\n${nl >= 0 && nl < 200 ? tail.slice(nl + 1) : tail}`;
}

/** What status shows of the memory: sizes, and whether the notes and learnings are carried. */
export function memorySummary(m: RunMemory): { entries: number; dropped: number; chars: number; continuity: boolean; learnings: boolean } {
  return {
    entries: m.entries.length,
    dropped: m.dropped,
    chars:
      m.entries.reduce((n, e) => n + e.text.length, 0) +
      (m.continuity?.length ?? m.continuityRef?.chars ?? 0) +
      (m.learnings?.length ?? m.learningsRef?.chars ?? 0),
    // Runs from `vigil-lean-prompt-v1` on keep the notes by reference: the same facts.
    continuity: m.continuity !== null || (m.continuityRef ?? null) !== null,
    learnings: m.learnings !== null || (m.learningsRef ?? null) !== null,
  };
}

/**
 * After a rewind to iteration `to`: the entries of the iterations set aside go, and one line says
 * what happened, so the agent knows an approach was abandoned (and where its tree is kept).
 * A memory with nothing in it (a run from before the memory) stays empty.
 */
export function rewindMemory(m: RunMemory, r: { from: number; to: number; by: string; reason: string; savedRef: string }): RunMemory {
  if (m.entries.length === 0) return m;
  const kept = { ...m, entries: m.entries.filter((e) => e.iteration <= r.to) };
  const span = r.from > r.to + 1 ? `iterations ${r.to + 1}-${r.from}` : r.from === r.to + 1 ? `iteration ${r.from}` : 'nothing';
  return appendMemory(kept, {
    iteration: r.to,
    kind: 'note',
    text:
      `rewound by ${r.by} from iteration ${r.from} to ${r.to}${r.reason ? ` (${cut(oneLine(r.reason), 200)})` : ''}: ${span} set ` +
      `aside; that tree is kept under ${r.savedRef}`,
  });
}
