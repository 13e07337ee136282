/**
 * What the Temporal UI shows for a run: the static summary/details set at start and the short
 * markdown "current details" refreshed every iteration. Pure text builders.
 */
import type { RunInput, Verdict } from '../schemas/run.js';
import { utf8Length } from '../schemas/utf8.js';
import type { StatusSnapshot } from '../schemas/status.js';
import { isUndeliveredNote } from '../rules/undelivered-directives.js';
import { prCountsLine, prLife, prTitle } from '../rules/pr-life.js';
import { deniedLines, sandboxLine } from '../rules/sandbox-text.js';

/** At most `n` UTF-8 bytes, cut on a code point boundary, with an ellipsis when cut. */
function clip(s: string, n: number): string {
  if (utf8Length(s) <= n) return s;
  const points = Array.from(s);
  let out = '';
  let bytes = 3; // the ellipsis
  for (const p of points) {
    const b = utf8Length(p);
    if (bytes + b > n) break;
    out += p;
    bytes += b;
  }
  return `${out}…`;
}

/**
 * Text for the Temporal UI's markdown: every `$` outside a code span escaped as `\$`. The UI's
 * renderer (the ui-server's gomarkdown, whose common extensions include MathJax) reads `$…$` as
 * inline math and `$$` as a math block, so `$1.20 of $1.00` would show as `\(1.20 of \)1.00`; a
 * backslash before `$` is an escape it (and CommonMark) honours. Backslashes already before a `$`
 * are doubled, so the `$` stays escaped and they still show. Inside a code span (backticks) nothing
 * is parsed, so nothing is escaped there.
 */
export function cardMarkdown(text: string): string {
  let out = '';
  let i = 0;
  while (i < text.length) {
    if (text[i] === '`') {
      // A code span: a run of n backticks up to the next run of exactly n (CommonMark); unclosed, the run is plain text.
      const run = /^`+/.exec(text.slice(i))?.[0] ?? '`';
      const close = new RegExp(`(?<!\`)${run}(?!\`)`, 'g');
      close.lastIndex = i + run.length;
      const m = close.exec(text);
      const end = m ? m.index + run.length : i + run.length;
      out += text.slice(i, end);
      i = end;
      continue;
    }
    const next = text.indexOf('`', i);
    const plain = text.slice(i, next === -1 ? text.length : next);
    out += plain.replace(/(\\*)\$/g, (_m, slashes: string) => `${slashes}${slashes}\\$`);
    i = next === -1 ? text.length : next;
  }
  return out;
}

/** At most 200 bytes: shown in the workflow list. */
export function staticSummary(input: Pick<RunInput, 'prdTitle' | 'repoPath'>): string {
  const repo = input.repoPath.split('/').filter(Boolean).pop() ?? input.repoPath;
  // Escaped first, then clipped: the escapes count against the bytes too.
  return clip(cardMarkdown(`Vigil · ${input.prdTitle || 'untitled PRD'} · ${repo}`), 180);
}

export function staticDetails(input: Pick<RunInput, 'prdTitle' | 'prdPath' | 'repoPath' | 'knobs' | 'host'>): string {
  const k = input.knobs;
  const text = [
    `### ${clip(input.prdTitle || 'Untitled PRD', 150)}`,
    '',
    `- **PRD:** \`${input.prdPath}\``,
    `- **Repository:** \`${input.repoPath}\``,
    ...(input.host ? [`- **Host:** ${input.host} (its workers run the agent, git and tests)`] : []),
    // The binary only: arguments may carry tokens, and the UI shows this to everyone.
    `- **Provider:** ${k.provider}${k.agentCommand[0] ? ` \`${clip(k.agentCommand[0], 200)}\`` : ''}`,
    `- **Caps:** ${k.maxIterations} iterations, ${k.maxRetries} consecutive failures${k.maxDurationSeconds ? `, ${k.maxDurationSeconds}s wall clock` : ''}`,
    `- **Tests:** ${k.testCommand ? `\`${clip(k.testCommand, 200)}\`` : 'none configured'}`,
  ].join('\n');
  return cardMarkdown(text);
}

/** One line for a council round (handoffs, notifications). */
export function verdictSummary(v: Verdict): string {
  return v.result === 'BLOCKED_BY_GATE'
    ? `round ${v.round} at iteration ${v.iteration} blocked by the evidence gate (${v.evidence.reason})`
    : `round ${v.round} at iteration ${v.iteration} ${v.result.toLowerCase()}: ${v.approve} of ${v.size} approved, ${v.threshold} needed`;
}

/** A council member's vote as the status snapshot (with its role) and the event journal (without) both carry it. */
export interface VoteLike {
  /** 0-based, as the round numbers its members. */
  member: number;
  role?: string;
  recorded: string;
  approves: boolean;
  overridden?: boolean;
  reason: string;
}

/** One member's vote and why, on one line: `member 2 (security): REJECT — no test covers the empty string`. */
export function voteLine(v: VoteLike): string {
  const vote = v.overridden ? `${v.recorded} (counted as approval: its issues are below the severity threshold)` : v.recorded;
  const reason = v.reason.replace(/\s+/g, ' ').trim();
  return `member ${v.member + 1}${v.role ? ` (${v.role})` : ''}: ${vote}${reason ? ` — ${clip(reason, 300)}` : ''}`;
}

/** Each member's vote and reason in a round, then the devil's advocate's, a line each. */
export function voteLines(v: Pick<Verdict, 'votes' | 'devilsAdvocate'>): string[] {
  const lines = v.votes.map(voteLine);
  const da = v.devilsAdvocate;
  if (da?.triggered) {
    const reason = da.reason.replace(/\s+/g, ' ').trim();
    lines.push(
      `devil's advocate: ${da.recorded}${da.flipped ? ' (overturned the approval)' : ''}${reason ? ` — ${clip(reason, 300)}` : ''}`,
    );
  }
  return lines;
}

/**
 * What the run spent, and what it cannot price: `$1.20 of $5.00 budget (4 call(s); 1 unpriced: ...)`.
 * A run none of whose calls reported a cost (a `command` agent that writes no usage file) says so
 * instead of a `$0.00` that would read as priced, and that its budget cannot stop it.
 */
export function spendText(s: Pick<StatusSnapshot, 'spend' | 'budgetUsd'>): string {
  const calls = s.spend.calls;
  const unknown = Math.min(s.spend.unpricedCalls ?? 0, calls);
  const o = s.spend.orchestration;
  if (calls > 0 && unknown === calls) {
    const budget = s.budgetUsd > 0 ? `; the $${s.budgetUsd.toFixed(2)} budget cannot stop the run: no call reported its cost` : '';
    return `unpriced: ${calls} call(s), none reported its cost${o ? ` (orchestration ${o.calls})` : ''}${budget}`;
  }
  // What orchestration (reviewers, checklist roles, council) cost of it, beside the builder's calls.
  const share = o && s.spend.usd > 0 ? ` (${Math.round((o.usd / s.spend.usd) * 100)}%)` : '';
  const orchestration = o ? `; orchestration ${o.calls} call(s), $${o.usd.toFixed(2)}${share}` : '';
  return (
    `$${s.spend.usd.toFixed(2)}${s.budgetUsd > 0 ? ` of $${s.budgetUsd.toFixed(2)} budget` : ''} (${calls} call(s` +
    `)${unknown ? `; ${unknown} unpriced: the agent reported no cost` : ''}${orchestration})`
  );
}

/** What a person does next for a paused run: the `vigil` command and the raw signal any tool can send. */
export function nextStep(s: Pick<StatusSnapshot, 'workflowId' | 'pause' | 'budgetUsd' | 'spend'>): string {
  const id = s.workflowId;
  const reason = s.pause?.reason ?? '';
  if (/^budget exceeded/.test(reason)) {
    const usd = Math.ceil(Math.max(s.spend.usd * 2, s.budgetUsd * 2, 1));
    return (
      `**Next step:** raise the budget and resume — \`vigil budget ${id} --usd ${usd}\` then \`vigil resume ${id}\` (or ` +
      `\`temporal workflow signal -w ${id} --name budget --input '{"usd":${usd}}'\` and \`--name resume\`); or \`vigil stop ` +
      `${id}\``
    );
  }
  const advice = /^authentication failed/.test(reason)
    ? 'fix the credentials where the worker runs (`vigil doctor`), then resume'
    : /^repository unavailable/.test(reason) && /Vigil's own worktree of this stream/.test(reason)
      ? "resume: Vigil makes the stream's worktree again from its last checkpoint (or stop it: its task is tried once more)"
      : /^(repository unavailable|disk full)/.test(reason)
        ? 'restore the repository or free space, then resume'
        : /^contract error/.test(reason)
          ? "fix the agent command's answer format (check it with `vigil doctor --agent-command CMD`; see docs/agent-contract.md), then resume"
          : /^escalation/.test(reason)
            ? 'read the handoff, optionally redirect (`vigil input ' +
              id +
              ' "…"`) or ask the council (`vigil review ' +
              id +
              '`), then resume'
            : 'resume when ready';
  return `**Next step:** ${advice} — \`vigil resume ${id}\` (or \`temporal workflow signal -w ${id} --name resume\`); to end it, \`vigil stop ${id}\``;
}

/** The quality gates, the latest code review and the PRD checklist (held-out items masked), a line each. */
export function qualityLines(s: StatusSnapshot): string[] {
  const lines: string[] = [];
  const q = s.quality;
  if (q && q.gates.length > 0) {
    const mark = { pass: '✓', fail: '✗', inconclusive: '?' } as const;
    lines.push(
      `Quality gates: ${q.gates
        .map((g) => `${mark[g.verdict]} ${g.gate.replace(/_/g, ' ')}${q.failing[g.gate] ? ` (${q.failing[g.gate]}× in a row)` : ''}`)
        .join(' · ')}`,
    );
    for (const g of q.gates.filter((x) => x.verdict === 'fail').slice(0, 3))
      lines.push(`- ${g.gate.replace(/_/g, ' ')}: ${clip(g.reason, 200)}`);
  }
  if (q?.lastReview) {
    const r = q.lastReview;
    lines.push(
      `Code review ${r.round} (iteration ${r.iteration}): ${r.result.toUpperCase()} · ${r.reviewers.map((x) => `${x.reviewer} ${x.verdict}`).join(', ')}` +
        `${r.devilsAdvocate ? ` · devil's advocate ${r.devilsAdvocate.verdict}` : ''} · mergeability ${r.mergeability} — ${clip(r.reason, 200)}`,
    );
  }
  if (q?.checklist) {
    const c = q.checklist;
    const n = (st: string): number => c.filter((i) => i.status === st).length;
    const waived = c.filter((i) => i.waived).length;
    lines.push(
      `PRD checklist: ${c.length} item(s) · ${n('passing')} passing · ${n('failing')} failing · ` +
        `${n('unverified')} unverified${waived ? ` · ${waived} waived` : ''}`,
    );
    for (const i of c.filter((x) => x.status === 'failing' && !x.waived).slice(0, 5))
      lines.push(`- ${i.id} (${i.priority}) failing: ${clip(i.title, 120)}`);
    if (q.checklistProblem) lines.push(`- note: ${clip(q.checklistProblem, 300)}`);
  } else if (q?.checklistProblem) {
    lines.push(`PRD checklist: none (${clip(q.checklistProblem, 200)})`);
  }
  return lines;
}

/** The latest checkpoint and the latest rewind (who, from where to where, why), a line each. */
export function checkpointLines(s: StatusSnapshot): string[] {
  const cp = s.checkpoints;
  if (!cp) return [];
  const lines: string[] = [];
  const last = cp.list.at(-1);
  if (last)
    lines.push(
      `Checkpoint of iteration ${last.iteration}: \`${last.commit.slice(0, 12)}\` (${last.ref}) · ${cp.list.length} kept of ` +
        `${cp.kept} · \`vigil checkpoints ${s.workflowId}\``,
    );
  else if (cp.kept === 0) lines.push('Checkpoints off (checkpointsKept 0): the run cannot be rewound');
  const r = cp.rewinds.at(-1);
  if (r) {
    lines.push(
      `Rewound by ${r.by} at ${r.at} from iteration ${r.from} to iteration ${r.to}${r.reason ? `: ${clip(r.reason, 300)}` : ''}` +
        (r.directive ? ` · directive: "${clip(r.directive, 120)}"` : '') +
        (r.interruptedAgent ? ' · the running agent call was cancelled' : '') +
        ` · the tree before is kept as ${r.savedRef}`,
    );
  }
  return lines;
}

/**
 * What Temporal's own buttons do to this run, shown in the card the UI puts beside them: they act on
 * the workflow, not on Vigil's run (tests/workflow/temporal-buttons.test.ts pins what each does).
 */
export function temporalButtons(s: Pick<StatusSnapshot, 'workflowId' | 'outcome'>): string {
  const id = s.workflowId;
  if (s.outcome) {
    return (
      `**Temporal's Reset** replays this run's history from the chosen event but leaves the repository's files as they are now; ` +
      `to go back, \`vigil rewind ${id} --to N --fork\` starts a new run from checkpoint N with its tree restored`
    );
  }
  return (
    "**Temporal's buttons act on the workflow, not on the run:** " +
    `**Cancel** stops it at once, as \`vigil stop ${id} --now\` (the agent call is killed; outcome stopped); ` +
    '**Terminate** ends it with no outcome, handoff or final record; ' +
    `**Reset** replays its history but leaves the repository's files as they are (\`vigil rewind ${id} --to N\` restores both); ` +
    `**Pause** on the agent call's activity does not pause the run (the agent goes on, or is killed and its iteration counted ` +
    `as failed): use \`vigil pause ${id}\``
  );
}

/**
 * The card: a finished run's outcome first (the UI shows the workflow as Completed whatever it
 * came to), then what the run is doing or did, and last what Temporal's own buttons would do to it.
 */
export function currentDetails(s: StatusSnapshot): string {
  const where = `iteration ${s.iteration}/${s.maxIterations}` + (s.phase ? ` · ${s.phase} · tier ${s.tier}` : '');
  const notes = s.outcome?.notes ?? [];
  const lines = s.outcome
    ? [
        `**${s.outcome.status.toUpperCase()}** (exit ${s.outcome.exitCode}) — ${clip(s.outcome.reason, 300)}`,
        ...notes.map((note) => `Note: ${clip(note, 300)}`),
        `Finished at ${where}`,
      ]
    : [`**${s.status.toUpperCase()}** · ${where}`];
  if (s.pause) {
    lines.push(`Paused by ${s.pause.by} at ${s.pause.at}${s.pause.reason ? `: ${clip(s.pause.reason, 500)}` : ''}`);
    lines.push(nextStep(s));
    const d = s.pause.deadlines;
    if (d && !d.answered && (d.remindAt || d.rerouteAt || d.deadlineAt)) {
      const parts = [
        d.remindAt ? `reminder ${d.reminded ? `sent ${d.reminded}` : `at ${d.remindAt}`}` : '',
        d.rerouteAt ? `re-route ${d.rerouted ? `sent ${d.rerouted}` : `at ${d.rerouteAt}`}` : '',
        d.deadlineAt ? `deadline at ${d.deadlineAt} (then: ${d.onDeadline})` : '',
      ].filter(Boolean);
      lines.push(`Waits for a person: ${parts.join('; ')}`);
    }
  }
  lines.push(...pullRequestCard(s));
  if (s.providerWait)
    lines.push(
      `Waiting for provider ${s.providerWait.provider} until ${s.providerWait.until} (circuit breaker: ` +
        `${s.providerWait.reason.replace(/_/g, ' ')}); \`vigil providers\` shows it`,
    );
  if (s.backoffUntil) lines.push(`Backing off until ${s.backoffUntil} after ${s.consecutiveFailures} consecutive failure(s)`);
  const last = s.lastIteration;
  if (last) {
    lines.push(
      `Last iteration ${last.iteration}${last.exitCode !== 0 ? ' **FAILED**' : ''}: exit ${last.exitCode} in ${Math.round(last.durationMs / 1000)}s` +
        `${last.attempts > 1 ? ` (attempt ${last.attempts})` : ''} · ${last.changed ? 'changed files' : 'no change'}` +
        ` · ${last.filesChangedSinceStart} file(s) differ from run start`,
    );
  }
  lines.push(`No-change streak ${s.consecutiveNoChange} · failures in a row ${s.consecutiveFailures}`);
  const v = s.council.verdicts.at(-1);
  if (v) {
    lines.push(
      `Council round ${v.round} (iteration ${v.iteration}, ${v.trigger.replace(/_/g, ' ')}): **${v.result}**` +
        (v.result === 'BLOCKED_BY_GATE' ? ` — ${v.evidence.reason}` : ` · ${v.approve}/${v.size} approve, ${v.threshold} needed`) +
        (v.devilsAdvocate?.flipped ? " · devil's advocate objected" : ''),
    );
  }
  lines.push(...qualityLines(s));
  lines.push(...checkpointLines(s));
  if (s.breaker) lines.push(`Circuit breaker tripped (${s.breaker.replace(/_/g, ' ')}): the council convenes every iteration`);
  if (s.council.forceReviewPending) lines.push('A council review was requested and convenes at the next boundary');
  if (typeof s.council.heldClaimIteration === 'number')
    lines.push(`The completion check of iteration ${s.council.heldClaimIteration} was interrupted and is judged at the next boundary`);
  const p = s.uncertainty.lastProxies;
  const hot = [p.p1 ? 'no change' : '', p.p2 ? 'oscillation' : '', p.p3 ? 'council split' : ''].filter(Boolean);
  if (s.uncertainty.enabled && (hot.length > 0 || s.uncertainty.escalatedEpisode)) {
    lines.push(
      `Stuck signals: ${hot.length ? hot.join(' + ') : 'none'} · co-occurring ` +
        `${s.uncertainty.consecutiveCoOccur} round(s)${s.uncertainty.escalatedEpisode ? ' · escalated this episode' : ''}`,
    );
  }
  if (s.complexity) lines.push(`Complexity ${s.complexity.tier}: phases ${s.complexity.phases.join(' > ')}`);
  if (s.ladder) {
    const c = s.ladder.changes.at(-1);
    lines.push(
      `Model tier ${s.ladder.level}${s.ladder.pinnedHigh ? ' (pinned: the PRD is always-HIGH)' : ''}` +
        (c ? ` since iteration ${c.iteration}: ${c.trigger}` : ''),
    );
  }
  const e = s.escalations.at(-1);
  if (s.deadLetters?.length) {
    const d = s.deadLetters.at(-1);
    if (d)
      lines.push(
        `Dead letter: ${d.errorClass} ${d.attempts} times (iterations ${d.iterations.join(', ')}): ` +
          `${clip(d.tail.split('\n').filter(Boolean).at(-1) ?? '', 200)}`,
      );
  }
  if (e && s.latestHandoff) lines.push(`Latest handoff: ${clip(s.latestHandoff.summary, 600)}`);
  if (e)
    lines.push(
      `Escalated to a person at iteration ${e.iteration} (${e.reason.replace(/_/g, ' ')}): ${clip(e.detail, 200)} — ` +
        `${e.paused ? 'paused' : 'not paused'}; handoff \`${e.handoffMarkdownPath}\``,
    );
  if (e && e.questions.length > 0)
    lines.push(`Open questions from the agent:\n${e.questions.map((q, i) => `${i + 1}. ${clip(q, 300)}`).join('\n')}`);
  if (s.memory && (s.memory.entries > 0 || s.memory.learnings)) {
    const m = s.memory;
    lines.push(
      `Run memory: ${m.entries} entr${m.entries === 1 ? 'y' : 'ies'}${m.dropped ? ` (${m.dropped} older dropped)` : ''}, in ` +
        `every prompt${m.continuity ? ' · the agent keeps .vigil/CONTINUITY.md' : ''}${m.learnings ? ' · learnings.md read' : ''}`,
    );
  }
  if (s.budgetUsd > 0 || s.spend.calls > 0) lines.push(`Spend ${spendText(s)}`);
  // A run split into parallel streams: where its tasks came from, then each stream (the Relationships tab lists the child runs).
  if (s.tasks) lines.push(`Tasks: ${tasksLine(s.tasks)}${(s.streams ?? []).map((t) => `\n- ${clip(streamLine(t), 400)}`).join('')}`);
  if (s.sandbox) {
    // Isolation off, or escape attempts refused: things a person should see on the card.
    if (s.sandbox.last && !s.sandbox.last.applied) lines.push(`**Agent not isolated**: ${sandboxLine(s.sandbox, s.sandbox.mode)}`);
    else if (s.sandbox.deniedTotal > 0)
      lines.push(
        `**Sandbox refused ${s.sandbox.deniedTotal} escape attempt${s.sandbox.deniedTotal === 1 ? '' : 's'}**: ${deniedLines(s.sandbox, 3).join('; ')}`,
      );
    // Calls a sandbox limit ended: the latest, and how many.
    const hit = s.sandbox.limitHits?.at(-1);
    const hits = s.sandbox.limitHitsTotal ?? 0;
    if (hit && hits > 0)
      lines.push(
        `**A sandbox limit ended ${hits} call${hits === 1 ? '' : 's'}**: the latest, iteration ${hit.iteration} (${hit.role}): ${hit.reason}`,
      );
  }
  if (s.notifications.failed)
    lines.push(
      `Notifications: ${s.notifications.sent} sent, ${s.notifications.failed} failed (last: ${clip(s.notifications.recentFailures.at(-1)?.error ?? '', 120)})`,
    );
  if (s.lastCompletion) {
    lines.push(`Last completion claim (iteration ${s.lastCompletion.iteration}): ${s.lastCompletion.reason}`);
  }
  // A run that ended with directives pending names them in a note (runs from before the note do not).
  if (s.pendingDirectives && !notes.some(isUndeliveredNote)) {
    lines.push(
      s.outcome
        ? `${s.pendingDirectives} human directive(s) never reached a prompt: the run ended first`
        : `${s.pendingDirectives} human directive(s) waiting for the next prompt`,
    );
  }
  lines.push(temporalButtons(s));
  // Dollar amounts (spend, budgets, pause reasons) would read as math in the UI.
  return cardMarkdown(lines.join('\n\n'));
}

/** The followed pull request on the card: where it stands, the counts, its latest five events (comments' text is other people's: clipped). */
function pullRequestCard(s: StatusSnapshot): string[] {
  const life = prLife(s);
  if (!life) return [];
  const latest = life.entries.slice(-5).map((e) => `\n- ${e.at} ${clip(e.text.replace(/\s+/g, ' '), 200)}`);
  return [`**Pull request** ${clip(prTitle(life), 300)}: **${clip(life.stateText, 300)}** · ${prCountsLine(life)}${latest.join('')}`];
}

const TASK_SOURCES = { file: 'the person’s task list', checklist: 'the PRD checklist, one task per item', planner: 'the planner' } as const;

/** Where a run's tasks came from, how many, and why when the plan was refused or kept as one (the planner's text: terminal-safe). */
export function tasksLine(t: NonNullable<StatusSnapshot['tasks']>): string {
  const head = t.count ? `${t.count} from ${TASK_SOURCES[t.source]}` : 'none: the run is one stream';
  return t.note ? `${head} (${t.note})` : head;
}

/** One task of a run split into streams: its state, its child run and branch, what it cost, why it failed. */
export function streamLine(t: NonNullable<StatusSnapshot['streams']>[number]): string {
  const parts = [`${t.task} (${t.title})`, t.state.replace(/_/g, ' ')];
  if (t.dependsOn.length) parts.push(`after ${t.dependsOn.join(', ')}`);
  if (t.childId) parts.push(`run ${t.childId}`);
  if (t.branch) parts.push(`${t.branch}${t.merged ? ', merged' : ''}`);
  if (t.attempts > 1) parts.push(`attempt ${t.attempts}`);
  if (t.spendUsd > 0) parts.push(`$${t.spendUsd.toFixed(2)}`);
  if (t.outcome) parts.push(t.outcome);
  if (t.deadLetter) parts.push(`dead letter: ${t.deadLetter}`);
  if (t.waiting)
    parts.push(
      `WAITS FOR A PERSON since ${t.waiting.at}: ${t.waiting.reason.split('\n')[0]} (vigil resume ${t.childId ?? ''}, or resume this run)`,
    );
  return parts.join(' · ');
}

/** What a run waiting for its provider's breaker waits for, in one line (status, watch, the console). */
export function providerWaitText(w: { provider: string; until: string; reason: string; why?: string }): string {
  return `waiting for ${w.provider} until ${w.until} (circuit breaker ${w.reason.replace(/_/g, ' ')}${w.why ? `; this run's last call to it: ${w.why}` : ''})`;
}

export { deniedLines, sandboxLine };
