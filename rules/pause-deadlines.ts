/**
 * Questions with deadlines: what a pause that waits for a person does while nobody answers. At
 * `escalationRemindAfter` its notification goes again on its channels, at `escalationRerouteAfter`
 * the second list of channels (reroute*) is told, and at `escalationDeadline` the run does
 * what `onDeadline` says. Every time is counted from the pause's start (`pause.at`, carried across
 * continue-as-new), so a restart or a fresh history changes nothing; any answer (a resume, a
 * directive, a stop) cancels them all.
 *
 * Pure: the time comes in as an argument.
 */
import type { Knobs } from '../schemas/knobs.js';
import type { PauseDeadlines, PauseInfo } from '../schemas/run.js';

export type DeadlineKnobs = Pick<Knobs, 'escalationRemindAfter' | 'escalationRerouteAfter' | 'escalationDeadline' | 'onDeadline'>;

/** Which lists of channels the run has: the pause's own, and the second list for the re-route. */
export interface DeadlineChannels {
  main: boolean;
  reroute: boolean;
}

/** A pause waits for a person when Vigil paused the run (an escalation, a dead letter, a refusal...), not when a person or a tool did. */
export function waitsForPerson(pause: PauseInfo | null): pause is PauseInfo {
  return pause !== null && pause.by === 'vigil';
}

/** The pause's timers as times (ms); null where a timer does not apply (its knob is 0, no channel, answered). */
export function pauseTimers(
  pause: PauseInfo | null,
  knobs: DeadlineKnobs,
  channels: DeadlineChannels,
): { remindAtMs: number | null; rerouteAtMs: number | null; deadlineAtMs: number | null } {
  const none = { remindAtMs: null, rerouteAtMs: null, deadlineAtMs: null };
  if (!waitsForPerson(pause) || pause.answered) return none;
  const start = Date.parse(pause.at);
  if (!Number.isFinite(start)) return none;
  const at = (seconds: number, on: boolean): number | null => (seconds > 0 && on ? start + seconds * 1000 : null);
  return {
    remindAtMs: at(knobs.escalationRemindAfter, channels.main),
    rerouteAtMs: at(knobs.escalationRerouteAfter, channels.reroute),
    deadlineAtMs: at(knobs.escalationDeadline, true),
  };
}

export type DeadlineAction = 'stop' | 'continue' | 'default-answer';
export type PauseStep = { kind: 'remind' } | { kind: 'reroute' } | { kind: 'deadline'; action: DeadlineAction; note: string };

/**
 * What is due now, else when the next thing is (null: nothing left to wait for but the person).
 * In order: the reminder, the re-route, the deadline; each once (the pause records what was sent).
 * `default-answer` without a default answer stops: nobody, not even the agent, said what to do.
 */
export function duePauseStep(
  pause: PauseInfo | null,
  knobs: DeadlineKnobs,
  channels: DeadlineChannels,
  nowMs: number,
): { due: PauseStep | null; nextAtMs: number | null } {
  const t = pauseTimers(pause, knobs, channels);
  if (!pause) return { due: null, nextAtMs: null };
  const pending: { atMs: number; step: PauseStep }[] = [];
  if (t.remindAtMs !== null && !pause.reminded) pending.push({ atMs: t.remindAtMs, step: { kind: 'remind' } });
  if (t.rerouteAtMs !== null && !pause.rerouted) pending.push({ atMs: t.rerouteAtMs, step: { kind: 'reroute' } });
  if (t.deadlineAtMs !== null) {
    const action: DeadlineAction = knobs.onDeadline === 'default-answer' && !pause.defaultAnswer ? 'stop' : knobs.onDeadline;
    pending.push({ atMs: t.deadlineAtMs, step: { kind: 'deadline', action, note: deadlineNote(knobs, pause) } });
  }
  const due = pending.filter((p) => p.atMs <= nowMs).sort((a, b) => a.atMs - b.atMs)[0];
  if (due) return { due: due.step, nextAtMs: due.atMs };
  const next = pending.map((p) => p.atMs).sort((a, b) => a - b)[0];
  return { due: null, nextAtMs: next ?? null };
}

/** What the outcome and the journal say at the deadline: "nobody answered in 72 h: stopped". */
export function deadlineNote(knobs: DeadlineKnobs, pause: PauseInfo): string {
  const waited = `nobody answered in ${spokenDuration(knobs.escalationDeadline)}`;
  if (knobs.onDeadline === 'continue') return `${waited}: continued without an answer`;
  if (knobs.onDeadline === 'default-answer')
    return pause.defaultAnswer
      ? `${waited}: continued with the agent's default answer`
      : `${waited}: stopped (onDeadline is default-answer, but the question carried no default answer)`;
  return `${waited}: stopped`;
}

/** A duration as a person reads it: 45 s, 20 min, 72 h, 10 d. */
export function spokenDuration(seconds: number): string {
  const s = Math.max(0, Math.round(seconds));
  if (s < 120) return `${s} s`;
  if (s < 2 * 3600) return `${Math.round(s / 60)} min`;
  if (s < 10 * 86_400) return `${Math.round(s / 3600)} h`;
  return `${Math.round(s / 86_400)} d`;
}

/** The pause's deadlines as status shows them (ISO times; null where a timer does not apply). */
export function pauseDeadlines(pause: PauseInfo | null, knobs: DeadlineKnobs, channels: DeadlineChannels): PauseDeadlines | null {
  if (!waitsForPerson(pause)) return null;
  const t = pauseTimers(pause, knobs, channels);
  const iso = (ms: number | null): string | null => (ms === null ? null : new Date(ms).toISOString());
  return {
    remindAt: iso(t.remindAtMs),
    rerouteAt: iso(t.rerouteAtMs),
    deadlineAt: iso(t.deadlineAtMs),
    onDeadline: knobs.onDeadline,
    reminded: pause.reminded ?? null,
    rerouted: pause.rerouted ?? null,
    answered: pause.answered ?? null,
  };
}

/** One line for the status: "reminder sent 2 h ago; re-routed in 22 h; stops in 70 h" (empty when no timer applies). */
export function deadlinesLine(d: PauseDeadlines | null | undefined, nowMs: number): string {
  if (!d) return '';
  if (d.answered) return `answered by ${d.answered.by}; no reminder or deadline`;
  const parts: string[] = [];
  const since = (iso: string): string => spokenDuration((nowMs - Date.parse(iso)) / 1000);
  const until = (iso: string): string => spokenDuration((Date.parse(iso) - nowMs) / 1000);
  if (d.reminded) parts.push(`reminder sent ${since(d.reminded)} ago`);
  else if (d.remindAt) parts.push(`reminder in ${until(d.remindAt)}`);
  if (d.rerouted) parts.push(`re-routed ${since(d.rerouted)} ago`);
  else if (d.rerouteAt) parts.push(`re-routed in ${until(d.rerouteAt)}`);
  if (d.deadlineAt) {
    const verb = d.onDeadline === 'stop' ? 'stops' : d.onDeadline === 'continue' ? 'continues' : 'takes the default answer';
    parts.push(`${verb} in ${until(d.deadlineAt)}`);
  }
  return parts.join('; ');
}
