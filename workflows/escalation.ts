/**
 * Telling a person, orchestrated: notifications (a failing channel never fails or blocks the run;
 * its failure is kept for status) and the escalation action (a handoff document, one
 * notification, then the autonomy mode's consequence, which the caller applies).
 *
 * Workflow code: deterministic, no I/O.
 */
import { ActivityFailure, type ActivityInterfaceFor } from '@temporalio/workflow';
import type * as activities from '../activities/index.js';
import type { HandoffResult, WriteHandoffInput } from '../schemas/activities.js';
import type { Knobs } from '../schemas/knobs.js';
import type { NotifyChannels, NotifyEvent, NotifyResult } from '../schemas/notify.js';
import { runDirPath } from '../schemas/paths.js';
import type { EscalationRecord, NotificationStatus } from '../schemas/run.js';

type Acts = ActivityInterfaceFor<typeof activities>;

export function channelsOf(k: Knobs): NotifyChannels {
  return {
    webhookUrl: k.notifyWebhookUrl,
    slackWebhookUrl: k.notifySlackWebhookUrl,
    discordWebhookUrl: k.notifyDiscordWebhookUrl,
    file: k.notifyFile,
    desktop: k.notifyDesktop,
  };
}

/** The second list: who is told when a pause that waits for a person is still unanswered at escalationRerouteAfter. */
export function rerouteChannelsOf(k: Knobs): NotifyChannels {
  return {
    webhookUrl: k.rerouteWebhookUrl,
    slackWebhookUrl: k.rerouteSlackWebhookUrl,
    discordWebhookUrl: k.rerouteDiscordWebhookUrl,
    file: k.rerouteFile,
    desktop: false,
  };
}

export const anyChannel = (c: NotifyChannels): boolean =>
  Boolean(c.webhookUrl || c.slackWebhookUrl || c.discordWebhookUrl || c.file || c.desktop);

/** Which lists of channels a pause's reminder and re-route have (rules/pause-deadlines.ts). */
export const deadlineChannels = (k: Knobs): { main: boolean; reroute: boolean } => ({
  main: anyChannel(channelsOf(k)),
  reroute: anyChannel(rerouteChannelsOf(k)),
});

export interface NotifyRequest {
  runId: string;
  repoPath: string;
  knobs: Knobs;
  event: NotifyEvent;
  title: string;
  message: string;
  severity: 'info' | 'warning' | 'critical';
  details: Record<string, unknown>;
  /** Deterministic: the same event is delivered once per channel, across retries and replays. */
  dedupeKey: string;
  at: string;
  /** Where it goes: the run's channels (notify*) unless said otherwise (the re-route's second list). */
  channels?: NotifyChannels;
}

/** Sends a notification; returns null when nothing is configured or the activity itself failed. */
export async function sendNotification(acts: Pick<Acts, 'notify'>, r: NotifyRequest): Promise<NotifyResult | null> {
  const channels = r.channels ?? channelsOf(r.knobs);
  if (!anyChannel(channels)) return null;
  try {
    return await acts.notify.executeWithOptions({ summary: `notify: ${r.event} — ${r.title.slice(0, 80)}` }, [
      {
        notification: {
          event: r.event,
          runId: r.runId,
          title: r.title.slice(0, 200),
          message: r.message.slice(0, 4000),
          severity: r.severity,
          time: r.at,
          details: r.details,
          dedupeKey: r.dedupeKey,
        },
        channels,
        timeoutMs: r.knobs.notifyTimeoutSeconds * 1000,
        ledgerPath: `${runDirPath(r.repoPath, r.runId)}/notifications.ledger.jsonl`,
      },
    ]);
  } catch (err) {
    if (err instanceof ActivityFailure) return null;
    throw err;
  }
}

/** Folds a delivery result into the run's notification status (bounded). */
export function recordNotification(
  s: NotificationStatus,
  result: NotifyResult | null,
  event: string,
  at: string,
  activityFailed: boolean,
): NotificationStatus {
  if (!result) {
    return activityFailed
      ? {
          sent: s.sent,
          failed: s.failed + 1,
          recentFailures: [...s.recentFailures, { event, channel: 'all', error: 'the notification activity failed', at }].slice(-10),
        }
      : s;
  }
  const failures = result.results
    .filter((c) => !c.ok)
    .map((c) => ({ event, channel: c.channel, error: (c.error ?? 'failed').slice(0, 500), at }));
  return {
    sent: s.sent + result.delivered,
    failed: s.failed + result.failed,
    recentFailures: [...s.recentFailures, ...failures].slice(-10),
  };
}

export interface EscalationInput {
  /** An escalation's handoff (never the session end's). */
  handoff: WriteHandoffInput & { reason: EscalationRecord['reason'] };
  knobs: Knobs;
  at: string;
  /** The record keeps these proxies (uncertainty escalations). */
  proxies: EscalationRecord['proxies'];
}

export interface EscalationOutput {
  record: EscalationRecord;
  handoff: HandoffResult;
  notifyResult: NotifyResult | null;
}

/**
 * Writes the handoff (with `files`: git and file activities) and sends the escalation
 * notification (with `people`). The caller pauses (or not).
 */
export async function escalate(
  deps: { files: Pick<Acts, 'writeHandoff'>; people: Pick<Acts, 'notify'> },
  e: EscalationInput,
): Promise<EscalationOutput> {
  const h = e.handoff;
  const handoff = await deps.files.writeHandoff.executeWithOptions({ summary: `handoff: ${h.reason} at iteration ${h.iteration}` }, [h]);
  const notifyResult = await sendNotification(deps.people, {
    runId: h.runId,
    repoPath: h.repoPath,
    knobs: e.knobs,
    event: 'escalation',
    title: `Vigil needs a person: ${h.headline}`,
    message:
      `${handoff.summary}\n` +
      (h.paused ? 'The run is paused until you resume, redirect or stop it.' : 'The run did not pause (perpetual mode); it keeps going.') +
      `\nHandoff: ${handoff.markdownPath}`,
    severity: 'critical',
    details: { iteration: h.iteration, reason: h.reason, paused: h.paused, mode: h.mode, handoff: handoff.jsonPath },
    dedupeKey: `${h.runId}:escalation:${h.iteration}:${h.reason}`,
    at: e.at,
  });
  return {
    handoff,
    notifyResult,
    record: {
      iteration: h.iteration,
      reason: h.reason,
      detail: h.headline.slice(0, 1000),
      proxies: e.proxies,
      handoffPath: handoff.jsonPath,
      handoffMarkdownPath: handoff.markdownPath,
      mode: h.mode,
      paused: h.paused,
      notified: { delivered: notifyResult?.delivered ?? 0, failed: notifyResult?.failed ?? 0 },
      at: e.at,
      questions: h.openQuestions.slice(0, 5).map((q) => q.slice(0, 300)),
    },
  };
}
