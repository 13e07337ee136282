/**
 * The sandbox in words, for status, watch, the console and the Temporal UI card (re-exported by
 * rules/ui.ts).
 *
 * Pure: no clocks, randomness, environment or I/O.
 */
import type { SandboxState } from '../schemas/sandbox.js';

/** One line per refused attempt, newest first, for status and watch ("connect 127.0.0.1:7233 ×3 (builder, iteration 2)"). */
export function deniedLines(state: SandboxState, max = 8): string[] {
  const lines = [...state.denied]
    .reverse()
    .slice(0, max)
    .map((d) => `${d.kind} ${d.target}${d.count > 1 ? ` ×${d.count}` : ''} (${d.role}, iteration ${d.iteration})`);
  const shown = state.denied.slice(-max).reduce((n, d) => n + d.count, 0);
  if (state.deniedTotal > shown)
    lines.push(
      `… ${state.deniedTotal - shown} more refused attempt${state.deniedTotal - shown === 1 ? '' : 's'} (each call's log has them)`,
    );
  return lines;
}

/** The sandbox in one line: how the latest call ran, or why it ran outside it. */
export function sandboxLine(state: SandboxState, mode: string): string {
  const l = state.last;
  if (!l) return `sandbox=${mode}: no call has run yet`;
  if (!l.applied)
    return (
      `sandbox=${l.mode}: NOT isolated — ` +
      `${l.reason ?? 'unknown reason'}${state.unsandboxedCalls > 1 ? ` (${state.unsandboxedCalls} calls ran outside it)` : ''}`
    );
  const refused = state.deniedTotal > 0 ? `; ${state.deniedTotal} escape attempt${state.deniedTotal === 1 ? '' : 's'} refused` : '';
  return `sandbox=${l.mode}: ${l.isolation}${refused}`;
}
