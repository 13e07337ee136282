/**
 * When a run tells people of something before it becomes an escalation: the original tool's
 * notification triggers (`notification-checker.py`: budget 80 %, context 90 %, a sensitive file,
 * a quality gate failed, 3 iterations stuck, compactions), each fired once per occasion.
 *
 * - budget 80 %: `budgetWarning` (rules/budget.ts), once per budget value.
 * - a gate failed: on the first failure of a streak (the escalation after `gateEscalateAfter`
 *   and the pause after `gatePauseAfter` still follow), not on every failure.
 * - stuck: the tree unchanged for `STUCK_ITERATIONS` iterations in a row, once per streak.
 * - a sensitive file: an iteration changed a path that looks like a secret (`.env`, a key, a
 *   certificate, a credentials file), once per iteration that touches one.
 * - context 90 % and compactions: where a call reports its context use and its compactions
 *   (claude's stream-json: its requests' usage, the model's window, `compact_boundary` records);
 *   a CLI that does not say never fires them (null facts).
 *
 * Pure: imports only `schemas/`.
 */
import type { GateResult, GateTrack } from '../schemas/gates.js';
import type { NotifySeverity } from '../schemas/notify.js';

/** Iterations in a row without a change of the tree after which people hear that the run is stuck (the seed's 3). */
export const STUCK_ITERATIONS = 3;
/** The share of the context window at which people hear of it (the seed's 90 %). */
export const CONTEXT_SHARE = 0.9;
/** Compactions within an hour after which people hear of them (the seed's 3). */
export const COMPACTIONS_PER_HOUR = 3;
/** Sensitive paths named in one notification. */
export const SENSITIVE_NAMED = 20;

/** What a trigger asks the run to say. */
export interface TriggerNotice {
  event: 'gate_failed' | 'stuck' | 'sensitive_file' | 'context_high' | 'compactions';
  title: string;
  message: string;
  severity: NotifySeverity;
  details: Record<string, unknown>;
  /** Once per occasion: the same occasion gives the same key (delivered once per channel). */
  dedupeKey: string;
}

/** A file name a secret lives in: not a sample of one. */
const SAMPLE = /(^|[._-])(example|sample|template|dist|defaults?)([._-]|$)/i;
const SENSITIVE_NAMES: readonly RegExp[] = [
  /^\.env(\..+)?$/i, // .env, .env.local, .env.production
  /\.(pem|key|p12|pfx|jks|keystore|asc|gpg)$/i,
  /^id_(rsa|dsa|ecdsa|ed25519)(\.pub)?$/i,
  /^\.(netrc|npmrc|pypirc|pgpass|htpasswd)$/i,
  /secret/i,
  /^credentials(\.[a-z]+)?$/i,
];

/**
 * Whether a changed path (relative, `/`-separated) looks like a file that holds a secret: the
 * seed's `.env`, `.pem`, `.key` and `secret`, with the other usual key and credential files.
 * Samples (`.env.example`, `secrets.template.yaml`) are not.
 */
export function isSensitivePath(p: string): boolean {
  const name = p.replace(/\\/g, '/').split('/').filter(Boolean).at(-1) ?? '';
  if (name === '' || SAMPLE.test(name.replace(/^\.env/i, ''))) return false;
  return SENSITIVE_NAMES.some((re) => re.test(name));
}

/** The sensitive ones of `paths`, at most SENSITIVE_NAMED, in their order. */
export function sensitivePaths(paths: readonly string[]): string[] {
  return paths.filter(isSensitivePath).slice(0, SENSITIVE_NAMED);
}

/** A blocking gate failed for the first time in its streak (its track went from 0 to 1 failure). */
export function gateFailedNotice(
  runId: string,
  iteration: number,
  before: GateTrack | undefined,
  after: GateTrack,
  r: GateResult,
  label: string,
): TriggerNotice | null {
  if (r.verdict !== 'fail' || (before?.consecutiveFailures ?? 0) !== 0 || after.consecutiveFailures !== 1) return null;
  // A streak that escalates or pauses at its first failure already tells people.
  if (after.escalatedAt === 1 || after.pausedAt === 1) return null;
  return {
    event: 'gate_failed',
    title: `Quality gate ${label} failed at iteration ${iteration}`,
    message:
      `The ${label} gate failed at iteration ${iteration}: ${r.reason}. The agent sees its findings in the next prompt; ` +
      `the run escalates when it keeps failing.`,
    severity: 'warning',
    details: { gate: r.gate, reason: r.reason.slice(0, 500), findings: r.findingCount, iteration },
    dedupeKey: `${runId}:gate_failed:${r.gate}:${iteration}`,
  };
}

/** The tree unchanged for STUCK_ITERATIONS iterations in a row: once per streak (when the count reaches it). */
export function stuckNotice(runId: string, iteration: number, consecutiveNoChange: number): TriggerNotice | null {
  if (consecutiveNoChange !== STUCK_ITERATIONS) return null;
  return {
    event: 'stuck',
    title: `No change for ${STUCK_ITERATIONS} iterations`,
    message:
      `The last ${STUCK_ITERATIONS} iterations (to ${iteration}) left the working tree as it was. ` +
      `\`vigil input ${runId} "<a hint>"\` gives the agent a hint; \`vigil pause ${runId}\` stops it for now.`,
    severity: 'warning',
    details: { iteration, consecutiveNoChange },
    dedupeKey: `${runId}:stuck:${iteration}`,
  };
}

/** An iteration changed files that look like secrets. */
export function sensitiveFileNotice(runId: string, iteration: number, paths: readonly string[]): TriggerNotice | null {
  const hit = sensitivePaths(paths);
  if (hit.length === 0) return null;
  return {
    event: 'sensitive_file',
    title: `Sensitive file changed: ${hit[0]}${hit.length > 1 ? ` and ${hit.length - 1} more` : ''}`.slice(0, 200),
    message:
      `Iteration ${iteration} changed ${hit.join(', ')}. Files like these hold secrets: look at what the agent wrote there ` +
      `before the work is delivered.`,
    severity: 'critical',
    details: { paths: hit, iteration },
    dedupeKey: `${runId}:sensitive_file:${iteration}`,
  };
}

/** A call's context use at CONTEXT_SHARE of its window or more (null facts: the call did not report them). */
export function contextNotice(
  runId: string,
  iteration: number,
  usedTokens: number | null,
  windowTokens: number | null,
): TriggerNotice | null {
  if (usedTokens === null || windowTokens === null || !(windowTokens > 0) || usedTokens < CONTEXT_SHARE * windowTokens) return null;
  const pct = Math.round((100 * usedTokens) / windowTokens);
  return {
    event: 'context_high',
    title: `The agent's context is ${pct}% full`,
    message: `The call of iteration ${iteration} used ${usedTokens} of ${windowTokens} tokens of its context window.`,
    severity: 'critical',
    details: { usedTokens, windowTokens, iteration },
    dedupeKey: `${runId}:context_high:${iteration}`,
  };
}

/**
 * COMPACTIONS_PER_HOUR compactions within the hour before `nowMs` (their times in ms, the latest
 * call's `added` among them): once, when the latest call makes the count reach it (null times: no
 * call reports them).
 */
export function compactionsNotice(
  runId: string,
  iteration: number,
  times: readonly number[] | null,
  nowMs: number,
  added = 1,
): TriggerNotice | null {
  if (times === null) return null;
  const recent = times.filter((t) => t <= nowMs && nowMs - t < 3_600_000);
  if (recent.length < COMPACTIONS_PER_HOUR || recent.length - added >= COMPACTIONS_PER_HOUR) return null;
  return {
    event: 'compactions',
    title: `The agent's context was compacted ${recent.length} times in an hour`,
    message: `Frequent compactions lose what the agent knew; iteration ${iteration} made the ${recent.length}th within an hour.`,
    severity: 'warning',
    details: { compactions: recent.length, iteration },
    dedupeKey: `${runId}:compactions:${iteration}`,
  };
}
