/**
 * The lean prompt (runs from `vigil-lean-prompt-v1` on): an iteration call carries the run memory
 * by reference (workflows/decisions/prompt-memory.ts), so its size no longer grows with the
 * memory. The prompt the agent reads is the same text.
 *
 * Workflow code: deterministic, no I/O.
 */
import type { PromptMemoryRef, RunMemory, MemoryWindow } from '../schemas/memory.js';
import { memoryDelta, memoryWindow } from './decisions/prompt-memory.js';

/** Moved beside the round drivers, which use it too (rounds/agent-result.ts); re-exported for the run workflow. */
export { agentResultOf } from '../rounds/agent-result.js';

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
