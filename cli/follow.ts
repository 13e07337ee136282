/**
 * Following a run: `vigil watch` prints one line per iteration and every status change until the
 * run finishes; `vigil wait` blocks until the run finishes or pauses. Both poll the status query
 * and survive continue-as-new (the handle follows the workflow id to its latest run), worker
 * restarts and server restarts (they keep polling and say what they are waiting for). Each line
 * is terminal-safe: control characters in the agent's words are shown, not sent to the terminal.
 */
import type { Client } from '@temporalio/client';
import type { GateResult, ReviewRecord } from '../schemas/gates.js';
import type { CompletionCheck, IterationRecord, Verdict } from '../schemas/run.js';
import { causeLabel } from '../rules/completion-check.js';
import { deadlinesLine } from '../rules/pause-deadlines.js';
import type { StatusSnapshot } from '../schemas/status.js';
import type { FollowEvent } from '../schemas/cli-output.js';
import { providerWaitText, voteLines } from '../rules/ui.js';
import { CliError, EXIT } from './errors.js';
import { sdkRunApi } from './sdk-run-api.js';
import { exitCodeOf, queryStatus, viewRun, type RunView } from './steer.js';
import { neutraliseLine } from '../lib/terminal-text.js';

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

export function iterationLine(r: IterationRecord): string {
  const secs = (r.durationMs / 1000).toFixed(1);
  const parts = [
    `iteration ${r.iteration}`,
    `${r.phase.padEnd(7)}`,
    `exit ${r.exitCode}`,
    `${secs}s`,
    r.changed ? 'changed' : 'no change',
    `${r.filesChangedSinceStart} file(s) vs start`,
  ];
  if (r.attempts > 1) parts.push(`attempt ${r.attempts}`);
  if (r.claimed) parts.push('claimed completion');
  if (r.ioError) parts.push(r.ioError);
  if (r.limitHit) parts.push(`ended by a sandbox limit: ${r.limitHit}`);
  if (r.hung) parts.push(r.hung);
  if (r.denied?.length)
    parts.push(
      `sandbox refused ${r.denied.map((d) => `${d.kind} ${neutraliseLine(d.target)}${d.count > 1 ? ` ×${d.count}` : ''}`).join(', ')}`,
    );
  return parts.join(' · ');
}

/** What started a completion check, in words: only `claim` is the agent's claim. */
export const CHECK_TRIGGER_WORDS: Record<CompletionCheck['trigger'], string> = {
  claim: "the agent's completion claim",
  circuit_breaker: "the circuit breaker's completion check",
  interval: 'the scheduled completion check',
  tests_green: 'the early completion check (tests green)',
  forced: "a person's review",
};

/** One completion check and what came of it. */
export function checkLine(c: CompletionCheck): string {
  const what = c.approved ? 'approved' : `refused by ${c.cause ? causeLabel(c.cause) : 'an unknown check'}: ${c.reason}`;
  return `${CHECK_TRIGGER_WORDS[c.trigger]} at iteration ${c.iteration}: ${what}`;
}

export function verdictLine(v: Verdict): string {
  if (v.result === 'BLOCKED_BY_GATE')
    return `council round ${v.round} (iteration ${v.iteration}, ${v.trigger.replace(/_/g, ' ')}): blocked by the evidence gate: ${v.evidence.reason}`;
  const da = v.devilsAdvocate
    ? ` · devil's advocate ${v.devilsAdvocate.flipped ? `objected (${v.devilsAdvocate.recorded})` : 'confirmed'}`
    : '';
  return (
    `council round ${v.round} (iteration ${v.iteration}, ${v.trigger.replace(/_/g, ' ')}): ${v.result} · ${v.approve} of ` +
    `${v.size} approve, ${v.threshold} needed${da}`
  );
}

/** `gatesRunning`: the gates a pass runs right now (from the run's describe), e.g. the pass an agent call carries after its agent. */
export function statusLine(s: StatusSnapshot, gatesRunning: readonly string[] | null = null, nowMs: number = Date.now()): string {
  if (s.outcome) return `finished: ${s.outcome.status} (exit ${s.outcome.exitCode}) — ${s.outcome.reason}`;
  if (s.pause && s.agentRunning)
    return `pausing: the current call finishes first (iteration ${s.iteration}; paused by ${s.pause.by}${s.pause.reason ? `: ${s.pause.reason}` : ''})`;
  if (s.pause) {
    // A reason that already says how to resume (the credentials pause names `vigil resume <id>`) is not told twice.
    const resume = `vigil resume ${s.workflowId}`;
    const how = s.pause.reason?.includes(resume) ? '' : ` (resume with \`${resume}\`)`;
    // A pause that waits for a person: its reminder, re-route and deadline ("reminder sent 2 h ago; stops in 70 h").
    const deadlines = deadlinesLine(s.pause.deadlines, nowMs);
    return `paused by ${s.pause.by}${s.pause.reason ? `: ${s.pause.reason}` : ''}${how}${deadlines ? ` · ${deadlines}` : ''}`;
  }
  // A rate limit is no failure: a backoff with none in a row is a provider's rate-limit wait.
  if (s.status === 'backing_off' && s.consecutiveFailures === 0)
    return `rate limited by ${s.lastIteration?.provider ?? 'the provider'} until ${s.backoffUntil}`;
  if (s.status === 'backing_off') return `backing off until ${s.backoffUntil} after ${s.consecutiveFailures} failure(s) in a row`;
  if (s.status === 'waiting_for_provider' && s.providerWait) return providerWaitText(s.providerWait);
  if (s.status === 'stopping') return 'stopping';
  // Delivered, following its pull request (knob followPr): waiting for its next event.
  if (s.pullRequest?.waiting)
    return (
      `following the pull request ${s.pullRequest.url ?? s.pullRequest.branch} since ${s.pullRequest.since}: waiting for its ` +
      `checks, comments, merge or close (${s.pullRequest.taken.length} event(s) taken)`
    );
  if (s.status === 'reviewing') return `council round ${s.council.rounds + 1} in progress (iteration ${s.iteration})`;
  if (s.status === 'gating') return `quality gates, code review and checklist on the tree of iteration ${s.iteration}`;
  if (s.agentRunning && gatesRunning && gatesRunning.length > 0)
    return `iteration ${s.iteration}: the agent is done, its quality gates run (${gatesRunning.map((g) => g.replace(/_/g, ' ')).join(', ')})`;
  if (s.agentRunning) return `iteration ${s.iteration} running (${s.phase}, tier ${s.tier})`;
  return s.status;
}

const MARK = { pass: '✓', fail: '✗', inconclusive: '?' } as const;

/** A gate's mark: a pass that checked nothing (`not applicable: …`, e.g. no build to run) is a dash, not a tick. */
const markOf = (g: GateResult): string => (g.verdict === 'pass' && /^not applicable\b/.test(g.reason ?? '') ? '–' : MARK[g.verdict]);

/** The gates that ran on one iteration's tree, a mark each; failing ones with their reason. */
export function gatesLine(gates: readonly GateResult[], iteration: number): string {
  const these = gates.filter((g) => g.iteration === iteration && g.gate !== 'code_review' && g.gate !== 'checklist');
  const failing = these.filter((g) => g.verdict === 'fail').map((g) => `${g.gate.replace(/_/g, ' ')}: ${g.reason}`);
  return (
    `quality gates on iteration ${iteration}: ` +
    `${these.map((g) => `${markOf(g)} ${g.gate.replace(/_/g, ' ')}`).join(' · ')}${failing.length ? ` — ${failing.join('; ')}` : ''}`
  );
}

export function reviewLine(r: ReviewRecord): string {
  const who = r.reviewers.map((x) => `${x.reviewer} ${x.verdict}`).join(', ');
  return (
    `code review ${r.round} (iteration ${r.iteration}): ${r.result.toUpperCase()} · ` +
    `${who || 'no reviewer'}${r.devilsAdvocate ? ` · devil's advocate ${r.devilsAdvocate.verdict}` : ''} · mergeability ` +
    `${r.mergeability}${r.result === 'pass' ? '' : ` — ${r.reason}`}`
  );
}

export interface FollowOptions {
  /** 'terminal': until the run finishes; 'paused': until it is paused (or finishes). */
  until: 'terminal' | 'paused';
  timeoutMs?: number;
  onLine?: (line: string) => void;
  /** Each thing said as a record (`watch --json`); its `text` is the line `onLine` gets first. */
  onEvent?: (event: FollowEvent) => void;
  pollMs?: number;
}

export interface FollowResult {
  view: RunView;
  exitCode: number;
  reached: boolean;
}

export async function followRun(client: Client, workflowId: string, opts: FollowOptions): Promise<FollowResult> {
  // Every line may carry agent text (a reason, a signal's words): terminal-safe, one line each.
  const onLine = opts.onLine ?? (() => {});
  const onEvent = opts.onEvent ?? (() => {});
  /** Says an event: its line (then `more` lines, indented) to onLine, the record to onEvent. */
  const emit = (event: FollowEvent, more: readonly string[] = []): void => {
    const text = neutraliseLine(event.text);
    onLine(text);
    for (const l of more) onLine(neutraliseLine(`  ${l}`));
    onEvent({ ...event, text });
  };
  const say = (text: string, kind: 'unreachable' = 'unreachable'): void => emit({ kind, text });
  const api = sdkRunApi(client);
  const deadline = opts.timeoutMs ? Date.now() + opts.timeoutMs : Infinity;
  let lastIteration = 0;
  let lastClaimIteration = 0;
  let lastRound = 0;
  let lastEvidenceIteration = 0;
  let seenEscalations = 0;
  let seenTierChanges = -1;
  let lastGateIteration = 0;
  let lastReview = 0;
  let checklistSaid = false;
  let lastRefusal = 0;
  let seenChecks = 0;
  let lastStatus = '';
  let silentSince: number | null = null;
  for (;;) {
    let view: RunView | null = null;
    try {
      view = await viewRun(api, workflowId);
    } catch (err) {
      if (err instanceof CliError && err.exitCode === EXIT.noSuchRun) throw err;
      // The server is restarting or unreachable: keep waiting, say so once.
      if (lastStatus !== 'unreachable')
        say(`cannot reach Temporal (${err instanceof Error ? err.message.split('\n')[0] : String(err)}); still waiting`);
      lastStatus = 'unreachable';
    }
    if (view?.kind === 'finished' && view.snapshot === null) {
      // A finished run answers its query by a replay of its whole history: give it time once, so
      // the last iteration and decisions are said before the outcome.
      const snapshot = await queryStatus(api, workflowId, 15_000).catch(() => null);
      view = { ...view, snapshot };
    }
    if (view) {
      const snap = view.snapshot;
      if (snap) {
        silentSince = null;
        for (const r of snap.recentIterations) {
          if (r.iteration > lastIteration) {
            emit({ kind: 'iteration', iteration: r, text: iterationLine(r) });
            lastIteration = r.iteration;
          }
        }
        const claim = snap.lastCompletion; // runs from before the council
        if (claim && claim.iteration > lastClaimIteration) {
          lastClaimIteration = claim.iteration;
          if (!claim.accepted)
            emit({
              kind: 'claim_refused',
              completion: claim,
              text: `completion claim of iteration ${claim.iteration} refused: ${claim.reason}${claim.testLogPath ? ` (tests: ${claim.testLogPath})` : ''}`,
            });
        }
        const q = snap.quality;
        if (q) {
          if (!checklistSaid && (q.checklist || q.checklistProblem)) {
            checklistSaid = true;
            const heldOut = q.checklist ? q.checklist.filter((i) => i.heldOut).length : null;
            emit({
              kind: 'checklist',
              items: q.checklist ? q.checklist.length : null,
              heldOut,
              problem: q.checklistProblem,
              text: q.checklist
                ? `PRD checklist: ${q.checklist.length} item(s), ${heldOut} held out from the agent` +
                  (q.checklistProblem ? ` (note: ${q.checklistProblem})` : '')
                : `PRD checklist: none (${q.checklistProblem})`,
            });
          }
          const gateIteration = Math.max(
            0,
            ...q.gates.filter((g) => g.gate !== 'code_review' && g.gate !== 'checklist').map((g) => g.iteration),
          );
          if (gateIteration > lastGateIteration) {
            lastGateIteration = gateIteration;
            emit({
              kind: 'gates',
              iteration: gateIteration,
              gates: q.gates.filter((g) => g.iteration === gateIteration),
              text: gatesLine(q.gates, gateIteration),
            });
          }
          if (q.lastReview && q.lastReview.round > lastReview) {
            lastReview = q.lastReview.round;
            emit({ kind: 'review', review: q.lastReview, text: reviewLine(q.lastReview) });
          }
          const refusal = q.lastRefusal;
          if (refusal && refusal.iteration > lastRefusal) {
            lastRefusal = refusal.iteration;
            emit({
              kind: 'refused_before_council',
              ...refusal,
              text:
                `completion at iteration ${refusal.iteration} refused before the council was asked ` +
                `(${refusal.gates.map((g) => g.replace(/_/g, ' ')).join(', ')}): ${refusal.reason}`,
            });
          }
        }
        for (const v of snap.council?.verdicts ?? []) {
          if (v.round <= lastRound) continue;
          lastRound = v.round;
          lastEvidenceIteration = Math.max(lastEvidenceIteration, v.iteration);
          // Each member's vote and reason, under the round's line.
          const votes = voteLines(v);
          emit({ kind: 'council', verdict: v, votes: votes.map(neutraliseLine), text: verdictLine(v) }, votes);
        }
        const escalations = snap.escalations ?? [];
        for (const e of escalations.slice(seenEscalations)) {
          emit({
            kind: 'escalation',
            escalation: e,
            text:
              `escalated to a person at iteration ${e.iteration} (${e.reason.replace(/_/g, ' ')}): ${e.detail} — ` +
              `${e.paused ? 'paused' : 'not paused'}; handoff ${e.handoffMarkdownPath}`,
          });
        }
        seenEscalations = escalations.length;
        const changes = snap.ladder?.changes ?? [];
        if (seenTierChanges >= 0)
          for (const c of changes.slice(seenTierChanges))
            emit({ kind: 'tier_change', change: c, text: `model tier ${c.from} -> ${c.to} at iteration ${c.iteration}: ${c.trigger}` });
        seenTierChanges = changes.length;
        const check = snap.checks?.last;
        if (snap.checks && check && snap.checks.total > seenChecks) {
          seenChecks = snap.checks.total;
          // Council rounds and the refusals before them have their own lines; the evidence gate's
          // refusal of an empty diff has none.
          if (check.cause === 'evidence' && !check.approved) emit({ kind: 'check', check, text: checkLine(check) });
        }
        const ev = snap.checks ? null : snap.lastEvidence;
        if (ev && ev.iteration > lastEvidenceIteration) {
          lastEvidenceIteration = ev.iteration;
          if (!ev.pass)
            emit({
              kind: 'evidence',
              evidence: ev,
              text: `completion claim of iteration ${ev.iteration} refused by the evidence gate: ${ev.reason}`,
            });
        }
        const line = statusLine(snap);
        // A bare "running" between two iterations says nothing new; an outcome the workflow has not
        // yet returned (it delivers first) is said once, by the finished event.
        if (line !== lastStatus && view.kind !== 'finished' && !snap.outcome && line !== 'running')
          emit({ kind: 'status', status: snap.status, paused: snap.paused, text: line });
        lastStatus = line;
      } else if (view.kind === 'running') {
        silentSince ??= Date.now();
        if (lastStatus !== 'no-worker') {
          emit({
            kind: 'no_worker',
            status: view.searchStatus,
            iteration: view.iteration,
            text:
              `run is ${view.searchStatus ?? 'running'} at iteration ${view.iteration ?? '?'}; no worker is answering yet (start ` +
              `one with \`vigil worker\`)`,
          });
        }
        lastStatus = 'no-worker';
      }
      if (view.kind === 'finished') {
        const o = view.outcome;
        const exitCode = o ? exitCodeOf(o) : 1;
        emit(
          {
            kind: 'finished',
            outcome: o ? { status: o.status, reason: o.reason, exitCode: o.exitCode, notes: o.notes } : null,
            temporalStatus: view.temporalStatus,
            exitCode,
            text: o
              ? `finished: ${o.status} (exit ${o.exitCode}) — ${o.reason}`
              : `finished: workflow ${view.temporalStatus.toLowerCase()}`,
          },
          [],
        );
        for (const note of o?.notes ?? []) onLine(neutraliseLine(`note: ${note}`));
        return { view, exitCode, reached: opts.until === 'terminal' };
      }
      // Paused means no call runs: a pause asked for during a call is reached when the call has finished.
      if (opts.until === 'paused' && snap?.paused && !snap.agentRunning) return { view, exitCode: 0, reached: true };
    }
    if (Date.now() >= deadline) {
      throw new CliError(
        `timed out after ${Math.round((opts.timeoutMs ?? 0) / 1000)} s waiting for run "${workflowId}" to ${opts.until === 'paused' ? 'pause' : 'finish'}`,
        EXIT.timeout,
      );
    }
    await sleep(opts.pollMs ?? 1000);
  }
}
