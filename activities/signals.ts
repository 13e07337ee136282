/**
 * Signal files an agent writes in `.vigil/signals/` to talk to Vigil:
 * - `HUMAN_REVIEW_NEEDED`: JSON `{reason, blocking?, questions?, defaultAnswer?}`; Vigil escalates (and
 *   pauses in supervised mode); `defaultAnswer` is taken at the pause's deadline with onDeadline=default-answer;
 * - `DRIFT_DETECTED`: JSON lines, one per drift the agent noticed; counted per run;
 * - `CONTEXT_CLEAR_REQUESTED`: the next agent call starts a fresh session;
 * - `UNCERTAINTY_ESCALATION`: Vigil's own marker of an escalation (activities/loop-signals.ts), seen
 *   by the next call and consumed here; one the agent wrote is its report of being unsure, read as
 *   a (non-blocking) HUMAN_REVIEW_NEEDED when it wrote none (rules/uncertainty-signal.ts);
 * - with `notes`, the run memory's files too (agent-notes.ts): `SUMMARY`, `.vigil/CONTINUITY.md`.
 * Each file is consumed exactly once: it is moved into the run folder under the iteration that
 * consumed it, and a retried activity reads what an interrupted attempt already moved.
 */
import path from 'node:path';
import { z } from 'zod';
import { ReadSignalsInputSchema, type AgentSignals, type ReadSignalsInput } from '../schemas/activities.js';
import { ensureRepoDir, pad, requireRepository, runDir, signalPath } from './artifacts.js';
import { consumeFile, readRegularFile } from '../lib/safe-files.js';
import { readAgentNotes } from './agent-notes.js';
import { storeNote } from './prompt-memory.js';
import { agentUncertainty } from '../rules/uncertainty-signal.js';

/** A signal file is read up to this size; the rest is ignored. */
const MAX_SIGNAL_BYTES = 256 * 1024;

export const SIGNAL_FILES = ['HUMAN_REVIEW_NEEDED', 'DRIFT_DETECTED', 'CONTEXT_CLEAR_REQUESTED', 'UNCERTAINTY_ESCALATION'] as const;

const HumanReviewSchema = z.object({
  reason: z.string().min(1),
  blocking: z.boolean().optional(),
  questions: z.array(z.string()).optional(),
  /** What the agent would do if nobody answers: taken at the deadline with onDeadline=default-answer. */
  defaultAnswer: z.string().min(1).optional(),
});

export async function readAgentSignals(raw: ReadSignalsInput): Promise<AgentSignals> {
  const input = ReadSignalsInputSchema.parse(raw);
  requireRepository(input.repoPath);
  const consumed = path.join(runDir(input.repoPath, input.runId), 'signals', `iteration-${pad(input.iteration)}`);
  // Made when a file is consumed: most iterations send none, and leave no empty folder behind.
  let made = false;
  const makeConsumed = (): void => {
    if (!made) ensureRepoDir(input.repoPath, consumed);
    made = true;
  };
  const problems: string[] = [];
  for (const name of SIGNAL_FILES) {
    // Atomic: the file is either still there or consumed. A link is removed unread: its target
    // (any file on the machine) must never reach a notification or history.
    if (consumeFile(signalPath(input.repoPath, name), path.join(consumed, name), makeConsumed) === 'link-removed') {
      problems.push(`${name} was a symbolic link or not a regular file; removed unread`);
    }
  }

  const read = (name: string): string | null => {
    const r = readRegularFile(path.join(consumed, name), MAX_SIGNAL_BYTES);
    if (r === null) return null;
    if (!r.ok) {
      problems.push(r.problem);
      return null;
    }
    return r.text;
  };

  let humanReview: AgentSignals['humanReview'] = null;
  const hr = read('HUMAN_REVIEW_NEEDED');
  if (hr !== null) {
    let parsed: z.infer<typeof HumanReviewSchema> | null = null;
    try {
      const r = HumanReviewSchema.safeParse(JSON.parse(hr));
      if (r.success) parsed = r.data;
      else problems.push(`HUMAN_REVIEW_NEEDED: ${r.error.issues.map((i) => `${i.path.join('.') || '(file)'}: ${i.message}`).join('; ')}`);
    } catch (err) {
      problems.push(`HUMAN_REVIEW_NEEDED is not JSON: ${err instanceof Error ? err.message : String(err)}`.slice(0, 500));
    }
    // An unreadable request still reaches a person: its text becomes the reason.
    humanReview = parsed
      ? {
          reason: parsed.reason.slice(0, 1000),
          blocking: parsed.blocking ?? false,
          questions: (parsed.questions ?? []).slice(0, 20).map((q) => q.slice(0, 1000)),
          defaultAnswer: parsed.defaultAnswer?.trim() ? parsed.defaultAnswer.trim().slice(0, 4000) : null,
        }
      : { reason: (hr.trim() || 'the agent asked for a human review').slice(0, 1000), blocking: false, questions: [], defaultAnswer: null };
  }

  const unsure = read('UNCERTAINTY_ESCALATION');
  const unsureWhy = unsure === null ? null : agentUncertainty(unsure);
  humanReview ??= unsureWhy
    ? { reason: `the agent is unsure: ${unsureWhy}`.slice(0, 1000), blocking: false, questions: [], defaultAnswer: null }
    : null;

  let driftReports = 0;
  const drift = read('DRIFT_DETECTED');
  if (drift !== null) {
    for (const line of drift.split('\n').filter((l) => l.trim())) {
      try {
        JSON.parse(line);
        driftReports += 1;
      } catch {
        if (problems.length < 10) problems.push(`DRIFT_DETECTED: a line is not JSON: ${line.slice(0, 200)}`);
      }
    }
  }

  const notes = input.notes ? readAgentNotes(input.repoPath, consumed, makeConsumed) : { summary: null, continuity: null, problems: [] };
  problems.push(...notes.problems);
  return {
    humanReview,
    driftReports,
    contextClearRequested: read('CONTEXT_CLEAR_REQUESTED') !== null,
    problems: problems.slice(0, 10),
    summary: notes.summary,
    // By reference, the text stays in the run's prompt-parts store (activities/prompt-memory.ts).
    continuity: input.notesByRef ? null : notes.continuity,
    continuityRef: input.notesByRef ? storeNote(input.repoPath, input.runId, notes.continuity) : null,
  };
}
