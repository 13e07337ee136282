/**
 * What `vigil status` prints: the run snapshot as text or JSON (what Temporal itself knows when no
 * worker answered). Light: no schemas, no workflow code.
 */
import { forkStatusLines } from '../rules/fork-lines.js';
import { isUndeliveredNote } from '../rules/undelivered-directives.js';
import {
  checkpointLines,
  deniedLines,
  providerWaitText,
  qualityLines,
  sandboxLine,
  spendText,
  streamLine,
  tasksLine,
  voteLines,
} from '../rules/ui.js';
import { checkLine, CHECK_TRIGGER_WORDS, iterationLine, statusLine, verdictLine } from './follow.js';
import { neutraliseLine } from '../lib/terminal-text.js';
import { packagesLines } from '../rules/package-fetches.js';
import { fetchLogPath } from '../schemas/paths.js';
import { LEVEL_TIER } from '../rules/tier-ladder.js';
import { complexityLine } from '../rules/complexity.js';
import { describeBreach } from '../rules/contract.js';
import { prLife, prLifeLines } from '../rules/pr-life.js';
import type { RunView } from './steer.js';
import type { StatusJson } from '../schemas/cli-output.js';
import type { StatusSnapshot } from '../schemas/status.js';

export function statusJson(view: RunView): StatusJson {
  const snap = view.snapshot;
  if (snap) {
    // gatesRunning: what a gate pass runs right now, from the run's describe (null when none).
    return {
      ...snap,
      workerAnswered: true as const,
      temporalStatus: view.kind === 'finished' ? view.temporalStatus : 'RUNNING',
      gatesRunning: view.kind === 'running' ? (view.gatesRunning ?? null) : null,
    };
  }
  // No worker answered: what Temporal itself knows (search attributes, the result).
  return {
    workflowId: view.workflowId,
    status: view.kind === 'finished' ? 'finished' : (view.searchStatus ?? 'running'),
    iteration: view.iteration,
    phase: null,
    tier: null,
    paused: view.kind === 'running' ? view.searchStatus === 'paused' : false,
    pause: null,
    consecutiveNoChange: null,
    outcome:
      view.kind === 'finished' && view.outcome
        ? { status: view.outcome.status, reason: view.outcome.reason, exitCode: view.outcome.exitCode }
        : null,
    invalidMessages: [],
    workerAnswered: false as const,
    workflowTaskFailing: view.kind === 'running' ? view.taskFailing : null,
    gatesRunning: null,
    temporalStatus: view.kind === 'finished' ? view.temporalStatus : 'RUNNING',
  };
}

export function printStatus(view: RunView, out: (line?: string) => void): void {
  const snap = view.snapshot;
  out(`run ${view.workflowId}`);
  if (view.kind === 'finished') {
    const o = view.outcome;
    out(`  finished  : ${o ? `${o.status} (exit ${o.exitCode}) — ${o.reason}` : `workflow ${view.temporalStatus.toLowerCase()}`}`);
    for (const note of o?.notes ?? []) out(`  note      : ${note}`);
  } else if (!snap) {
    out(`  status    : ${view.searchStatus ?? 'running'} at iteration ${view.iteration ?? '?'} (from search attributes)`);
    out(
      view.taskFailing
        ? `  worker    : the run's workflow task keeps failing: ${view.taskFailing} (see the worker's log)`
        : '  worker    : no worker is polling; start one with `vigil worker`',
    );
  }
  if (!snap) return;
  out(`  status    : ${statusLine(snap, view.kind === 'running' ? (view.gatesRunning ?? null) : null)}`);
  // The ladder may have moved since the last iteration ran: the next one runs at its level's tier.
  const nextTier = snap.ladder && view.kind === 'running' ? LEVEL_TIER[snap.ladder.level] : null;
  const tierText = snap.tier
    ? `tier ${snap.tier}${nextTier && nextTier !== snap.tier ? `; the next iteration runs at tier ${nextTier} (ladder ${snap.ladder?.level})` : ''}`
    : '';
  out(`  iteration : ${snap.iteration} of at most ${snap.maxIterations}${snap.phase ? ` (${snap.phase}, ${tierText})` : ''}`);
  out(`  repository: ${snap.repoPath}`);
  if (snap.complexity) out(`  complexity: ${complexityLine(snap.complexity)}`);
  if (snap.host) out(`  host      : ${snap.host}`);
  // The pull request the run follows (knob followPr): where it stands and what happened to it; comments' authors are other people's text.
  const life = prLife(snap);
  if (life) for (const [i, l] of prLifeLines(life).entries()) out(neutraliseLine(`  ${i === 0 ? 'PR        :' : '           '} ${l}`));
  out(`  no change : ${snap.consecutiveNoChange} iteration(s) in a row; failures in a row: ${snap.consecutiveFailures}`);
  if (snap.providerWait) out(`  provider  : ${providerWaitText(snap.providerWait)}`);
  if (snap.spend.calls > 0 || snap.budgetUsd > 0) out(`  spend     : ${spendText(snap)}`);
  if (snap.sandbox) {
    out(`  sandbox   : ${sandboxLine(snap.sandbox, snap.sandbox.mode)}`);
    // What the agent tried and the sandbox refused: agent-chosen targets, shown terminal-safe.
    for (const l of deniedLines(snap.sandbox)) out(neutraliseLine(`  refused   : ${l}`));
    // The calls a sandbox limit ended (docs/security.md, Limits inside the sandbox), newest last.
    const hits = snap.sandbox.limitHits ?? [];
    for (const h of hits) out(`  limit     : iteration ${h.iteration} (${h.role}): ${h.reason}`);
    const more = (snap.sandbox.limitHitsTotal ?? 0) - hits.length;
    if (more > 0) out(`  limit     : … ${more} earlier call(s) ended by a limit`);
    // The package fetches of the builder and the test runs (docs/security.md, Package registries): counted, each in the run's fetch log.
    const pkg = snap.sandbox.packages;
    if (pkg) for (const l of packagesLines(pkg, fetchLogPath(snap.repoPath, snap.workflowId))) out(neutraliseLine(`  packages  : ${l}`));
  }
  for (const d of snap.deadLetters ?? []) out(`  dead letter: ${d.errorClass} ${d.attempts} times (iterations ${d.iterations.join(', ')})`);
  // A run split into parallel streams: one line per task (titles are the person's or the planner's text: terminal-safe).
  if (snap.tasks) out(neutraliseLine(`  tasks     : ${tasksLine(snap.tasks)}`));
  for (const t of snap.streams ?? []) out(neutraliseLine(`  stream    : ${streamLine(t)}`));
  // A run stuck with onStuck=fork: where it forked from, each fork and the winner (models are the person's text: terminal-safe).
  if (snap.fork) for (const l of forkStatusLines(snap.fork, snap.fork.attempts)) out(neutraliseLine(`  fork      : ${l}`));
  // A finished run's note names its undelivered directives (cli/status prints the notes above); older runs have no such note.
  const noted = view.kind === 'finished' && (view.outcome?.notes ?? []).some(isUndeliveredNote);
  if (snap.pendingDirectives && !noted)
    out(
      `  directives: ${snap.pendingDirectives} ${view.kind === 'finished' ? 'never reached a prompt: the run ended first' : 'waiting for the next prompt'}`,
    );
  if (snap.directivesInCall && view.kind === 'running')
    out(`  directives: ${snap.directivesInCall} in the prompt of the running call (iteration ${snap.iteration})`);
  if (snap.acceptance) out(neutraliseLine(`  acceptance: ${acceptanceStatusLine(snap.acceptance)}`));
  if (snap.lastCompletion) out(`  last claim: iteration ${snap.lastCompletion.iteration}: ${snap.lastCompletion.reason}`);
  if (typeof snap.council.heldClaimIteration === 'number') {
    const trigger = snap.council.heldClaimTrigger;
    const what =
      trigger && trigger !== 'claim' && trigger in CHECK_TRIGGER_WORDS
        ? CHECK_TRIGGER_WORDS[trigger as keyof typeof CHECK_TRIGGER_WORDS]
        : 'the completion claim';
    out(
      `  held check: ${what} of iteration ${snap.council.heldClaimIteration} is judged ${snap.pause ? 'once the run is resumed' : 'at the next boundary'}`,
    );
  }
  if (snap.checks?.last)
    out(`  checks    : ${snap.checks.total} completion check(s), ${snap.checks.refused} refused; last: ${checkLine(snap.checks.last)}`);
  if (snap.contract?.last && snap.contract.consecutive > 0)
    out(
      `  contract  : ${snap.contract.consecutive} check(s) in a row with an answer in the wrong format: ${describeBreach(snap.contract.last)}`,
    );
  const round = snap.council.verdicts.at(-1);
  if (round) {
    // The latest round with each member's vote and reason: agent text, shown terminal-safe.
    out(`  council   : ${verdictLine(round)}`);
    for (const l of voteLines(round)) out(neutraliseLine(`              ${l}`));
  }
  if (snap.council.forceReviewPending) out('  review    : a council review was asked for and convenes at the next boundary');
  for (const line of qualityLines(snap)) out(`  ${line}`);
  for (const line of checkpointLines(snap)) out(`  ${line.replace(/`/g, '')}`);
  if (snap.invalidMessageCount)
    out(`  ignored   : ${snap.invalidMessageCount} invalid message(s); last: ${snap.invalidMessages.at(-1)?.error ?? ''}`);
  for (const r of snap.recentIterations.slice(-5)) out(`  ${iterationLine(r)}`);
}

/** The sealed acceptance tests and their latest verdict (knob acceptanceTests; docs/how-a-run-works.md). */
export function acceptanceStatusLine(a: NonNullable<StatusSnapshot['acceptance']>): string {
  const sealed = `${a.files} sealed file(s)${a.drafted ? ` written by the acceptance agent from the PRD (${a.drafted.dir})` : ''}`;
  const l = a.last;
  if (a.drafted?.dropped)
    return `${sealed}; not used: they passed on the starting tree before any work, so they cannot tell when the PRD is done`;
  if (!l) return `${sealed}; not run yet`;
  const total = l.passed !== null && l.failed !== null ? l.passed + l.failed : null;
  const counts = total !== null ? ` (${l.passed} of ${total} passed)` : '';
  const names = l.failing.length ? `; failing: ${l.failing.join(', ')}` : '';
  return `${sealed}; ${l.iteration === 0 ? 'on the starting tree' : `iteration ${l.iteration}`}: ${l.verdict}${counts}${names}`;
}
