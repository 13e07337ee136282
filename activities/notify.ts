/**
 * The `notify` activity: delivers one notification to every configured channel concurrently (a
 * generic JSON webhook, Slack, Discord, a JSONL file, the desktop through notify-send) and reports
 * per channel. A failing channel never throws: its failure is in the result, without the webhook's
 * path or token. HTTP requests are bounded by `timeoutMs` and retried on network errors, timeouts,
 * 429 and 5xx. An idempotency ledger (JSONL) makes activity retries and workflow replays deliver
 * each (dedupeKey, channel) once.
 */
import { execFile } from 'node:child_process';
import { accessSync, constants, statSync } from 'node:fs';
import { appendFile, mkdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { Context } from '@temporalio/activity';
import { ApplicationFailure } from '@temporalio/common';
import { z } from 'zod';
import {
  INVALID_NOTIFICATION,
  NOTIFY_BACKOFF_MS,
  NOTIFY_DESKTOP_TIMEOUT_MS,
  NOTIFY_MAX_ATTEMPTS,
  NOTIFY_RETRY_AFTER_CAP_MS,
  NotifyInputSchema,
  WORKER_ENV_REF,
  type ChannelResult,
  type Notification,
  type NotifyChannelName,
  type NotifyInput,
  type NotifyResult,
  type NotifySeverity,
} from '../schemas/notify.js';

/** What the activity uses from its surroundings; defaults come from the activity context, if any. */
export interface NotifyOptions {
  /** Called between HTTP attempts. Default: heartbeat the current activity (no-op outside one). */
  heartbeat?: (details: { channel: NotifyChannelName; attempt: number }) => void;
  /** Waits between attempts; resolves early when `signal` aborts. */
  sleep?: (ms: number, signal?: AbortSignal) => Promise<void>;
  /** Stops requests and retries. Default: the activity's cancellation signal, if any. */
  signal?: AbortSignal;
}

export const DISCORD_CONTENT_MAX = 2000;
const ERROR_MAX = 500;
const SNIPPET_MAX = 200;

/** The activity registered with the worker. */
/** A channel URL as the worker sees it: `env:NAME` read from its environment ('' when unset). */
function workerUrl(v: string): string {
  return WORKER_ENV_REF.test(v) ? (process.env[v.slice(4)] ?? '').trim() : v;
}

export async function notify(input: NotifyInput): Promise<NotifyResult> {
  return deliverNotification(input);
}

/** `notify` with its surroundings injectable (tests, callers outside an activity). */
export async function deliverNotification(raw: NotifyInput, options: NotifyOptions = {}): Promise<NotifyResult> {
  const parsed = NotifyInputSchema.safeParse(raw);
  if (!parsed.success) {
    throw ApplicationFailure.create({
      type: INVALID_NOTIFICATION,
      nonRetryable: true,
      message: `invalid notification: ${z.prettifyError(parsed.error)}`.slice(0, 2000),
    });
  }
  const input = parsed.data;
  const ctx = activityContext();
  const io: Io = {
    heartbeat: options.heartbeat ?? ((d) => ctx?.heartbeat(d)),
    sleep: options.sleep ?? abortableSleep,
    signal: options.signal ?? ctx?.cancellationSignal,
    timeoutMs: input.timeoutMs,
  };
  const n = input.notification;
  const c = input.channels;
  // `env:NAME` URLs are resolved here, on the worker: the URL itself never reaches history.
  const webhook = workerUrl(c.webhookUrl);
  const slack = workerUrl(c.slackWebhookUrl);
  const discord = workerUrl(c.discordWebhookUrl);
  const secrets = [webhook, slack, discord].filter(Boolean);

  const jobs: [NotifyChannelName, () => Promise<Outcome>][] = [];
  const unresolved = (ref: string) => async (): Promise<Outcome> => ({
    ok: false,
    attempts: 0,
    error: `${ref.slice(4)} is not set in the worker's environment (knob value ${ref})`,
    status: null,
  });
  if (c.webhookUrl)
    jobs.push([
      'webhook',
      webhook ? () => postJson('webhook', webhook, webhookBody(n), { 'Idempotency-Key': n.dedupeKey }, io) : unresolved(c.webhookUrl),
    ]);
  if (c.slackWebhookUrl)
    jobs.push(['slack', slack ? () => postJson('slack', slack, slackPayload(n), {}, io) : unresolved(c.slackWebhookUrl)]);
  if (c.discordWebhookUrl)
    jobs.push(['discord', discord ? () => postJson('discord', discord, discordPayload(n), {}, io) : unresolved(c.discordWebhookUrl)]);
  if (c.file) jobs.push(['file', () => appendJsonLine(c.file, webhookBody(n), n.dedupeKey)]);
  if (c.desktop) jobs.push(['desktop', () => desktopNotify(n)]);

  const done = jobs.length > 0 && input.ledgerPath ? await readLedger(input.ledgerPath) : new Set<string>();
  const results = await Promise.all(
    jobs.map(([channel, send]) => runChannel(channel, send, { ledgerPath: input.ledgerPath, dedupeKey: n.dedupeKey, done, secrets })),
  );
  return {
    dedupeKey: n.dedupeKey,
    results,
    delivered: results.filter((r) => r.ok && !r.skipped).length,
    failed: results.filter((r) => !r.ok).length,
  };
}

// ---- payloads ----

/** The generic webhook's JSON body (also the file channel's line). */
export function webhookBody(n: Notification): Record<string, unknown> {
  return {
    event: n.event,
    run: n.runId,
    title: n.title,
    message: n.message,
    severity: n.severity,
    time: n.time,
    details: n.details,
    dedupeKey: n.dedupeKey,
  };
}

const SLACK_EMOJI: Record<NotifySeverity, string> = { info: ':information_source:', warning: ':warning:', critical: ':rotating_light:' };

/** Slack's control characters (`<!channel>`, links) are escaped: text is shown as written. */
function slackEscape(s: string): string {
  return s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
}

export function slackPayload(n: Notification): { text: string } {
  const lines = [
    `${SLACK_EMOJI[n.severity]} *${slackEscape(n.title)}*`,
    ...(n.message ? [slackEscape(n.message)] : []),
    `run: \`${slackEscape(n.runId)}\``,
  ];
  return { text: lines.join('\n') };
}

/** Discord content (at most 2000 characters, the message cut first); mentions in the text never ping. */
export function discordPayload(n: Notification): { content: string; allowed_mentions: { parse: string[] } } {
  const head = `**${n.title}**\n`;
  const tail = `${n.message ? '\n' : ''}run: ${n.runId}`;
  let message = n.message;
  const room = DISCORD_CONTENT_MAX - head.length - tail.length;
  if (message.length > room) message = room > 1 ? `${message.slice(0, room - 1)}…` : '';
  return { content: `${head}${message}${tail}`.slice(0, DISCORD_CONTENT_MAX), allowed_mentions: { parse: [] } };
}

// ---- per channel ----

interface Io {
  heartbeat: NonNullable<NotifyOptions['heartbeat']>;
  sleep: NonNullable<NotifyOptions['sleep']>;
  signal: AbortSignal | undefined;
  timeoutMs: number;
}

interface Outcome {
  ok: boolean;
  skipped?: boolean;
  attempts: number;
  error: string | null;
  status: number | null;
}

interface LedgerCtx {
  ledgerPath: string;
  dedupeKey: string;
  done: Set<string>;
  secrets: string[];
}

const ledgerKey = (dedupeKey: string, channel: string): string => `${dedupeKey}\u0000${channel}`;

/** Skips a channel the ledger says has delivered; sends otherwise; records a delivery. Never throws. */
async function runChannel(channel: NotifyChannelName, send: () => Promise<Outcome>, l: LedgerCtx): Promise<ChannelResult> {
  if (l.done.has(ledgerKey(l.dedupeKey, channel))) return { channel, ok: true, skipped: true, attempts: 0, error: null, status: null };
  let out: Outcome;
  try {
    out = await send();
  } catch (err) {
    out = { ok: false, attempts: 1, error: `${channel}: ${describeError(err)}`, status: null };
  }
  if (out.ok && !out.skipped && l.ledgerPath) {
    try {
      await mkdir(path.dirname(l.ledgerPath), { recursive: true, mode: 0o700 });
      // Private, and never through a link planted at the ledger's path.
      await appendFile(l.ledgerPath, `${JSON.stringify({ dedupeKey: l.dedupeKey, channel, ok: true, at: new Date().toISOString() })}\n`, {
        flag: constants.O_WRONLY | constants.O_APPEND | constants.O_CREAT | constants.O_NOFOLLOW,
        mode: 0o600,
      });
    } catch (err) {
      out = { ...out, error: `delivered, but the ledger could not be written: ${describeError(err)}` };
    }
  }
  return {
    channel,
    ok: out.ok,
    skipped: out.skipped ?? false,
    attempts: out.attempts,
    error: out.error === null ? null : clip(redactUrls(out.error, l.secrets), ERROR_MAX),
    status: out.status,
  };
}

/** (dedupeKey, channel) pairs delivered before; an unreadable ledger counts as empty. */
async function readLedger(file: string): Promise<Set<string>> {
  const done = new Set<string>();
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch {
    return done;
  }
  for (const line of text.split('\n')) {
    if (!line.trim()) continue;
    try {
      const rec = JSON.parse(line) as { dedupeKey?: unknown; channel?: unknown; ok?: unknown };
      if (typeof rec.dedupeKey === 'string' && typeof rec.channel === 'string' && rec.ok === true)
        done.add(ledgerKey(rec.dedupeKey, rec.channel));
    } catch {
      /* a torn line: ignored */
    }
  }
  return done;
}

// ---- HTTP ----

interface AttemptResult {
  ok: boolean;
  status: number | null;
  error: string | null;
  retryable: boolean;
  retryAfterMs: number | null;
}

/** POSTs JSON with retries (network errors, timeouts, 429, 5xx); each attempt bounded by timeoutMs. */
async function postJson(channel: NotifyChannelName, url: string, body: unknown, headers: Record<string, string>, io: Io): Promise<Outcome> {
  const payload = JSON.stringify(body);
  let last: AttemptResult | null = null;
  let attempts = 0;
  for (let attempt = 1; attempt <= NOTIFY_MAX_ATTEMPTS; attempt++) {
    if (last) {
      io.heartbeat({ channel, attempt });
      await io.sleep(last.retryAfterMs ?? NOTIFY_BACKOFF_MS[Math.min(attempt - 2, NOTIFY_BACKOFF_MS.length - 1)] ?? 0, io.signal);
    }
    if (io.signal?.aborted) return { ok: false, attempts, error: `${hostOf(url)}: cancelled`, status: last?.status ?? null };
    attempts = attempt;
    last = await postOnce(url, payload, headers, io);
    if (last.ok) return { ok: true, attempts, error: null, status: last.status };
    if (!last.retryable) return { ok: false, attempts, error: last.error, status: last.status };
  }
  return { ok: false, attempts, error: `${last?.error ?? 'failed'} (gave up after ${attempts} attempts)`, status: last?.status ?? null };
}

async function postOnce(url: string, payload: string, headers: Record<string, string>, io: Io): Promise<AttemptResult> {
  const host = hostOf(url);
  const timeout = AbortSignal.timeout(io.timeoutMs);
  const signal = io.signal ? AbortSignal.any([timeout, io.signal]) : timeout;
  try {
    const res = await fetch(url, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', ...headers },
      body: payload,
      signal,
      redirect: 'manual',
    });
    if (res.ok) {
      await res.body?.cancel().catch(() => undefined);
      return { ok: true, status: res.status, error: null, retryable: false, retryAfterMs: null };
    }
    const snippet = await responseSnippet(res);
    const redirect = res.status >= 300 && res.status < 400 ? ' (redirects are not followed)' : '';
    return {
      ok: false,
      status: res.status,
      error: `${host}: HTTP ${res.status}${res.statusText ? ` ${res.statusText}` : ''}${redirect}${snippet ? `: ${snippet}` : ''}`,
      retryable: res.status === 429 || res.status >= 500,
      retryAfterMs: retryAfterMs(res.headers.get('retry-after')),
    };
  } catch (err) {
    if (timeout.aborted)
      return { ok: false, status: null, error: `${host}: no answer within ${io.timeoutMs} ms`, retryable: true, retryAfterMs: null };
    if (io.signal?.aborted) return { ok: false, status: null, error: `${host}: cancelled`, retryable: false, retryAfterMs: null };
    return { ok: false, status: null, error: `${host}: ${describeError(err)}`, retryable: true, retryAfterMs: null };
  }
}

/** The start of an error response's body, on one line ('' if unreadable). */
async function responseSnippet(res: Response): Promise<string> {
  try {
    return clip((await res.text()).replace(/\s+/g, ' ').trim(), SNIPPET_MAX);
  } catch {
    return '';
  }
}

/** A numeric Retry-After (seconds), capped; null when absent or not a number (an HTTP date). */
export function retryAfterMs(header: string | null): number | null {
  if (header === null || !/^\s*\d+(\.\d+)?\s*$/.test(header)) return null;
  return Math.min(Math.round(Number(header) * 1000), NOTIFY_RETRY_AFTER_CAP_MS);
}

// ---- file and desktop ----

/** How much of a notification file's end is searched for a line already delivered. */
const FILE_DEDUPE_TAIL_BYTES = 1024 * 1024;

/**
 * Appends the notification's line, unless the file's end already holds one with its dedupeKey: the
 * ledger is written after delivery, so a worker killed between the two would otherwise append it
 * twice when the activity runs again. The file is its own record of what it got.
 */
async function appendJsonLine(file: string, body: unknown, dedupeKey: string): Promise<Outcome> {
  try {
    await mkdir(path.dirname(file), { recursive: true });
    const held = await readFile(file)
      .then((b) => b.subarray(Math.max(0, b.length - FILE_DEDUPE_TAIL_BYTES)).toString('utf8'))
      .catch(() => '');
    if (held.includes(`"dedupeKey":${JSON.stringify(dedupeKey)}`))
      return { ok: true, skipped: true, attempts: 0, error: null, status: null };
    await appendFile(file, `${JSON.stringify(body)}\n`);
    return { ok: true, attempts: 1, error: null, status: null };
  } catch (err) {
    return { ok: false, attempts: 1, error: `file: ${describeError(err)}`, status: null };
  }
}

const URGENCY: Record<NotifySeverity, string> = { info: 'low', warning: 'normal', critical: 'critical' };

/** notify-send parses a leading '-' as an option: such text gets a leading space. */
const notOption = (s: string): string => (s.startsWith('-') ? ` ${s}` : s);

async function desktopNotify(n: Notification): Promise<Outcome> {
  const bin = findExecutable('notify-send');
  if (!bin) return { ok: true, skipped: true, attempts: 0, error: 'notify-send not found', status: null };
  const args = ['-u', URGENCY[n.severity], notOption(n.title || 'Vigil'), ...(n.message ? [notOption(n.message)] : [])];
  return new Promise((resolve) => {
    execFile(bin, args, { timeout: NOTIFY_DESKTOP_TIMEOUT_MS, killSignal: 'SIGKILL', encoding: 'utf8' }, (err, _stdout, stderr) => {
      if (!err) return resolve({ ok: true, attempts: 1, error: null, status: null });
      const e = err as NodeJS.ErrnoException & { killed?: boolean; code?: number | string };
      const why = e.killed
        ? `timed out after ${NOTIFY_DESKTOP_TIMEOUT_MS} ms`
        : typeof e.code === 'number'
          ? `exited ${e.code}${stderr.trim() ? `: ${clip(stderr.replace(/\s+/g, ' ').trim(), SNIPPET_MAX)}` : ''}`
          : describeError(err);
      resolve({ ok: false, attempts: 1, error: `notify-send ${why}`, status: null });
    });
  });
}

/** The first executable file called `name` on PATH, or null. */
export function findExecutable(name: string, pathVar: string = process.env.PATH ?? ''): string | null {
  for (const dir of pathVar.split(path.delimiter)) {
    if (!dir) continue;
    const candidate = path.join(dir, name);
    try {
      accessSync(candidate, constants.X_OK);
      if (statSync(candidate).isFile()) return candidate;
    } catch {
      /* not here */
    }
  }
  return null;
}

// ---- helpers ----

function activityContext(): Context | null {
  try {
    return Context.current();
  } catch {
    return null; // not running as an activity (tests, scripts)
  }
}

function abortableSleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal?.aborted) return resolve();
    const done = (): void => {
      clearTimeout(timer);
      signal?.removeEventListener('abort', done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    signal?.addEventListener('abort', done, { once: true });
  });
}

function hostOf(url: string): string {
  try {
    return new URL(url).host;
  } catch {
    return 'webhook';
  }
}

/** A short reason: the system error code and message of fetch's cause, or the error's message. */
function describeError(err: unknown): string {
  if (!(err instanceof Error)) return String(err);
  const cause = err.cause as { code?: unknown; message?: unknown } | undefined;
  if (cause && typeof cause === 'object') {
    const code = typeof cause.code === 'string' ? cause.code : '';
    const msg = typeof cause.message === 'string' ? cause.message : '';
    if (code || msg) return msg.includes(code) ? msg || code : `${code}${code && msg ? ': ' : ''}${msg}`;
  }
  const code = (err as NodeJS.ErrnoException).code;
  return code && !err.message.includes(code) ? `${code}: ${err.message}` : err.message;
}

/** Removes webhook URLs (their paths carry tokens) from text: the known ones, then any URL, down to scheme and host. */
export function redactUrls(text: string, known: string[] = []): string {
  let out = text;
  for (const raw of known) {
    let u: URL;
    try {
      u = new URL(raw);
    } catch {
      continue;
    }
    for (const s of [raw, u.href]) out = out.split(s).join(`${u.protocol}//${u.host}/…`);
    for (const s of [`${u.pathname}${u.search}`, u.pathname, u.search.slice(1), u.password, u.username]) {
      if (s && s.length >= 4) out = out.split(s).join('…');
    }
  }
  return out.replace(
    /\b(https?):\/\/([^/\s"'<>]+)[^\s"'<>]*/gi,
    (_m, scheme: string, authority: string) => `${scheme}://${authority.replace(/^.*@/, '')}/…`,
  );
}

function clip(s: string, max: number): string {
  return s.length <= max ? s : `${s.slice(0, max - 1)}…`;
}
