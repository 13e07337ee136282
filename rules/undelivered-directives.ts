/**
 * The note a run's outcome carries when it ended with human directives that no prompt carried,
 * and how the CLI and the UI recognise it. No runtime imports: `vigil status` loads it.
 *
 * Sandbox-safe: pure functions.
 */
import type { Directive } from '../schemas/run.js';

const UNDELIVERED = 'human directive(s) never reached a prompt, the run ended first';

/** Whether an outcome's note is the one undeliveredNote writes. */
export const isUndeliveredNote = (note: string): boolean => note.includes(UNDELIVERED);

/** The outcome's note for directives no prompt carried: how many, and whose (the first three, clipped). */
export function undeliveredNote(pending: readonly Directive[]): string {
  const clip = (t: string): string => {
    const line = t.replace(/\s+/g, ' ').trim();
    return line.length > 60 ? `${line.slice(0, 59)}…` : line;
  };
  const shown = pending.slice(0, 3).map((d) => `${d.by} at ${d.at}: "${clip(d.text)}"`);
  const more = pending.length > shown.length ? `; and ${pending.length - shown.length} more` : '';
  return `${pending.length} ${UNDELIVERED} (${shown.join('; ')}${more})`;
}

/**
 * The outcome's note for directives the prompt of a call the run interrupted carried (stop
 * --now): they reached a prompt, but the agent may not have acted on them.
 */
export function interruptedNote(carried: readonly Directive[], iteration: number): string {
  const who = [...new Set(carried.map((d) => d.by))].slice(0, 3).join(', ');
  return (
    `${carried.length} human directive(s) (from ${who}) were in the prompt of iteration ${iteration}, which the stop ` +
    `interrupted: the agent may not have acted on them`
  );
}
