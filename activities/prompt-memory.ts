/**
 * The run memory's part of an iteration prompt by reference (runs from `vigil-lean-prompt-v1`
 * on; the rules are in rules/prompt-memory.ts). Kept in the run's prompt-parts
 * store (`.vigil/runs/<id>/prompt-parts/`), next to the long prompt parts:
 *
 * - `memory-<sha256>.json`: a window of the run memory; a call names the window the previous call
 *   sent and adds the newer entries. A window that is not stored here fails the call before the
 *   agent starts (PromptPartMissing: the workflow sends the whole window);
 * - `<sha256>.md`: the bounded text of `.vigil/CONTINUITY.md` (read after every iteration) and of
 *   `.vigil/learnings.md` (read at run start), stored by the activity that read them. A note that
 *   is not stored here (the run folder was removed, or the call runs on another host) is read
 *   again from the repository: the agent's latest notes.
 */
import { createHash } from 'node:crypto';
import path from 'node:path';
import { ApplicationFailure } from '@temporalio/common';
import { PROMPT_PART_MISSING } from '../schemas/activities.js';
import { MemoryWindowSchema, type MemoryWindow, type NoteRef, type PromptMemory, type PromptMemoryRef } from '../schemas/memory.js';
import { renderRunSoFar } from '../rules/memory.js';
import { applyMemoryDelta, promptMemoryOf, windowHash } from '../rules/prompt-memory.js';
import { ensureRepoDir, ensureRunDir } from './artifacts.js';
import { readContinuity, readLearnings } from './agent-notes.js';
import { isStorageError, readRegularFile, writePrivateFile } from '../lib/safe-files.js';

const MAX_PART_BYTES = 256 * 1024;

const sha256 = (text: string): string => createHash('sha256').update(text, 'utf8').digest('hex');

/** The run's prompt-parts folder (created on first use). */
export function promptPartsDir(repoPath: string, runId: string): string {
  return ensureRepoDir(repoPath, path.join(ensureRunDir(repoPath, runId), 'prompt-parts'));
}

/** Stores a note's bounded text and returns its reference (null text: no reference). */
export function storeNote(repoPath: string, runId: string, text: string | null): NoteRef | null {
  if (text === null) return null;
  const hash = sha256(text);
  try {
    writePrivateFile(path.join(promptPartsDir(repoPath, runId), `${hash}.md`), text);
  } catch (err) {
    // Not stored: the prompt reads the note from the repository again.
    if (!isStorageError(err)) throw err;
  }
  return { sha256: hash, chars: text.length };
}

function storedText(dir: string, hash: string): string | null {
  const r = readRegularFile(path.join(dir, `${hash}.md`), MAX_PART_BYTES);
  return r?.ok && sha256(r.text) === hash ? r.text : null;
}

function storedWindow(dir: string, hash: string): MemoryWindow | null {
  const r = readRegularFile(path.join(dir, `memory-${hash}.json`), MAX_PART_BYTES);
  if (!r?.ok) return null;
  try {
    const w = MemoryWindowSchema.parse(JSON.parse(r.text));
    return windowHash(w) === hash ? w : null;
  } catch {
    return null;
  }
}

/** The memory as the prompt carries it, from its reference (throws PromptPartMissing when a window is not stored). */
export function resolvePromptMemory(runId: string, repoPath: string, ref: PromptMemoryRef): PromptMemory | null {
  const dir = promptPartsDir(repoPath, runId);
  const d = ref.window;
  const base = d.base ? storedWindow(dir, d.base) : null;
  const window = applyMemoryDelta(base, d);
  if (!window || windowHash(window) !== d.sha256) {
    throw ApplicationFailure.create({
      type: PROMPT_PART_MISSING,
      nonRetryable: true,
      message: `the run memory window ${(d.base ?? d.sha256).slice(0, 12)} is not stored for run ${runId}`,
    });
  }
  try {
    writePrivateFile(path.join(dir, `memory-${d.sha256}.json`), JSON.stringify(window));
  } catch (err) {
    // Not stored: the next call finds its base missing and gets the whole window.
    if (!isStorageError(err)) throw err;
  }
  const continuity = ref.continuity ? (storedText(dir, ref.continuity.sha256) ?? readContinuity(repoPath).continuity) : null;
  const learnings = ref.learnings ? (storedText(dir, ref.learnings.sha256) ?? readLearnings(repoPath).learnings) : null;
  return promptMemoryOf(
    renderRunSoFar({ ...window, continuity: null, learnings: null, continuityRef: null, learningsRef: null }, ref.budgetChars),
    continuity,
    learnings,
  );
}
