/**
 * Prompt assembly for an iteration: a pure function of the PRD reference, the iteration, its
 * phase and tier, the pending human directives and the previous iteration's findings. The PRD is
 * referenced by path (the agent reads it), which keeps prompts, and so history, small.
 */
import type { PromptInput } from '../../schemas/activities.js';
import type { Phase } from '../../schemas/run.js';

export type { PromptInput };

const PHASE_GUIDANCE: Record<Phase, string> = {
  REASON: 'REASON: read the requirements and the current code, decide the next most valuable step.',
  ACT: 'ACT: implement the next step; keep changes small and commit them with a clear message.',
  REFLECT: 'REFLECT: review what changed, note mistakes and what to do differently.',
  VERIFY: 'VERIFY: run the tests and check the requirements; fix what fails.',
};

export function buildPrompt(p: PromptInput): string {
  const lines: string[] = [
    `You are an autonomous coding agent working in this git repository.`,
    `Requirements (PRD): ${p.prdPath}${p.prdTitle ? ` — "${p.prdTitle}"` : ''}. Read it before you start.`,
    '',
    `Iteration ${p.iteration} of at most ${p.maxIterations}. Phase ${p.phase}, tier ${p.tier}.`,
    PHASE_GUIDANCE[p.phase],
  ];
  if (p.retry > 0) {
    lines.push(`The previous ${p.retry === 1 ? 'attempt' : `${p.retry} attempts`} failed; check the state of the repository before continuing.`);
  }
  if (p.freshSession) {
    lines.push('', 'This is a FRESH SESSION: earlier conversation context was cleared on request. Rebuild your picture of the work from the repository and the summary below.');
  }
  if (p.handoffSummary) lines.push('', 'Where things stand (latest handoff):', p.handoffSummary);
  if (p.directives.length > 0) {
    lines.push('', 'HUMAN DIRECTIVE (priority; follow it before anything else):');
    for (const d of p.directives) lines.push(`[from ${d.by} at ${d.at}]`, d.text);
  }
  if (p.findings) lines.push('', 'Findings from the previous iteration:', p.findings);
  if (p.gateFindings) lines.push('', 'QUALITY GATE FAILURES (fix these; a failing blocking gate refuses completion):', p.gateFindings);
  if (p.checklist) lines.push('', 'Requirements checklist (verified independently before completion):', p.checklist);
  lines.push('', 'When every requirement is implemented and the tests pass, claim completion by');
  if (p.completionPromise) lines.push(`printing the exact line "${p.completionPromise}" or`);
  lines.push('creating the file .vigil/signals/COMPLETION_REQUESTED. The claim is verified independently.');
  lines.push('Never push, and do not edit anything under .vigil/ except that signal file.');
  return lines.join('\n');
}
