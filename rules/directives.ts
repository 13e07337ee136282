/**
 * Whether one more human directive may wait for the next prompt. Pending directives all travel in
 * the next agent call's input, so their count and their total size are bounded well below
 * Temporal's 2 MiB payload limit: past it, every workflow task of the run would fail.
 */
import { utf8Length } from '../schemas/messages.js';
import { LIMITS, type Directive } from '../schemas/run.js';

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
