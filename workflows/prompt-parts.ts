/**
 * What keeps an iteration call small: its long prompt parts and the run memory travel by
 * reference once the activity has them.
 *
 * - `PromptParts`: a long part (findings, gate findings, checklist, handoff summary) travels as
 *   text the first time this execution sends it (the agent activity stores it under the run
 *   folder), afterwards as its sha256 only.
 * - `MemoryParts`: the run memory as a window of entries (rules/prompt-memory.ts),
 *   only what was added since the window last sent, and the agent's notes by reference; the
 *   prompt the agent reads is the same text.
 *
 * Either answers `forget()` when the activity did not find a part where the call ran: everything
 * goes as text again.
 *
 * Workflow code: deterministic, no I/O.
 */
import { PROMPT_PART_MIN_CHARS, PROMPT_PART_NAMES, type PromptInput, type PromptRefs } from '../schemas/activities.js';
import type { MemoryWindow, PromptMemoryRef, RunMemory } from '../schemas/memory.js';
import { memoryDelta, memoryWindow } from '../rules/prompt-memory.js';
import { sha256Hex } from '../rules/sha256.js';

/** Which long prompt parts this execution has sent as text (so the activity has stored them). */
export class PromptParts {
  private readonly sent = new Set<string>();

  /** The prompt input with every part sent before replaced by its reference. */
  split(p: PromptInput): { promptInput: PromptInput; promptRefs: PromptRefs } {
    const out: PromptInput = { ...p };
    const refs: PromptRefs = {};
    for (const name of PROMPT_PART_NAMES) {
      const text = p[name];
      if (typeof text !== 'string' || text.length < PROMPT_PART_MIN_CHARS) continue;
      const hash = sha256Hex(text);
      if (this.sent.has(hash)) {
        refs[name] = hash;
        out[name] = null;
      } else {
        this.sent.add(hash);
      }
    }
    return { promptInput: out, promptRefs: refs };
  }

  /** The activity did not find a part where the call ran: send every part as text again. */
  forget(): void {
    this.sent.clear();
  }
}

/** Which memory window this execution sent last (so the activity has stored it). */
export class MemoryParts {
  private last: { window: MemoryWindow; hash: string } | null = null;

  /** The memory's reference for the next iteration call: the entries since the last window sent, and the notes' references. */
  ref(m: RunMemory, budgetChars: number): PromptMemoryRef {
    const window = memoryWindow(m, budgetChars);
    const delta = memoryDelta(this.last, window);
    this.last = { window, hash: delta.sha256 };
    return { window: delta, budgetChars, continuity: m.continuityRef ?? null, learnings: m.learningsRef ?? null };
  }

  /** The activity did not find the window where the call ran: send the whole window next time. */
  forget(): void {
    this.last = null;
  }
}
