/**
 * An empty call of a `command` agent (spec §1.8, `provider_empty_output`): the builder exited 0
 * having printed nothing (or only blank lines), changed nothing in the repository and claimed
 * nothing (no claim, no signal file, no note). It did no work and said so in no way, so it is a failed call, not a good iteration
 * (the seed forces such an exit to 1). Vigil asks for the unchanged tree as well: a silent
 * script that did its work (wrote files) is a good iteration.
 *
 * Only the `command` provider: a preset CLI's empty output is read by its preset (a structured
 * CLI always prints its records; a missing usage report is its own failure).
 */

/** The exit code an empty call is recorded with (the seed's). */
export const EMPTY_CALL_EXIT = 1;

/** How much output the result's tail holds whole: below it, a blank tail is blank output. */
const WHOLE_TAIL_BYTES = 1500;

export interface EmptyCallFacts {
  provider: string | null;
  role: string;
  exitCode: number;
  timedOut: boolean;
  /** Bytes the call printed (stdout and stderr). */
  outputBytes: number;
  /** The output's tail, as the result carries it. */
  tail: string;
  /** Whether the tree differs from the one before the call; null: cannot tell (never empty then). */
  treeChanged: boolean | null;
  claimed: boolean;
  /** Whether the agent left a signal file or a note Vigil read (a request for a person, a summary, ...). */
  signalled: boolean;
}

/** Why the call counts as failed (the line the tail ends with), or null: it did something. */
export function emptyCall(f: EmptyCallFacts): string | null {
  if ((f.provider ?? 'command') !== 'command' || f.role !== 'iteration') return null;
  if (f.exitCode !== 0 || f.timedOut || f.claimed || f.signalled || f.treeChanged !== false) return null;
  const blank = f.outputBytes === 0 || (f.outputBytes <= WHOLE_TAIL_BYTES && f.tail.trim() === '');
  if (!blank) return null;
  return (
    'vigil: the agent exited 0 with no output and no change to the repository (an empty call, provider_empty_output): ' +
    `counted as a failed call (exit ${EMPTY_CALL_EXIT}). Check that the agent command reads the prompt on stdin and does the work.`
  );
}

/** Whether the tree changed, from the inspection: against the previous tree, else against the run's start. */
export function treeChangedOf(
  previousTree: string | null,
  runStartSha: string | null,
  snapshot: { treeHash: string; changedCount: number } | null,
): boolean | null {
  if (snapshot === null) return null;
  if (previousTree !== null) return snapshot.treeHash !== previousTree;
  if (runStartSha !== null) return snapshot.changedCount > 0;
  return null;
}

/** Whether the signal files read after the call hold anything from the agent. */
export function signalledOf(
  s: {
    humanReview: unknown;
    driftReports: number;
    contextClearRequested: boolean;
    summary: string | null;
    continuity?: string | null;
    continuityRef?: unknown;
  } | null,
): boolean {
  if (s === null) return false;
  return s.humanReview !== null || s.driftReports > 0 || s.contextClearRequested || !!s.summary || !!s.continuity || !!s.continuityRef;
}
