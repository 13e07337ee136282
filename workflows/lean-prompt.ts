/**
 * The lean prompt (runs from `vigil-lean-prompt-v1` on): an iteration call carries the run memory
 * by reference (workflows/decisions/prompt-memory.ts), so its size no longer grows with the
 * memory. The prompt the agent reads is the same text.
 *
 * Workflow code: deterministic, no I/O.
 */
import { AGENT_RESULT_NULL_DEFAULTS, AgentResultSchema, type AgentResult } from '../schemas/activities.js';
import type { PromptMemoryRef, RunMemory, MemoryWindow } from '../schemas/memory.js';
import { memoryDelta, memoryWindow } from './decisions/prompt-memory.js';

/** An agent call's result as the workflow uses it: a compact one (`compact: true` in the call) gets its defaults back. */
export function agentResultOf(r: AgentResult, compact: boolean | undefined): AgentResult {
  if (!compact) return r;
  const parsed = AgentResultSchema.safeParse(r);
  // A result the schema refuses (never expected) still gets its null fields back rather than failing the workflow task.
  return parsed.success ? parsed.data : { ...(Object.fromEntries(AGENT_RESULT_NULL_DEFAULTS.map((k) => [k, null])) as Partial<AgentResult>), ...r };
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
