/**
 * The notes an agent keeps for the iterations and runs after it (the run memory's files):
 * - `.vigil/signals/SUMMARY`: what this iteration did, in the agent's words; consumed once, like
 *   every signal file (moved into the run folder under the iteration that read it);
 * - `.vigil/CONTINUITY.md`: the agent's working notes; read (never consumed) after every
 *   iteration and carried into the next prompt, so they survive a context clear;
 * - `.vigil/learnings.md`: lasting lessons about the repository, read at run start; later runs on
 *   the same repository read what earlier ones appended.
 * Links are never followed (a linked file is ignored and reported); everything returned is bounded.
 * Plain functions: the activities that already run at those moments call them.
 */
import path from 'node:path';
import { MEMORY_LIMITS } from '../schemas/memory.js';
import { boundedContinuity, boundedLearnings } from '../rules/memory.js';
import { VIGIL_DIR } from './artifacts.js';
import { consumeFile, readRegularFile } from '../lib/safe-files.js';

/** A notes file is read up to this size (CONTINUITY.md from its start; the rest is cut). */
const MAX_NOTES_BYTES = 64 * 1024;
/** learnings.md is read up to this size; of that, its end (the newest lessons) is carried. */
const MAX_LEARNINGS_BYTES = 256 * 1024;

export interface AgentNotes {
  summary: string | null;
  continuity: string | null;
  problems: string[];
}

/**
 * After an iteration: consumes `.vigil/signals/SUMMARY` into `consumedDir` (made by `makeDir`
 * when there is one) and reads `.vigil/CONTINUITY.md`. A retried activity reads the SUMMARY an
 * interrupted attempt already moved.
 */
export function readAgentNotes(repoPath: string, consumedDir: string, makeDir: () => void): AgentNotes {
  const problems: string[] = [];
  const kept = path.join(consumedDir, 'SUMMARY');
  if (consumeFile(path.join(repoPath, VIGIL_DIR, 'signals', 'SUMMARY'), kept, makeDir) === 'link-removed') {
    problems.push('SUMMARY was a symbolic link or not a regular file; removed unread');
  }
  const text = (file: string, max: number): string | null => {
    const r = readRegularFile(file, max);
    if (r === null) return null;
    if (!r.ok) {
      problems.push(r.problem);
      return null;
    }
    return r.text;
  };
  const summary = text(kept, MAX_NOTES_BYTES)?.replace(/\s+/g, ' ').trim().slice(0, MEMORY_LIMITS.summaryChars) || null;
  const notes = readContinuity(repoPath);
  if (notes.problem) problems.push(notes.problem);
  return { summary, continuity: notes.continuity, problems };
}

/** `.vigil/CONTINUITY.md`, its beginning, bounded (null: none). */
export function readContinuity(repoPath: string): { continuity: string | null; problem: string | null } {
  const r = readRegularFile(path.join(repoPath, VIGIL_DIR, 'CONTINUITY.md'), MAX_NOTES_BYTES);
  if (r === null) return { continuity: null, problem: null };
  if (!r.ok) return { continuity: null, problem: r.problem };
  return { continuity: boundedContinuity(r.text), problem: null };
}

/** At run start: the repository's `.vigil/learnings.md`, its newest part, bounded (null: none). */
export function readLearnings(repoPath: string): { learnings: string | null; problem: string | null } {
  const file = path.join(repoPath, VIGIL_DIR, 'learnings.md');
  const r = readRegularFile(file, MAX_LEARNINGS_BYTES);
  if (r === null) return { learnings: null, problem: null };
  if (!r.ok) return { learnings: null, problem: r.problem };
  return { learnings: boundedLearnings(r.text), problem: null };
}
