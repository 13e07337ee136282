/**
 * Notifications: what a run tells people (event, title, message, severity), where it goes (the
 * channels), and what happened per channel. A failing channel is reported, never thrown.
 *
 * Sandbox-safe: imported by the workflow bundle (zod only).
 */
import { z } from 'zod';
import { shared } from './shared.js';

export const NOTIFY_EVENTS = [
  'escalation',
  'paused',
  'budget_exceeded',
  'budget_warning',
  'auth_failed',
  'run_finished',
  'rate_limited',
  'pause_reminder',
  'pause_rerouted',
  'pause_deadline',
  // The triggers of rules/notify-triggers.ts (runs started with `notifyTriggers`).
  'gate_failed',
  'stuck',
  'sensitive_file',
  'context_high',
  'compactions',
] as const;
export const NotifyEventSchema = shared('schemas/notify:NotifyEventSchema', () => z.enum(NOTIFY_EVENTS));
export type NotifyEvent = z.infer<typeof NotifyEventSchema>;

export const NOTIFY_SEVERITIES = ['info', 'warning', 'critical'] as const;
export const NotifySeveritySchema = shared('schemas/notify:NotifySeveritySchema', () => z.enum(NOTIFY_SEVERITIES));
export type NotifySeverity = z.infer<typeof NotifySeveritySchema>;

/** Channels in the order they appear in results. */
export const NOTIFY_CHANNEL_NAMES = ['webhook', 'slack', 'discord', 'file', 'desktop'] as const;
export const NotifyChannelNameSchema = shared('schemas/notify:NotifyChannelNameSchema', () => z.enum(NOTIFY_CHANNEL_NAMES));
export type NotifyChannelName = z.infer<typeof NotifyChannelNameSchema>;

/** The failure type thrown (non-retryable) when the input does not parse. */
export const INVALID_NOTIFICATION = 'InvalidNotification';

/** HTTP delivery: attempts per channel, waits between them, and the cap on a Retry-After wait. */
export const NOTIFY_MAX_ATTEMPTS = 4;
export const NOTIFY_BACKOFF_MS = [500, 1000, 2000] as const;
export const NOTIFY_RETRY_AFTER_CAP_MS = 5000;
export const NOTIFY_DESKTOP_TIMEOUT_MS = 5000;
/** Longest details accepted, as JSON. */
export const NOTIFY_DETAILS_MAX_CHARS = 8192;

/** Upper bound on one notify activity (channels run concurrently): every attempt times out and every wait is capped. */
export function notifyWorstCaseMs(timeoutMs: number): number {
  return NOTIFY_MAX_ATTEMPTS * timeoutMs + (NOTIFY_MAX_ATTEMPTS - 1) * NOTIFY_RETRY_AFTER_CAP_MS;
}

/** A URL, or `env:NAME`: the URL is read from the worker's environment, so it never enters history. */
export const WORKER_ENV_REF = /^env:[A-Za-z_][A-Za-z0-9_]*$/;
const webhookUrl = shared('schemas/notify:webhookUrl', () =>
  z.union([z.literal(''), z.url({ protocol: /^https?$/ }).max(2048), z.string().regex(WORKER_ENV_REF)]),
);

export const NotifyChannelsSchema = shared('schemas/notify:NotifyChannelsSchema', () =>
  z.object({
    /** Generic JSON webhook; '' = off. */
    webhookUrl,
    /** Slack incoming webhook; '' = off. */
    slackWebhookUrl: webhookUrl,
    /** Discord webhook; '' = off. */
    discordWebhookUrl: webhookUrl,
    /** Path of a JSONL file each notification is appended to; '' = off. */
    file: z.string().max(4096),
    /** Desktop notification through notify-send, where installed. */
    desktop: z.boolean(),
  }),
);
export type NotifyChannels = z.infer<typeof NotifyChannelsSchema>;

export const NotificationSchema = shared('schemas/notify:NotificationSchema', () =>
  z.object({
    event: NotifyEventSchema,
    runId: z.string().min(1).max(1000),
    title: z.string().max(200),
    message: z.string().max(4000),
    severity: NotifySeveritySchema,
    /** ISO time of the event (workflow time). */
    time: z.iso.datetime({ offset: true }),
    /** Small structured facts (at most NOTIFY_DETAILS_MAX_CHARS as JSON). */
    details: z.record(z.string(), z.unknown()).refine((d) => (JSON.stringify(d)?.length ?? 0) <= NOTIFY_DETAILS_MAX_CHARS, {
      message: `details must be at most ${NOTIFY_DETAILS_MAX_CHARS} characters as JSON`,
    }),
    /** Deterministic key: the notification is delivered once per (dedupeKey, channel). */
    dedupeKey: z.string().min(1).max(500),
  }),
);
export type Notification = z.infer<typeof NotificationSchema>;

export const NotifyInputSchema = shared('schemas/notify:NotifyInputSchema', () =>
  z.object({
    notification: NotificationSchema,
    channels: NotifyChannelsSchema,
    /** Bound on one HTTP request (each attempt). */
    timeoutMs: z.number().int().min(1).max(600_000).default(10_000),
    /** JSONL idempotency ledger of delivered (dedupeKey, channel) pairs; '' = no ledger. */
    ledgerPath: z.string().max(4096).default(''),
  }),
);
/** What callers pass (defaults filled in by the activity). */
export type NotifyInput = z.input<typeof NotifyInputSchema>;

export const ChannelResultSchema = shared('schemas/notify:ChannelResultSchema', () =>
  z.object({
    channel: NotifyChannelNameSchema,
    ok: z.boolean(),
    /** Not sent: already delivered (ledger), or the channel is unavailable here (no notify-send). */
    skipped: z.boolean(),
    /** Send attempts made by this call (0 when skipped). */
    attempts: z.number().int().min(0),
    /** Why it failed (or a note when ok), never containing a webhook URL's path or token. */
    error: z.string().max(500).nullable(),
    /** HTTP status of the last response; null for file and desktop, and when nothing answered. */
    status: z.number().int().nullable(),
  }),
);
export type ChannelResult = z.infer<typeof ChannelResultSchema>;

export const NotifyResultSchema = shared('schemas/notify:NotifyResultSchema', () =>
  z.object({
    dedupeKey: z.string(),
    /** One per configured channel, in NOTIFY_CHANNEL_NAMES order. */
    results: z.array(ChannelResultSchema),
    /** Channels that delivered on this call (ok and not skipped). */
    delivered: z.number().int().min(0),
    /** Channels that failed (not ok). */
    failed: z.number().int().min(0),
  }),
);
export type NotifyResult = z.infer<typeof NotifyResultSchema>;
