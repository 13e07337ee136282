/**
 * Telling people: a notification to every configured channel (recorded, never fatal), an
 * escalation (a handoff, a notification, then a pause in supervised mode), the budget warning.
 *
 * Workflow code: deterministic, no I/O.
 */
import type { NotifyEvent } from '../../schemas/notify.js';
import type { TestRunRecord } from '../../schemas/run.js';
import { ActivityFailure } from '@temporalio/common';
import type { Outcome } from '../../schemas/run.js';
import { budgetWarning } from '../../rules/budget.js';
import { attemptsLog } from '../../rules/handoff-lines.js';
import type { TriggerNotice } from '../../rules/notify-triggers.js';
import { escalationEvent } from '../../rules/journal.js';
import type { Proxies } from '../../rules/uncertainty.js';
import { escalate, recordNotification, sendNotification } from '../escalation.js';
import { verdictSummary } from '../../rules/ui.js';
import { type Run } from './run.js';

/** The tests as a handoff states them: no runner and an inconclusive run are not failures. */
export function handoffTestsLine(t: TestRunRecord): string {
  if (t.runner === 'none') return `no test runner found (iteration ${t.iteration})`;
  if (t.verdict === 'inconclusive') return `inconclusive at iteration ${t.iteration}${t.reason ? ` (${t.reason})` : ''}; log ${t.logPath}`;
  return `${t.passed ? 'passing' : t.timedOut ? 'timed out' : `failing (exit ${t.exitCode})`} at iteration ${t.iteration}; log ${t.logPath}`;
}

/** One notification to every configured channel; its delivery is recorded, never fatal. */
export async function notifyPeople(
  run: Run,
  event: NotifyEvent,
  title: string,
  message: string,
  severity: 'info' | 'warning' | 'critical',
  details: Record<string, unknown>,
  dedupeKey: string,
) {
  const { state, knobs, input, info } = run;
  const { people } = run.acts;
  const at = run.nowIso();
  const r = await sendNotification(people, {
    runId: info.workflowId,
    repoPath: input.repoPath,
    knobs,
    event,
    title,
    message,
    severity,
    details,
    dedupeKey,
    at,
  });
  state.notifications = recordNotification(state.notifications, r, event, at, r === null && hasChannel(run));
  if (r) run.recordEvent({ kind: 'notification', event, delivered: r.delivered, failed: r.failed, title: title.slice(0, 200), severity });
  return r;
}

/**
 * What the notification triggers ask to say (rules/notify-triggers.ts), one notification each.
 * Only in runs started with `notifyTriggers` (a field of the run's input no older run has: its
 * history replays without these calls, no patch needed).
 */
export async function tellPeople(run: Run, notices: readonly (TriggerNotice | null)[]): Promise<void> {
  if (!run.input.notifyTriggers) return;
  for (const n of notices) if (n) await notifyPeople(run, n.event, n.title, n.message, n.severity, n.details, n.dedupeKey);
}

export function hasChannel(run: Run): boolean {
  const { knobs } = run;
  return Boolean(
    knobs.notifyWebhookUrl || knobs.notifySlackWebhookUrl || knobs.notifyDiscordWebhookUrl || knobs.notifyFile || knobs.notifyDesktop,
  );
}

export type EscalationReason = 'uncertainty' | 'tier_exhausted' | 'agent_request' | 'dead_letter' | 'gate_failing';
/** What an escalation is about: the reason, a headline, the signals, open questions, whether to pause, the uncertainty proxies. */
export type EscalationArgs = [
  reason: EscalationReason,
  headline: string,
  signals: string[],
  questions: string[],
  pause: boolean,
  proxies: Proxies | null,
  /** The agent's default answer to its question, kept on the pause for onDeadline=default-answer. */
  defaultAnswer?: string | null,
];

/** Handoff, notification, then the mode's consequence: a pause in supervised mode (or when asked to block). */
export async function escalateToPerson(
  run: Run,
  ...[reason, headline, signals, questions, pause, proxies, defaultAnswer]: EscalationArgs
): Promise<void> {
  const { state, knobs, input, info } = run;
  const { repo, people } = run.acts;
  const lastVerdict = state.council.verdicts.at(-1);
  const t = state.lastTests;
  const out = await escalate(
    { files: repo, people },
    {
      knobs,
      at: run.nowIso(),
      proxies,
      handoff: {
        runId: info.workflowId,
        repoPath: input.repoPath,
        runStartSha: state.runStart?.sha ?? null,
        iteration: state.iteration,
        reason,
        headline,
        signals,
        mode: knobs.autonomyMode,
        paused: pause,
        lastCouncil: lastVerdict ? verdictSummary(lastVerdict) : null,
        lastTests: t ? handoffTestsLine(t) : null,
        openQuestions: questions,
        attempts: attemptsLog(state.recentIterations),
      },
    },
  );
  state.escalations = [...state.escalations, out.record].slice(-20);
  run.recordEvent(escalationEvent(out.record));
  state.notifications = recordNotification(
    state.notifications,
    out.notifyResult,
    'escalation',
    out.record.at,
    out.notifyResult === null && hasChannel(run),
  );
  state.latestHandoff = { iteration: state.iteration, path: out.handoff.markdownPath, summary: out.handoff.summary };
  state.handoffContextPending = true;
  run.sdk.log.warn('escalated to a person', { reason, iteration: state.iteration, paused: pause });
  if (pause && !state.pause)
    state.pause = {
      reason: `escalation (${reason.replace(/_/g, ' ')}): ${headline}`.slice(0, 2000),
      by: 'vigil',
      at: run.nowIso(),
      ...(defaultAnswer ? { defaultAnswer: defaultAnswer.slice(0, 4000) } : {}),
    };
  run.publish();
}

/** The 80 % budget warning, once per budget value. */
export function budgetWarningDue(run: Run): boolean {
  const { state, knobs } = run;
  const budget = state.budgetUsd ?? knobs.budgetUsd;
  return budgetWarning(state.spend.usd, budget, state.budgetWarnedAt === budget);
}

export async function warnOnBudget(run: Run): Promise<void> {
  const { state, knobs, info } = run;
  if (!budgetWarningDue(run)) return;
  const budget = state.budgetUsd ?? knobs.budgetUsd;
  state.budgetWarnedAt = budget;
  const spent = `$${state.spend.usd.toFixed(2)} of $${budget.toFixed(2)}`;
  await notifyPeople(
    run,
    'budget_warning',
    `80% of the budget spent: ${spent}`,
    `The run has spent ${spent} at iteration ${state.iteration}; it pauses when the budget is reached. Raise it with \`vigil ` +
      `budget ${info.workflowId} --usd N\`.`,
    'warning',
    { spentUsd: state.spend.usd, budgetUsd: budget, iteration: state.iteration },
    `${info.workflowId}:budget_warning:${budget}`,
  );
}

/**
 * The session-end handoff: how the run ended, what was tried, what was built, in the run folder's
 * HANDOFF.md (and `.vigil/handoffs/`). Only in runs started with `notifyTriggers` (absent in older
 * runs, whose histories replay without this call: no patch). Never fails the run.
 */
export async function writeSessionHandoff(run: Run, o: Outcome): Promise<void> {
  const { state, knobs, input, info } = run;
  if (!input.notifyTriggers) return;
  const lastVerdict = state.council.verdicts.at(-1);
  const t = state.lastTests;
  const handoff = {
    runId: info.workflowId,
    repoPath: input.repoPath,
    runStartSha: state.runStart?.sha ?? null,
    iteration: state.iteration,
    reason: 'session_end' as const,
    headline: `the run ended: ${o.status}`,
    signals: [o.reason, ...o.notes].slice(0, 20).map((l) => l.slice(0, 500)),
    mode: knobs.autonomyMode,
    paused: false,
    lastCouncil: lastVerdict ? verdictSummary(lastVerdict) : null,
    lastTests: t ? handoffTestsLine(t) : null,
    openQuestions: [],
    attempts: attemptsLog(state.recentIterations),
  };
  try {
    // Not the run's latestHandoff: that stays the last escalation's, which status, the console and `vigil handoff` show.
    await run.sdk.nonCancellable(() =>
      run.acts.repo.writeHandoff.executeWithOptions({ summary: `handoff: the run ended (${o.status})` }, [handoff]),
    );
  } catch (err) {
    if (!(err instanceof ActivityFailure)) throw err;
    run.sdk.log.warn('the session-end handoff was not written', { error: err.cause?.message ?? err.message });
  }
}
