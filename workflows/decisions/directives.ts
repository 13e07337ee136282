/**
 * Whether one more human directive may wait for the next prompt. Pending directives all travel in
 * the next agent call's input, so their count and their total size are bounded well below
 * Temporal's 2 MiB payload limit: past it, every workflow task of the run would fail.
 */
import { utf8Length } from '../../schemas/messages.js';
import { LIMITS, type Directive } from '../../schemas/run.js';

/** Null when `text` may be queued behind `pending`, else the reason it may not (for the sender). */
export function directiveRefusal(pending: readonly Directive[], text: string): string | null {
  if (pending.length >= LIMITS.pendingDirectives) {
    return `too many pending directives (${LIMITS.pendingDirectives}); wait for the next iteration to take them`;
  }
  const queued = pending.reduce((n, d) => n + utf8Length(d.text), 0);
  const size = utf8Length(text);
  if (queued + size > LIMITS.pendingDirectiveBytes) {
    return (
      `pending directives would total ${queued + size} bytes, over the ${LIMITS.pendingDirectiveBytes} bytes (1 MiB) that may wait for one prompt ` +
      `(${queued} bytes already queued); wait for the next iteration, or send a shorter directive (a path to a file works too)`
    );
  }
  return null;
}

/** The outcome's note for directives no prompt carried: how many, and whose (the first three, clipped). */
export function undeliveredNote(pending: readonly Directive[]): string {
  const clip = (t: string): string => {
    const line = t.replace(/\s+/g, ' ').trim();
    return line.length > 60 ? `${line.slice(0, 59)}…` : line;
  };
  const shown = pending.slice(0, 3).map((d) => `${d.by} at ${d.at}: "${clip(d.text)}"`);
  const more = pending.length > shown.length ? `; and ${pending.length - shown.length} more` : '';
  return `${pending.length} human directive(s) never reached a prompt, the run ended first (${shown.join('; ')}${more})`;
}
