/**
 * The run memory by reference (runs from `vigil-lean-prompt-v1` on): what an iteration call
 * carries of the memory instead of its rendered text, and how the activity gets the same text
 * back. Pure: the workflow computes the reference, the agent activity applies it.
 *
 * - "The run so far" is rendered from a window of the memory: the fewest newest entries that
 *   render the same text within the budget (`memoryWindow`). A call sends the entries added since
 *   the window the previous call of the execution sent (`memoryDelta`), which the activity keeps
 *   by its sha256; the activity rebuilds the window (`applyMemoryDelta`), checks its sha256 and
 *   renders it with the same function (`renderRunSoFar`), so the prompt is byte-identical.
 * - `.vigil/CONTINUITY.md` and `.vigil/learnings.md` are read by activities, which keep the
 *   bounded text in the run's prompt-parts store and hand the workflow a reference (sha256 and
 *   size): the workflow decides with presence and size, never with the text.
 */
import type { AgentSignals } from '../schemas/activities.js';
import type { MemoryDelta, MemoryEntry, MemoryWindow, NoteRef, PromptMemory, RunMemory } from '../schemas/memory.js';
import { renderRunSoFar } from './memory.js';
import { sha256Hex } from './sha256.js';

/** The fewest newest entries of the memory that render "the run so far" exactly as the whole memory does. */
export function memoryWindow(m: Pick<RunMemory, 'entries' | 'dropped'>, budgetChars: number): MemoryWindow {
  const full = renderRunSoFar({ ...emptyNotes, entries: m.entries, dropped: m.dropped }, budgetChars);
  // From the empty window down: rendering stops early, so each try costs the lines it shows.
  for (let skip = m.entries.length; skip > 0; skip--) {
    const w = { entries: m.entries.slice(skip), dropped: m.dropped + skip };
    if (renderRunSoFar({ ...emptyNotes, ...w }, budgetChars) === full) return w;
  }
  return { entries: [...m.entries], dropped: m.dropped };
}

const emptyNotes = { continuity: null, learnings: null, continuityRef: null, learningsRef: null };

/** The window's identity (key order fixed: the hash must not depend on how an object was built). */
export function windowHash(w: MemoryWindow): string {
  return sha256Hex(JSON.stringify({ d: w.dropped, e: w.entries.map((e) => [e.iteration, e.kind, e.text]) }));
}

const same = (a: MemoryEntry, b: MemoryEntry): boolean => a.iteration === b.iteration && a.kind === b.kind && a.text === b.text;

/**
 * `next` as a change of `prev` (whose hash is `prevHash`): the longest run of `prev`'s entries that
 * starts `next`, then the entries after it. Without a previous window, or nothing in common: all of it.
 */
export function memoryDelta(prev: { window: MemoryWindow; hash: string } | null, next: MemoryWindow): MemoryDelta {
  const sha256 = windowHash(next);
  const whole: MemoryDelta = { sha256, base: null, skip: 0, keep: 0, add: [...next.entries], dropped: next.dropped };
  if (!prev) return whole;
  const old = prev.window.entries;
  let best = { skip: 0, keep: 0 };
  for (let skip = 0; skip < old.length; skip++) {
    let keep = 0;
    while (
      skip + keep < old.length &&
      keep < next.entries.length &&
      same(old[skip + keep] as MemoryEntry, next.entries[keep] as MemoryEntry)
    )
      keep++;
    if (keep > best.keep) best = { skip, keep };
  }
  if (best.keep === 0) return whole;
  return { sha256, base: prev.hash, skip: best.skip, keep: best.keep, add: next.entries.slice(best.keep), dropped: next.dropped };
}

/** The window a delta stands for (null: the delta needs a base window that is not there). */
export function applyMemoryDelta(base: MemoryWindow | null, d: MemoryDelta): MemoryWindow | null {
  if (d.base !== null && base === null) return null;
  const kept = base ? base.entries.slice(d.skip, d.skip + d.keep) : [];
  if (kept.length !== d.keep) return null;
  return { entries: [...kept, ...d.add], dropped: d.dropped };
}

/** The memory as the prompt carries it, from the rendered run so far and the notes' texts (as `promptMemory`). */
export function promptMemoryOf(runSoFar: string, continuity: string | null, learnings: string | null): PromptMemory | null {
  if (!runSoFar && !continuity && !learnings) return null;
  return { runSoFar, continuity, learnings };
}

/** The memory after an iteration's notes were read: CONTINUITY.md by reference (its text is in the prompt-parts store). */
export function keepContinuity(m: RunMemory, signals: Pick<AgentSignals, 'continuityRef'>): RunMemory {
  return { ...m, continuity: null, continuityRef: signals.continuityRef ?? null };
}

/** The memory after the run start read the learnings: by reference (their text is in the prompt-parts store). */
export function keepLearnings(m: RunMemory, start: { learningsRef?: NoteRef | null }): RunMemory {
  return { ...m, learnings: null, learningsRef: start.learningsRef ?? null };
}
