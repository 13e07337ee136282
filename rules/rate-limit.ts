/**
 * Provider rate limits (spec §1.9), read per provider. Owns the rate-limit message forms, the
 * reset-notice readers and the wait a rate-limited call imposes.
 *
 * Detection (`isRateLimited`). The output is read through `findProviderEvidence`
 * (runner-lines.ts): the provider's structured verdict wins when it printed one (claude
 * stream-json `result` with `is_error`, codex `error` / `turn.failed`, gemini `{"error":{...}}`,
 * whose `code: 429` also counts); otherwise a line of the last 40 counts when it is not test-runner
 * output and matches one of the provider's message forms:
 *   - every provider (§1.9): a rate-limit word with an error word on one line
 *     (`rate limit ... exceeded`, `HTTP 429 Too Many Requests`), or `quota exceeded` /
 *     `rate limit exceeded` / `too many requests`. A bare `429` or `retry-after` does not count;
 *   - claude: a reset notice (`resets 5pm`, `resets 5:10pm (Europe/Paris)`, `reset at 9am`),
 *     `Claude [AI] usage limit reached|<epoch>`, `You've hit your limit`;
 *   - codex: `You've hit your usage limit`;
 *   - gemini: `RESOURCE_EXHAUSTED`.
 * Without a provider (or for `command`, which may wrap any CLI) every form counts.
 *
 * Wait (`detectRateLimit`), read from the readable lines of the whole output (or the record's
 * text). The last reset instant wins, else the last retry delay, else the request rate:
 *   1. reset instants, each waited to + 120 s (never less than the 120 s buffer):
 *      claude `usage limit reached|<epoch seconds>`; claude `resets [Mon D,] H[:MM]am|pm [(Zone)]`
 *      (a named IANA zone is honoured; none means the worker's clock; a past clock time means
 *      tomorrow, a past date more than half a year back means next year); codex
 *      `try again at [Mon Dth, [YYYY]] H:MM [AM|PM]` (worker's clock); codex
 *      `try again in 5 days 22 hours` (duration); gemini per-day quota (`... per day'`,
 *      `...PerDay...` quota ids): the next midnight in America/Los_Angeles;
 *   2. retry delays, as given: gemini `"retryDelay": "34s"` / `Please retry in 34.2s`, and
 *      `retry-after: N` (§1.9);
 *   3. `clamp(7200 / rpm, 60, 300)`.
 * `source` stays one of `reset_time | retry_after | rpm` (the activity result schema's enum).
 */
import {
  familiesOf,
  findProviderEvidence,
  type CliFamily,
  type Provider,
  type ProviderEvidence,
  type ProviderRecord,
} from './runner-lines.js';

export type { Provider } from './runner-lines.js';

export interface RateLimitVerdict {
  waitSeconds: number;
  source: 'reset_time' | 'retry_after' | 'rpm';
}

/** Added to every wait that ends at a reset instant. */
export const RESET_BUFFER_SECONDS = 120;

// ---- Message forms --------------------------------------------------------------------------

const ERR = '(error|errored|failed|exceeded|http[ /]?[0-9]|status[: ]+[0-9]|too many requests)';
const RL = '(rate.?limit|too many requests|quota exceeded|request limit|429[ )"]*too many|retry.?after)';
const RL_WITH_ERROR = new RegExp(`${RL}.*${ERR}|${ERR}.*${RL}`, 'i');
const RL_PLAIN = /quota exceeded|rate limit exceeded|too many requests/i;

const MONTH = '([a-z]{3,9})\\.?\\s+(\\d{1,2})(?:st|nd|rd|th)?,?\\s+';
/** Claude reset notice: `resets 5pm`, `resets 5:10pm (Europe/Paris)`, `reset at 9am`, `resets Oct 9, 10am`. */
const CLAUDE_RESET = new RegExp(
  `\\bresets?\\s+(?:at\\s+)?(?:${MONTH}(?:at\\s+)?)?(\\d{1,2})(?::(\\d{2}))?\\s*([ap]m)\\b(?:\\s*\\(([^)\\n]+)\\))?`,
  'gi',
);
const CLAUDE_EPOCH = /usage limit reached\s*\|\s*(\d{9,13})\b/gi;
const CLAUDE_LIMIT = /\busage limit reached\b|\bhit your limit\b/i;
const CODEX_LIMIT = /\bhit your usage limit\b/i;
/** Codex: `try again at Jul 5th, 2026 8:19 PM`, `try again at 8:19 PM`. */
const CODEX_AT = new RegExp(`\\btry again at\\s+(?:${MONTH}(?:(\\d{4}),?\\s+)?)?(\\d{1,2}):(\\d{2})(?:\\s*([ap]m))?\\b`, 'gi');
const DURATION_UNIT = '(?:days?|d|hours?|hrs?|h|minutes?|mins?|m|seconds?|secs?|s)';
const CODEX_IN = new RegExp(`\\btry again in\\s+((?:\\d+(?:\\.\\d+)?\\s*${DURATION_UNIT}\\b[\\s,]*(?:and\\s+)?)+)`, 'gi');
const DURATION_PART = new RegExp(`(\\d+(?:\\.\\d+)?)\\s*(${DURATION_UNIT})\\b`, 'gi');
const GEMINI_EXHAUSTED = /\bRESOURCE_EXHAUSTED\b/;
const GEMINI_PER_DAY = /[Qq]uota metric '[^'\n]*\bper day\b[^'\n]*'|[A-Za-z]*PerDay[A-Za-z]*/g;
const GEMINI_RETRY_DELAY = /"retryDelay"\s*:\s*"(\d+(?:\.\d+)?)s"|\bplease retry in (\d+(?:\.\d+)?)\s*(ms|s)\b/gi;
const RETRY_AFTER = /retry.?after:?\s*([0-9]+)/gi;

const FAMILY_FORMS: Record<CliFamily, readonly RegExp[]> = {
  claude: [CLAUDE_RESET, CLAUDE_LIMIT],
  codex: [CODEX_LIMIT],
  gemini: [GEMINI_EXHAUSTED],
};

function matches(re: RegExp, line: string): boolean {
  re.lastIndex = 0;
  const hit = re.test(line);
  re.lastIndex = 0;
  return hit;
}

function isRateLimitLine(line: string, provider: Provider | undefined): boolean {
  if (RL_WITH_ERROR.test(line) || RL_PLAIN.test(line)) return true;
  return familiesOf(provider).some((f) => FAMILY_FORMS[f].some((re) => matches(re, line)));
}

const isRateLimitRecord = (r: ProviderRecord): boolean => r.code === 429;

function rateLimitEvidence(text: string, provider: Provider | undefined): ProviderEvidence | null {
  return findProviderEvidence(text, provider, (line) => isRateLimitLine(line, provider), isRateLimitRecord);
}

export function isRateLimited(text: string, provider?: Provider): boolean {
  return rateLimitEvidence(text, provider) !== null;
}

// ---- Time zones (Intl is available and deterministic in the workflow sandbox) --------------

type Zone = { kind: 'offset'; offsetMs: number } | { kind: 'iana'; name: string };

const DAY_MS = 86_400_000;
const PACIFIC_FALLBACK: Zone = { kind: 'offset', offsetMs: -8 * 3_600_000 };

function zoneParts(name: string, instantMs: number): Intl.DateTimeFormatPart[] | null {
  try {
    const fmt = new Intl.DateTimeFormat('en-US', {
      timeZone: name,
      hourCycle: 'h23',
      year: 'numeric',
      month: 'numeric',
      day: 'numeric',
      hour: 'numeric',
      minute: 'numeric',
      second: 'numeric',
    });
    return fmt.formatToParts(new Date(instantMs));
  } catch {
    return null; // unknown zone
  }
}

/** A named IANA zone, or null when the name is not one. */
function namedZone(name: string): Zone | null {
  const trimmed = name.trim();
  return /^[A-Za-z][A-Za-z0-9_+\-/]*$/.test(trimmed) && zoneParts(trimmed, 0) !== null ? { kind: 'iana', name: trimmed } : null;
}

/** Local wall clock minus UTC, in ms, at an instant. */
function offsetMsAt(zone: Zone, instantMs: number): number {
  if (zone.kind === 'offset') return zone.offsetMs;
  const parts = zoneParts(zone.name, instantMs) ?? [];
  const field = (type: Intl.DateTimeFormatPartTypes): number => Number(parts.find((p) => p.type === type)?.value ?? 0);
  const wallAsUtc = Date.UTC(field('year'), field('month') - 1, field('day'), field('hour'), field('minute'), field('second'));
  return wallAsUtc - Math.floor(instantMs / 1000) * 1000;
}

interface LocalDate {
  year: number;
  month: number; // 0-based
  day: number;
}

function localDate(zone: Zone, instantMs: number): LocalDate {
  const wall = new Date(instantMs + offsetMsAt(zone, instantMs));
  return { year: wall.getUTCFullYear(), month: wall.getUTCMonth(), day: wall.getUTCDate() };
}

/** The instant a wall-clock time in `zone` names (days may overflow: Date.UTC normalises them). */
function wallToInstant(zone: Zone, d: LocalDate, hour: number, minute: number): number {
  const wallAsUtc = Date.UTC(d.year, d.month, d.day, hour, minute, 0);
  const firstGuess = wallAsUtc - offsetMsAt(zone, wallAsUtc);
  return wallAsUtc - offsetMsAt(zone, firstGuess); // second pass: the offset at the answer (DST)
}

/** The next time the zone's clock shows hour:minute, strictly after now. */
function nextWallTime(zone: Zone, nowMs: number, hour: number, minute: number): number {
  const today = localDate(zone, nowMs);
  const t = wallToInstant(zone, today, hour, minute);
  return t > nowMs ? t : wallToInstant(zone, { ...today, day: today.day + 1 }, hour, minute);
}

// ---- Clock notices ------------------------------------------------------------------------------

const MONTHS = ['jan', 'feb', 'mar', 'apr', 'may', 'jun', 'jul', 'aug', 'sep', 'oct', 'nov', 'dec'];

interface ClockNotice {
  month: string | undefined;
  day: string | undefined;
  year: string | undefined;
  hour: string | undefined;
  minute: string | undefined;
  ampm: string | undefined;
}

/** 24-hour clock hour, or null when the notice's hour is not a clock hour. */
function clockHour(hour: number, ampm: string | undefined): number | null {
  if (ampm === undefined) return hour <= 23 ? hour : null;
  if (hour < 1 || hour > 12) return null;
  return (hour % 12) + (ampm.toLowerCase() === 'pm' ? 12 : 0);
}

function monthIndex(name: string | undefined): number | null {
  if (name === undefined) return null;
  const i = MONTHS.indexOf(name.slice(0, 3).toLowerCase());
  return i >= 0 ? i : null;
}

const HALF_YEAR_MS = 183 * DAY_MS;

/** The instant a clock notice names, read in `zone`; null when it names no valid time. */
function noticeInstant(n: ClockNotice, zone: Zone, nowMs: number): number | null {
  const hour = clockHour(Number(n.hour), n.ampm);
  const minute = Number(n.minute ?? 0);
  if (hour === null || minute > 59) return null;
  if (n.month === undefined) return nextWallTime(zone, nowMs, hour, minute);
  const month = monthIndex(n.month);
  const day = Number(n.day);
  if (month === null || day < 1 || day > 31) return null;
  const year = n.year !== undefined ? Number(n.year) : localDate(zone, nowMs).year;
  const t = wallToInstant(zone, { year, month, day }, hour, minute);
  // "resets Jan 2" read on Dec 30 means next year.
  return n.year === undefined && t < nowMs - HALF_YEAR_MS ? wallToInstant(zone, { year: year + 1, month, day }, hour, minute) : t;
}

// ---- Waits --------------------------------------------------------------------------------------

interface Candidate {
  /** Position in the text: the last candidate of the strongest kind wins. */
  index: number;
  kind: 'reset' | 'retry';
  waitSeconds: number;
}

interface WaitContext {
  nowMs: number;
  workerZone: Zone;
}

const untilReset = (targetMs: number, nowMs: number): number => Math.max(0, Math.ceil((targetMs - nowMs) / 1000)) + RESET_BUFFER_SECONDS;

function matchesOf(re: RegExp, text: string): RegExpMatchArray[] {
  re.lastIndex = 0;
  return [...text.matchAll(re)];
}

function claudeEpochResets(text: string, ctx: WaitContext): Candidate[] {
  return matchesOf(CLAUDE_EPOCH, text).map((m) => {
    const digits = m[1] ?? '0';
    const ms = digits.length >= 12 ? Number(digits) : Number(digits) * 1000;
    return { index: m.index ?? 0, kind: 'reset', waitSeconds: untilReset(ms, ctx.nowMs) };
  });
}

function clockResets(
  re: RegExp,
  text: string,
  ctx: WaitContext,
  read: (m: RegExpMatchArray) => ClockNotice & { zone: string | undefined },
): Candidate[] {
  const out: Candidate[] = [];
  for (const m of matchesOf(re, text)) {
    const notice = read(m);
    const zone = (notice.zone !== undefined ? namedZone(notice.zone) : null) ?? ctx.workerZone;
    const at = noticeInstant(notice, zone, ctx.nowMs);
    if (at !== null) out.push({ index: m.index ?? 0, kind: 'reset', waitSeconds: untilReset(at, ctx.nowMs) });
  }
  return out;
}

const claudeClockResets = (text: string, ctx: WaitContext): Candidate[] =>
  clockResets(CLAUDE_RESET, text, ctx, (m) => ({
    month: m[1],
    day: m[2],
    year: undefined,
    hour: m[3],
    minute: m[4],
    ampm: m[5],
    zone: m[6],
  }));

const codexClockResets = (text: string, ctx: WaitContext): Candidate[] =>
  clockResets(CODEX_AT, text, ctx, (m) => ({ month: m[1], day: m[2], year: m[3], hour: m[4], minute: m[5], ampm: m[6], zone: undefined }));

const UNIT_SECONDS: Record<string, number> = { d: 86_400, h: 3_600, m: 60, s: 1 };

function durationSeconds(spec: string): number {
  let total = 0;
  for (const m of matchesOf(DURATION_PART, spec)) {
    const unit = (m[2] ?? 's').toLowerCase();
    const key = unit.startsWith('mi') || unit === 'm' ? 'm' : unit.charAt(0);
    total += Number(m[1]) * (UNIT_SECONDS[key] ?? 1);
  }
  return Math.ceil(total);
}

function codexDurations(text: string): Candidate[] {
  return matchesOf(CODEX_IN, text).map((m) => ({
    index: m.index ?? 0,
    kind: 'reset',
    waitSeconds: durationSeconds(m[1] ?? '') + RESET_BUFFER_SECONDS,
  }));
}

function geminiDailyResets(text: string, ctx: WaitContext): Candidate[] {
  const pacific = namedZone('America/Los_Angeles') ?? PACIFIC_FALLBACK;
  return matchesOf(GEMINI_PER_DAY, text).map((m) => ({
    index: m.index ?? 0,
    kind: 'reset',
    waitSeconds: untilReset(nextWallTime(pacific, ctx.nowMs, 0, 0), ctx.nowMs),
  }));
}

function geminiRetryDelays(text: string): Candidate[] {
  return matchesOf(GEMINI_RETRY_DELAY, text).map((m) => {
    const seconds = m[1] !== undefined ? Number(m[1]) : Number(m[2]) / (m[3]?.toLowerCase() === 'ms' ? 1000 : 1);
    return { index: m.index ?? 0, kind: 'retry', waitSeconds: Math.ceil(seconds) };
  });
}

function retryAfters(text: string): Candidate[] {
  return matchesOf(RETRY_AFTER, text)
    .map((m): Candidate => ({ index: m.index ?? 0, kind: 'retry', waitSeconds: Number(m[1]) }))
    .filter((c) => c.waitSeconds > 0);
}

const FAMILY_WAITS: Record<CliFamily, readonly ((text: string, ctx: WaitContext) => Candidate[])[]> = {
  claude: [claudeEpochResets, claudeClockResets],
  codex: [codexClockResets, codexDurations],
  gemini: [geminiDailyResets, geminiRetryDelays],
};

function lastOfKind(candidates: readonly Candidate[], kind: Candidate['kind']): Candidate | null {
  let best: Candidate | null = null;
  for (const c of candidates) if (c.kind === kind && (best === null || c.index >= best.index)) best = c;
  return best;
}

function rpmWait(rpm: number): number {
  return Math.min(Math.max(Math.floor(7200 / Math.max(rpm, 1)), 60), 300);
}

function workerZoneOf(tzOffsetMinutes: number, workerTimeZone: string | undefined): Zone {
  return (workerTimeZone !== undefined ? namedZone(workerTimeZone) : null) ?? { kind: 'offset', offsetMs: -tzOffsetMinutes * 60_000 };
}

/**
 * @param nowMs the worker's clock
 * @param tzOffsetMinutes `new Date().getTimezoneOffset()` on the worker (notices without a zone
 *   are read on the worker's clock)
 * @param provider which CLI produced the output; absent: every provider's forms are read
 * @param workerTimeZone the worker's IANA zone (`Intl.DateTimeFormat().resolvedOptions().timeZone`);
 *   when given and valid it replaces `tzOffsetMinutes`, so a reset tomorrow across a DST change is
 *   read right
 */
export function detectRateLimit(
  text: string,
  nowMs: number,
  tzOffsetMinutes: number,
  rpm: number,
  provider?: Provider,
  workerTimeZone?: string,
): RateLimitVerdict | null {
  const found = rateLimitEvidence(text, provider);
  if (found === null) return null;
  const readable = found.lines.join('\n');
  const ctx: WaitContext = { nowMs, workerZone: workerZoneOf(tzOffsetMinutes, workerTimeZone) };
  const rules = familiesOf(provider).flatMap((f) => FAMILY_WAITS[f]);
  const candidates = [...rules.flatMap((rule) => rule(readable, ctx)), ...retryAfters(readable)];
  const reset = lastOfKind(candidates, 'reset');
  if (reset) return { waitSeconds: reset.waitSeconds, source: 'reset_time' };
  const retry = lastOfKind(candidates, 'retry');
  if (retry) return { waitSeconds: retry.waitSeconds, source: 'retry_after' };
  return { waitSeconds: rpmWait(rpm), source: 'rpm' };
}
