/**
 * Owns the unit tests of rules/ui.ts: the Temporal UI texts of a run — the static summary
 * (at most 200 bytes), the static details (PRD, repository, agent and test commands, caps) and the
 * "current details" markdown built from a StatusSnapshot.
 */
import { describe, expect, it } from 'vitest';
import { printStatus } from '../../cli/status.js';
import { defaultKnobs, type Knobs } from '../../schemas/knobs.js';
import { OUTCOME_EXIT_CODES, type Verdict } from '../../schemas/run.js';
import type { StatusSnapshot } from '../../schemas/status.js';
import { cardMarkdown, currentDetails, nextStep, spendText, staticDetails, staticSummary, voteLines } from '../../rules/ui.js';
import { onRepositoryTrouble } from '../../rules/repository.js';
import { iterationRecord as record, statusSnapshot as snapshot, T } from '../support/status-snapshot.js';

const bytes = (s: string): number => Buffer.byteLength(s, 'utf8');

const knobs = (over: Partial<Knobs> = {}): Knobs => ({
  ...defaultKnobs(),
  agentCommand: ['claude', '-p', '--model', 'sonnet'],
  testCommand: 'npm test -- --run',
  ...over,
});

describe('staticSummary', () => {
  it('names the PRD title and the repository directory', () => {
    expect(staticSummary({ prdTitle: 'Todo app', repoPath: '/home/dev/todo-app' })).toBe('Vigil · Todo app · todo-app');
  });

  it('ignores trailing slashes in the repository path', () => {
    expect(staticSummary({ prdTitle: 'T', repoPath: '/srv/repos/api/' })).toBe('Vigil · T · api');
  });

  it('falls back to "untitled PRD" without a title', () => {
    expect(staticSummary({ prdTitle: '', repoPath: '/r/x' })).toBe('Vigil · untitled PRD · x');
  });

  it('keeps the whole repository path when it has no segments', () => {
    expect(staticSummary({ prdTitle: 'T', repoPath: '/' })).toBe('Vigil · T · /');
  });

  it.each([200, 1000, 10_000])('stays within 200 bytes for a %i-character title and marks the cut', (n) => {
    const s = staticSummary({ prdTitle: 'A'.repeat(n), repoPath: `/home/dev/${'r'.repeat(300)}` });
    expect(bytes(s)).toBeLessThanOrEqual(200);
    expect(s.startsWith('Vigil · AAAA')).toBe(true);
    expect(s.endsWith('…')).toBe(true);
  });

  it('stays within 200 bytes for a very long repository directory name', () => {
    const s = staticSummary({ prdTitle: 'Short', repoPath: `/x/${'repo-'.repeat(100)}` });
    expect(bytes(s)).toBeLessThanOrEqual(200);
    expect(s.startsWith('Vigil · Short · repo-repo-')).toBe(true);
  });

  it('does not clip a summary that fits', () => {
    const title = 'B'.repeat(150);
    const s = staticSummary({ prdTitle: title, repoPath: '/r/repo' });
    expect(s).toBe(`Vigil · ${title} · repo`);
    expect(s).not.toContain('…');
  });
});

describe('staticDetails', () => {
  const input = {
    prdTitle: 'Todo app with tags',
    prdPath: '/home/dev/todo-app/docs/PRD.md',
    repoPath: '/home/dev/todo-app',
    knobs: knobs({ maxIterations: 40, maxRetries: 7, maxDurationSeconds: 7200 }),
  };
  const text = staticDetails(input);

  it('is markdown headed by the PRD title', () => {
    expect(text.split('\n')[0]).toBe('### Todo app with tags');
  });

  it('mentions the PRD path, the repository, the provider and its binary (not the arguments, which may hold tokens), and the test command', () => {
    expect(text).toContain('- **PRD:** `/home/dev/todo-app/docs/PRD.md`');
    expect(text).toContain('- **Repository:** `/home/dev/todo-app`');
    expect(text).toContain('- **Provider:** command `claude`');
    expect(text).not.toContain('--model sonnet');
    expect(text).toContain('- **Tests:** `npm test -- --run`');
  });

  it('lists the caps, with the wall clock when set', () => {
    expect(text).toContain('- **Caps:** 40 iterations, 7 consecutive failures, 7200s wall clock');
  });

  it('leaves the wall clock out when the duration cap is off', () => {
    const t = staticDetails({ ...input, knobs: knobs({ maxDurationSeconds: 0 }) });
    expect(t).toContain('- **Caps:** 25 iterations, 50 consecutive failures\n');
    expect(t).not.toContain('wall clock');
  });

  it('says when no test command is configured', () => {
    expect(staticDetails({ ...input, knobs: knobs({ testCommand: '' }) })).toContain('- **Tests:** none configured');
  });

  it('falls back to "Untitled PRD" and clips a very long title and agent command', () => {
    const t = staticDetails({ ...input, prdTitle: '' });
    expect(t.split('\n')[0]).toBe('### Untitled PRD');
    const long = staticDetails({
      ...input,
      prdTitle: 'T'.repeat(500),
      knobs: knobs({ agentCommand: [`agent${'x'.repeat(1000)}`, '--token', 's3cr3t'] }),
    });
    const heading = long.split('\n')[0] ?? '';
    expect(Buffer.byteLength(heading)).toBe('### '.length + 150); // limits are in UTF-8 bytes
    expect(heading.endsWith('…')).toBe(true);
    const provider = long.split('\n').find((l) => l.startsWith('- **Provider:**')) ?? '';
    expect(provider).toContain('`agentxxx');
    expect(provider).not.toContain('s3cr3t');
    expect(provider.length).toBeLessThan(350);
  });
});

describe('currentDetails', () => {
  const paras = (s: string): string[] => s.split('\n\n');

  /** The last paragraph of a running run's card: what Temporal's own buttons would do to it. */
  const RUNNING_BUTTONS =
    "**Temporal's buttons act on the workflow, not on the run:** **Cancel** stops it at once, as `vigil stop vigil-todo-app-1 " +
    '--now` (the agent call is killed; outcome stopped); ' +
    '**Terminate** ends it with no outcome, handoff or final record; ' +
    "**Reset** replays its history but leaves the repository's files as they are (`vigil rewind vigil-todo-app-1 --to N` restores both); " +
    "**Pause** on the agent call's activity does not pause the run (the agent goes on, or is killed and its iteration counted " +
    'as failed): use `vigil pause vigil-todo-app-1`';

  it('a running snapshot: headline, last iteration and streaks, one paragraph each', () => {
    expect(paras(currentDetails(snapshot()))).toEqual([
      '**RUNNING** · iteration 3/25 · VERIFY · tier development',
      'Last iteration 3: exit 0 in 12s · changed files · 4 file(s) differ from run start',
      'No-change streak 0 · failures in a row 0',
      RUNNING_BUTTONS,
    ]);
  });

  it('escapes every dollar amount of the card, which the Temporal UI would read as math; code spans stay as written', () => {
    const budget = {
      by: 'vigil',
      at: T,
      reason: 'budget exceeded: $1.20 of $1.00; raise it with `vigil budget vigil-todo-app-1 --usd 3` and resume',
    };
    const card = currentDetails(
      snapshot({
        status: 'paused',
        paused: true,
        pause: budget,
        budgetUsd: 1,
        spend: { usd: 1.2, inputTokens: 9, outputTokens: 9, calls: 4 },
      }),
    );
    expect(card).toContain(
      'Paused by vigil at 2025-03-01T10:00:00.000Z: budget exceeded: \\$1.20 of \\$1.00; raise it with `vigil budget vigil-todo-app-1 --usd 3`',
    );
    expect(card).toContain('Spend \\$1.20 of \\$1.00 budget (4 call(s))');
    // Outside code spans, no `$` is left that the UI could open math with.
    const outsideCode = card.replace(/(`+)[\s\S]*?\1/g, '');
    expect(outsideCode).not.toMatch(/(^|[^\\])(\\\\)*\$/);
    // Control: the same card unescaped is what the UI garbled (a `$` opens math in it).
    expect(card.replace(/\\\$/g, '$')).toMatch(/(^|[^\\])\$1\.20/);
  });

  it('a run split into parallel streams: where its tasks came from, and each stream, one line each (a waiting one says so)', () => {
    const stream = {
      task: 'api',
      title: 'The API',
      state: 'done' as const,
      dependsOn: [],
      attempts: 1,
      childId: 'r--api',
      branch: 'vigil/r--api',
      merged: true,
      spendUsd: 0,
      outcome: 'council_approved',
      deadLetter: null,
    };
    const waiting = {
      ...stream,
      task: 'cli',
      title: 'The CLI',
      state: 'in_progress' as const,
      dependsOn: ['api'],
      childId: 'r--cli',
      branch: 'vigil/r--cli',
      merged: false,
      outcome: null,
      waiting: { reason: 'escalation (dead letter): x', at: '2026-11-27T09:00:00Z' },
    };
    expect(paras(currentDetails(snapshot({ tasks: { source: 'planner', count: 2, note: null }, streams: [stream, waiting] })))).toContain(
      'Tasks: 2 from the planner\n- api (The API) · done · run r--api · vigil/r--api, merged · council_approved\n- cli (The ' +
        'CLI) · in progress · after api · run r--cli · vigil/r--cli · WAITS FOR A PERSON since 2026-11-27T09:00:00Z: escalation ' +
        '(dead letter): x (vigil resume r--cli, or resume this run)',
    );
    expect(currentDetails(snapshot())).not.toContain('Tasks:');
  });

  it('the run memory: its size and what it carries; nothing while it is empty', () => {
    const withMemory = paras(
      currentDetails(snapshot({ memory: { entries: 80, dropped: 120, chars: 30_000, continuity: true, learnings: true } })),
    );
    expect(withMemory).toContain(
      'Run memory: 80 entries (120 older dropped), in every prompt · the agent keeps .vigil/CONTINUITY.md · learnings.md read',
    );
    expect(
      paras(currentDetails(snapshot({ memory: { entries: 1, dropped: 0, chars: 100, continuity: false, learnings: false } }))),
    ).toContain('Run memory: 1 entry, in every prompt');
    expect(currentDetails(snapshot({ memory: { entries: 0, dropped: 0, chars: 0, continuity: false, learnings: false } }))).not.toContain(
      'Run memory',
    );
  });

  it('a starting snapshot without phase or last iteration', () => {
    const text = currentDetails(
      snapshot({ status: 'starting', iteration: 0, phase: null, tier: null, lastIteration: null, recentIterations: [] }),
    );
    expect(paras(text)).toEqual(['**STARTING** · iteration 0/25', 'No-change streak 0 · failures in a row 0', RUNNING_BUTTONS]);
  });

  it('calls a sandbox limit ended get a line on the card, with the latest; none, no line', () => {
    const last = {
      mode: 'auto' as const,
      applied: true,
      isolation: 'bubblewrap',
      reason: null,
      limits: 'cgroup v2: 1024 tasks, 2048 MiB, cpu weight 50',
      limitHit: null,
    };
    const sandbox = { mode: 'auto' as const, last, denied: [], deniedTotal: 0, unsandboxedCalls: 0 };
    const memory = 'the agent used 2.0 GiB: memory limit (sandboxMemoryMb=2048)';
    const hits = [
      { iteration: 1, role: 'builder', reason: 'the agent started 1024 processes: pid limit (sandboxPids=1024, threads count)' },
      { iteration: 2, role: 'builder', reason: memory },
    ];
    expect(paras(currentDetails(snapshot({ sandbox: { ...sandbox, limitHits: hits, limitHitsTotal: 7 } })))).toContain(
      `**A sandbox limit ended 7 calls**: the latest, iteration 2 (builder): ${memory}`,
    );
    expect(currentDetails(snapshot({ sandbox }))).not.toContain('sandbox limit');
  });

  it('a paused snapshot says who paused, when and why', () => {
    const text = currentDetails(
      snapshot({
        status: 'paused',
        paused: true,
        pause: { reason: 'reviewing the schema change', by: 'alice', at: T },
        pendingDirectives: 2,
      }),
    );
    const p = paras(text);
    expect(p[0]).toBe('**PAUSED** · iteration 3/25 · VERIFY · tier development');
    expect(p[1]).toBe(`Paused by alice at ${T}: reviewing the schema change`);
    expect(text).toContain('2 human directive(s) waiting for the next prompt');
    expect(text).not.toContain('Backing off');
    expect(text).not.toContain('Outcome');
  });

  it("an escalation shows the agent's open questions and the handoff; quality gates and the checklist get a line each", () => {
    const escalation = {
      iteration: 3,
      reason: 'agent_request' as const,
      detail: 'the agent asked for a human review: schema choice',
      proxies: null,
      handoffPath: '/r/.vigil/handoffs/iteration-0003-agent_request.json',
      handoffMarkdownPath: '/r/.vigil/handoffs/iteration-0003-agent_request.md',
      mode: 'supervised' as const,
      paused: true,
      notified: { delivered: 1, failed: 0 },
      at: T,
      questions: ['Postgres or SQLite for the first release?', 'May I drop the legacy /v1 endpoints?'],
    };
    const gate = (g: string, verdict: string, reason: string) => ({
      gate: g,
      verdict,
      reason,
      findings: [],
      findingCount: 0,
      missingTools: [],
      durationMs: 1,
      reportPath: null,
      treeHash: 't',
      iteration: 3,
    });
    const text = currentDetails(
      snapshot({
        status: 'paused',
        paused: true,
        pause: { reason: 'escalation (agent request): schema choice', by: 'vigil', at: T },
        escalations: [escalation],
        latestHandoff: {
          iteration: 3,
          path: escalation.handoffMarkdownPath,
          summary: 'Handoff at iteration 3 (agent_request): schema choice.',
        },
        quality: {
          gates: [gate('static_analysis', 'pass', 'clean'), gate('tests', 'fail', 'node-test: 2 failed, 5 passed (exit 1)')],
          failing: { tests: 2 },
          lastReview: null,
          reviewRounds: 0,
          checklist: [
            { id: 'REQ-1', title: 'Sum', priority: 'critical', status: 'failing', waived: false, heldOut: false },
            {
              id: 'held-out-1',
              title: '(held out: verified at completion)',
              priority: 'low',
              status: 'unverified',
              waived: false,
              heldOut: true,
            },
          ],
          checklistProblem: null,
        },
      } as Partial<StatusSnapshot>),
    );
    expect(text).toContain(
      'Open questions from the agent:\n1. Postgres or SQLite for the first release?\n2. May I drop the legacy /v1 endpoints?',
    );
    expect(text).toContain('Latest handoff: Handoff at iteration 3 (agent_request): schema choice.');
    expect(text).toContain('Quality gates: ✓ static analysis · ✗ tests (2× in a row)');
    expect(text).toContain('- tests: node-test: 2 failed, 5 passed (exit 1)');
    expect(text).toContain('PRD checklist: 2 item(s) · 0 passing · 1 failing · 1 unverified');
    expect(text).toContain('- REQ-1 (critical) failing: Sum');
  });

  it('a pause that waits for a person shows its reminder, re-route and deadline; an answered one none', () => {
    const deadlines = {
      remindAt: 'R',
      rerouteAt: 'Q',
      deadlineAt: 'D',
      onDeadline: 'stop' as const,
      reminded: 'S',
      rerouted: null,
      answered: null,
    };
    const waiting = currentDetails(snapshot({ status: 'paused', paused: true, pause: { reason: 'x', by: 'vigil', at: T, deadlines } }));
    expect(waiting).toContain('Waits for a person: reminder sent S; re-route at Q; deadline at D (then: stop)');
    const answered = currentDetails(
      snapshot({
        status: 'paused',
        paused: true,
        pause: { reason: 'x', by: 'vigil', at: T, deadlines: { ...deadlines, answered: { by: 'ana', at: T } } },
      }),
    );
    expect(answered).not.toContain('Waits for a person');
  });

  it('a pause without a reason has no trailing colon', () => {
    const text = currentDetails(snapshot({ status: 'paused', paused: true, pause: { reason: '', by: 'ops', at: T } }));
    expect(paras(text)[1]).toBe(`Paused by ops at ${T}`);
  });

  it('clips a very long pause reason', () => {
    const text = currentDetails(snapshot({ status: 'paused', paused: true, pause: { reason: 'r'.repeat(2000), by: 'ops', at: T } }));
    const line = paras(text)[1] ?? '';
    expect(line.startsWith(`Paused by ops at ${T}: rrr`)).toBe(true);
    expect(line.endsWith('…')).toBe(true);
    expect(Buffer.byteLength(line)).toBe(Buffer.byteLength(`Paused by ops at ${T}: `) + 500);
    // ... followed by what to do next, with the exact commands.
    expect(paras(text)[2]).toBe(
      `**Next step:** resume when ready — \`vigil resume vigil-todo-app-1\` (or \`temporal workflow signal -w vigil-todo-app-1 ` +
        `--name resume\`); to end it, \`vigil stop vigil-todo-app-1\``,
    );
  });

  it('a backing-off snapshot says until when and after how many failures, with the failed iteration', () => {
    const until = '2025-03-01T10:02:00.000Z';
    const text = currentDetails(
      snapshot({
        status: 'backing_off',
        iteration: 7,
        phase: 'VERIFY',
        consecutiveFailures: 2,
        consecutiveNoChange: 3,
        backoffUntil: until,
        lastIteration: record({ iteration: 7, exitCode: 1, durationMs: 90_600, attempts: 2, changed: false, filesChangedSinceStart: 0 }),
      }),
    );
    expect(paras(text)).toEqual([
      '**BACKING_OFF** · iteration 7/25 · VERIFY · tier development',
      `Backing off until ${until} after 2 consecutive failure(s)`,
      'Last iteration 7 **FAILED**: exit 1 in 91s (attempt 2) · no change · 0 file(s) differ from run start',
      'No-change streak 3 · failures in a row 2',
      RUNNING_BUTTONS,
    ]);
  });

  it('a finished snapshot shows the outcome with its exit code and the last completion claim', () => {
    const text = currentDetails(
      snapshot({
        status: 'finished',
        iteration: 25,
        phase: 'ACT',
        lastIteration: record({ iteration: 25, phase: 'ACT', claimed: true }),
        lastCompletion: {
          iteration: 24,
          accepted: false,
          reason: 'tests_red',
          testsConfigured: true,
          testsPassed: false,
          filesChangedSinceStart: 4,
          testLogPath: '/logs/tests-24.log',
        },
        outcome: {
          status: 'max_iterations_reached',
          reason: 'iteration cap reached: 25 of 25',
          exitCode: OUTCOME_EXIT_CODES.max_iterations_reached,
        },
      }),
    );
    const p = paras(text);
    // The outcome first: the UI shows every finished run as Completed, whatever it came to.
    expect(p[0]).toBe('**MAX_ITERATIONS_REACHED** (exit 20) — iteration cap reached: 25 of 25');
    expect(p[1]).toBe('Finished at iteration 25/25 · ACT · tier development');
    expect(p).toContain('Last completion claim (iteration 24): tests_red');
    expect(p.filter((x) => x.includes('iteration cap reached'))).toHaveLength(1);
    // Last, beside Temporal's buttons: what its Reset would do to this run.
    expect(p.at(-1)).toBe(
      "**Temporal's Reset** replays this run's history from the chosen event but leaves the repository's files as they are " +
        'now; to go back, `vigil rewind vigil-todo-app-1 --to N --fork` starts a new run from checkpoint N with its tree restored',
    );
  });

  it('a finished snapshot with an accepted claim reports exit 0', () => {
    const text = currentDetails(
      snapshot({
        status: 'finished',
        outcome: {
          status: 'completion_promise_fulfilled',
          reason: 'claim accepted',
          exitCode: OUTCOME_EXIT_CODES.completion_promise_fulfilled,
        },
      }),
    );
    expect(paras(text)[0]).toBe('**COMPLETION_PROMISE_FULFILLED** (exit 0) — claim accepted');
  });

  it('a done snapshot carries the evidence line it rested on, under the outcome, as its notes hold it', () => {
    const line =
      'evidence: baseline tests 2 of 2 passed (`python3 -m pytest -q`), integrity findings 0, gaming findings 0, tree abcdef012345';
    const text = currentDetails(
      snapshot({
        status: 'finished',
        outcome: { status: 'council_approved', reason: 'council approved', exitCode: OUTCOME_EXIT_CODES.council_approved, notes: [line] },
      }),
    );
    expect(paras(text).slice(0, 2)).toEqual(['**COUNCIL_APPROVED** (exit 0) — council approved', `Note: ${line}`]);
  });

  it('a finished snapshot says a directive that came too late never reached a prompt', () => {
    const text = currentDetails(
      snapshot({
        status: 'finished',
        pendingDirectives: 1,
        outcome: {
          status: 'completion_promise_fulfilled',
          reason: 'claim accepted',
          exitCode: OUTCOME_EXIT_CODES.completion_promise_fulfilled,
        },
      }),
    );
    expect(paras(text)).toContain('1 human directive(s) never reached a prompt: the run ended first');
    expect(text).not.toContain('waiting for the next prompt');

    // A run with the outcome's note shows the note, under the outcome, and no second line.
    const note = '1 human directive(s) never reached a prompt, the run ended first (alice at T: "x")';
    const noted = paras(
      currentDetails(
        snapshot({
          status: 'finished',
          pendingDirectives: 1,
          outcome: { status: 'stopped', reason: 'stopped by bob', exitCode: 0, notes: [note] },
        }),
      ),
    );
    expect(noted.slice(0, 3)).toEqual([
      '**STOPPED** (exit 0) — stopped by bob',
      `Note: ${note}`,
      'Finished at iteration 3/25 · VERIFY · tier development',
    ]);
    expect(noted.filter((p) => p.includes('never reached a prompt'))).toHaveLength(1);

    // `vigil status` says the same of a finished run, and "waiting" of a running one.
    const outcome = {
      status: 'completion_promise_fulfilled' as const,
      reason: 'claim accepted',
      exitCode: OUTCOME_EXIT_CODES.completion_promise_fulfilled,
    };
    const said = (view: Parameters<typeof printStatus>[0]): string[] => {
      const lines: string[] = [];
      printStatus(view, (l = '') => lines.push(l));
      return lines.filter((l) => l.startsWith('  directives'));
    };
    const snap = snapshot({ status: 'finished', pendingDirectives: 1, outcome });
    const finished = { ...outcome, iteration: 3, at: T, notes: [] };
    expect(
      said({ kind: 'finished', workflowId: 'r', temporalStatus: 'COMPLETED', outcome: finished, snapshot: snap, iteration: 3 }),
    ).toEqual(['  directives: 1 never reached a prompt: the run ended first']);
    // With the outcome's note (runs since it exists), the note says it: no directives line.
    const lines: string[] = [];
    printStatus(
      {
        kind: 'finished',
        workflowId: 'r',
        temporalStatus: 'COMPLETED',
        outcome: { ...finished, notes: [note] },
        snapshot: snap,
        iteration: 3,
      },
      (l = '') => lines.push(l),
    );
    expect(lines.filter((l) => l.includes('never reached a prompt'))).toEqual([`  note      : ${note}`]);
    const running = snapshot({ pendingDirectives: 2 });
    expect(
      said({
        kind: 'running',
        workflowId: 'r',
        snapshot: running,
        workerAnswered: true,
        iteration: 3,
        searchStatus: 'running',
        taskFailing: null,
      }),
    ).toEqual(['  directives: 2 waiting for the next prompt']);
  });

  it('status tells the truth: pausing during a call, directives in the running prompt, a held check that was no claim, the next tier, the checks', () => {
    const lines = (snap: StatusSnapshot): string[] => {
      const out: string[] = [];
      printStatus(
        {
          kind: 'running',
          workflowId: 'r',
          snapshot: snap,
          workerAnswered: true,
          iteration: snap.iteration,
          searchStatus: 'paused',
          taskFailing: null,
        },
        (l = '') => out.push(l),
      );
      return out;
    };
    const pausing = snapshot({
      status: 'pausing',
      paused: true,
      pause: { by: 'alice', at: T, reason: 'lunch' },
      agentRunning: true,
      pendingDirectives: 0,
      directivesInCall: 1,
    });
    const said = lines(pausing);
    expect(said).toContain('  status    : pausing: the current call finishes first (iteration 3; paused by alice: lunch)');
    expect(said).toContain('  directives: 1 in the prompt of the running call (iteration 3)');
    expect(said.some((l) => l.includes('waiting for the next prompt'))).toBe(false);

    const held = snapshot({
      council: {
        enabled: true,
        rounds: 1,
        verdicts: [],
        forceReviewPending: false,
        heldClaimIteration: 5,
        heldClaimTrigger: 'tests_green',
      },
    });
    expect(lines(held)).toContain('  held check: the early completion check (tests green) of iteration 5 is judged at the next boundary');

    const ladder = {
      level: 'LOW' as const,
      failuresAtLevel: 0,
      successStreak: 0,
      pinnedHigh: false,
      humanEscalated: false,
      changes: [{ iteration: 3, from: 'MEDIUM' as const, to: 'LOW' as const, trigger: '5 consecutive single-file successes at MEDIUM' }],
    };
    expect(lines(snapshot({ ladder }))).toContain(
      '  iteration : 3 of at most 25 (VERIFY, tier development; the next iteration runs at tier fast (ladder LOW))',
    );
    expect(lines(snapshot({ ladder: { ...ladder, level: 'MEDIUM' } }))).toContain(
      '  iteration : 3 of at most 25 (VERIFY, tier development)',
    );

    const checks = {
      total: 4,
      refused: 4,
      byCause: { evidence: 4 },
      last: {
        iteration: 6,
        trigger: 'circuit_breaker' as const,
        approved: false,
        cause: 'evidence' as const,
        reason: 'no file changed since the run started',
      },
    };
    expect(lines(snapshot({ checks }))).toContain(
      "  checks    : 4 completion check(s), 4 refused; last: the circuit breaker's completion check at iteration 6: refused by " +
        'the evidence gate: no file changed since the run started',
    );
  });

  it("status says why the run waits: a rate limit, or the provider's circuit breaker", () => {
    const lines = (snap: StatusSnapshot): string[] => {
      const out: string[] = [];
      printStatus(
        {
          kind: 'running',
          workflowId: 'r',
          snapshot: snap,
          workerAnswered: true,
          iteration: snap.iteration,
          searchStatus: 'running',
          taskFailing: null,
        },
        (l = '') => out.push(l),
      );
      return out.filter((l) => l.startsWith('  status'));
    };
    const until = '2026-11-26T20:30:00.000Z';
    expect(
      lines(
        snapshot({ status: 'backing_off', backoffUntil: until, consecutiveFailures: 0, lastIteration: record({ provider: 'claude' }) }),
      ),
    ).toEqual([`  status    : rate limited by claude until ${until}`]);
    expect(lines(snapshot({ status: 'backing_off', backoffUntil: until, consecutiveFailures: 2 }))).toEqual([
      `  status    : backing off until ${until} after 2 failure(s) in a row`,
    ]);
    expect(
      lines(snapshot({ status: 'waiting_for_provider', providerWait: { provider: 'codex', until, reason: 'probe_in_flight' } })),
    ).toEqual([`  status    : waiting for codex until ${until} (circuit breaker probe in flight)`]);
    // Why this run's own last call failed, when it did (a hung stream here).
    const why = 'no answer from the model before the call timed out (a hung stream or a stalled API)';
    expect(lines(snapshot({ status: 'waiting_for_provider', providerWait: { provider: 'claude', until, reason: 'open', why } }))).toEqual([
      `  status    : waiting for claude until ${until} (circuit breaker open; this run's last call to it: ${why})`,
    ]);
  });

  it("status shows the latest council round with each member's vote and reason, terminal-safe", () => {
    const vote = (
      member: number,
      role: string,
      recorded: 'APPROVE' | 'REJECT',
      reason: string,
      over: Partial<Verdict['votes'][number]> = {},
    ): Verdict['votes'][number] => ({
      member,
      role,
      recorded,
      approves: recorded === 'APPROVE',
      overridden: false,
      reason,
      issues: recorded === 'APPROVE' ? 0 : 1,
      logPath: `/l/${member}.log`,
      ...over,
    });
    const round = (n: number, votes: Verdict['votes']): Verdict => ({
      round: n,
      iteration: 4 + n,
      trigger: 'claim',
      result: 'REJECTED',
      approve: votes.filter((v) => v.approves).length,
      reject: votes.filter((v) => !v.approves).length,
      threshold: 2,
      size: votes.length,
      votes,
      devilsAdvocate: null,
      evidence: { iteration: 4 + n, pass: true, reason: null, failures: [], inconclusive: [], filesChanged: 2, testsPassed: true },
      transcriptPath: '/t',
      at: T,
    });
    const latest = round(2, [
      vote(0, 'requirements', 'APPROVE', 'every requirement met'),
      vote(1, 'security', 'REJECT', 'token logged\u001b[2J in plain text\nsee src/log.ts'),
      vote(2, 'tests', 'REJECT', 'one flaky test', { approves: true, overridden: true }),
    ]);
    const snap = snapshot({
      council: {
        enabled: true,
        rounds: 2,
        verdicts: [round(1, [vote(0, 'requirements', 'REJECT', 'older round')]), latest],
        forceReviewPending: false,
      },
    });
    const out: string[] = [];
    printStatus(
      {
        kind: 'running',
        workflowId: 'r',
        snapshot: snap,
        workerAnswered: true,
        iteration: snap.iteration,
        searchStatus: 'running',
        taskFailing: null,
      },
      (l = '') => out.push(l),
    );
    const at = out.findIndex((l) => l.startsWith('  council   :'));
    expect(out[at]).toBe('  council   : council round 2 (iteration 6, claim): REJECTED · 2 of 3 approve, 2 needed');
    expect(out.slice(at + 1, at + 4)).toEqual([
      '              member 1 (requirements): APPROVE — every requirement met',
      '              member 2 (security): REJECT — token logged␛[2J in plain text see src/log.ts',
      '              member 3 (tests): REJECT (counted as approval: its issues are below the severity threshold) — one flaky test',
    ]);
    expect(out.join('\n')).not.toContain('older round');
    expect(
      voteLines({ ...latest, devilsAdvocate: { triggered: true, flipped: true, recorded: 'REJECT', reason: 'the docs example fails' } }).at(
        -1,
      ),
    ).toBe("devil's advocate: REJECT (overturned the approval) — the docs example fails");
  });

  it('clips a very long outcome reason', () => {
    const text = currentDetails(snapshot({ status: 'finished', outcome: { status: 'failed', reason: 'e'.repeat(5000), exitCode: 1 } }));
    const line = paras(text)[0] ?? '';
    expect(line.startsWith('**FAILED** (exit 1) — eee')).toBe(true);
    expect(line.endsWith('…')).toBe(true);
    expect(Buffer.byteLength(line)).toBe(Buffer.byteLength('**FAILED** (exit 1) — ') + 300);
  });

  it('stays short for a snapshot with everything set', () => {
    const text = currentDetails(
      snapshot({
        status: 'paused',
        paused: true,
        pause: { reason: 'p'.repeat(2000), by: 'x'.repeat(200), at: T },
        backoffUntil: T,
        consecutiveFailures: 49,
        pendingDirectives: 50,
        outcome: { status: 'stopped', reason: 's'.repeat(5000), exitCode: 0 },
      }),
    );
    expect(bytes(text)).toBeLessThan(2048);
  });
});

describe('byte limits with non-ASCII text', () => {
  it('keeps staticSummary within 200 UTF-8 bytes and never splits a character', () => {
    for (const title of ['é'.repeat(200), '漢'.repeat(200), '😀'.repeat(100)]) {
      const summary = staticSummary({ prdTitle: title, repoPath: '/r/repo' });
      expect(Buffer.byteLength(summary)).toBeLessThanOrEqual(200);
      expect(summary).not.toMatch(/[\uD800-\uDBFF](?![\uDC00-\uDFFF])/);
      expect(summary.endsWith('…')).toBe(true);
    }
  });
});

describe('cardMarkdown', () => {
  it('escapes each $ outside code spans, and nothing inside them', () => {
    expect(cardMarkdown('spent $1.20 of $1.00')).toBe('spent \\$1.20 of \\$1.00');
    expect(cardMarkdown('$$x$$')).toBe('\\$\\$x\\$\\$');
    expect(cardMarkdown('run `echo $HOME` for $3')).toBe('run `echo $HOME` for \\$3');
    expect(cardMarkdown('``a ` $b`` and $c')).toBe('``a ` $b`` and \\$c');
  });

  it('keeps a backslash already before a $ visible, and the $ escaped (an adversarial reason cannot reopen math)', () => {
    // `\$1 of $2` unescaped once would become `\\$1` (a backslash, then an open `$`).
    expect(cardMarkdown('\\$1 of $2')).toBe('\\\\\\$1 of \\$2');
  });

  it('treats an unclosed backtick as text: what follows it is still escaped', () => {
    expect(cardMarkdown('a ` b $1')).toBe('a ` b \\$1');
  });

  it('leaves text without a $ as it was (control)', () => {
    const plain = '**RUNNING** · iteration 3/25 · `vigil stop r1`';
    expect(cardMarkdown(plain)).toBe(plain);
  });

  it('escapes the static summary and details too', () => {
    expect(staticSummary({ prdTitle: 'Cut costs below $5 a day', repoPath: '/r/app' })).toBe('Vigil · Cut costs below \\$5 a day · app');
    // Escapes count against the summary's bytes: a title of dollars still fits.
    expect(Buffer.byteLength(staticSummary({ prdTitle: '$'.repeat(300), repoPath: '/r/app' }))).toBeLessThanOrEqual(200);
  });
});

describe('nextStep', () => {
  const supervised = { autonomyMode: 'supervised' as const };
  const base = { workflowId: 'r1', budgetUsd: 10, spend: { usd: 10.5, inputTokens: 0, outputTokens: 0, calls: 3 } };
  const at = '2025-03-01T10:00:00.000Z';
  it('gives the exact commands for every paused state', () => {
    expect(nextStep({ ...base, pause: { by: 'vigil', at, reason: 'budget exceeded: $10.50 of $10.00; raise it' } })).toBe(
      '**Next step:** raise the budget and resume — `vigil budget r1 --usd 21` then `vigil resume r1` (or `temporal workflow ' +
        'signal -w r1 --name budget --input \'{"usd":21}\'` and `--name resume`); or `vigil stop r1`',
    );
    expect(nextStep({ ...base, pause: { by: 'vigil', at, reason: 'authentication failed for provider claude: 401' } })).toMatch(
      /^\*\*Next step:\*\* fix the credentials where the worker runs \(`vigil doctor`\), then resume — `vigil resume r1`/,
    );
    expect(nextStep({ ...base, pause: { by: 'vigil', at, reason: 'disk full under the repository: ENOSPC' } })).toMatch(
      /restore the repository or free space, then resume/,
    );
    // A stream's lost worktree: the advice is the resume that makes it again, not a restore only Vigil could do.
    const lost = onRepositoryTrouble({ kind: 'lost', problem: 'not a git repository: /r/.vigil/worktrees/r1/l' }, 'r1--l', supervised, {
      parentId: 'r1',
      task: 'l',
      checkpoint: 3,
    });
    expect(lost.reason).toBe(
      "repository unavailable: not a git repository: /r/.vigil/worktrees/r1/l. This is Vigil's own worktree of this stream: " +
        '`vigil resume r1--l` (or `vigil resume r1`) makes it again from its last checkpoint (iteration 3) and the stream goes ' +
        'on; or `vigil stop r1--l` ends this attempt, and task l is tried once more from a fresh worktree if it has an attempt ' +
        'left',
    );
    expect(nextStep({ ...base, workflowId: 'r1--l', pause: { by: 'vigil', at, reason: lost.reason } })).toMatch(
      new RegExp(
        [
          /^\*\*Next step:\*\* resume: Vigil makes the stream's worktree again from its last checkpoint \(or stop/.source,
          / it: its task is tried once more\) — `vigil resume r1--l`/.source,
        ].join(''),
      ),
    );
    expect(
      onRepositoryTrouble({ kind: 'lost', problem: 'p' }, 'r1--l', supervised, { parentId: 'r1', task: 'l', checkpoint: null }).reason,
    ).toContain('makes it again from its start commit');
    // Control: any other run's lost repository is still the person's to restore; perpetual mode ends either.
    expect(onRepositoryTrouble({ kind: 'lost', problem: 'p' }, 'r1', supervised).reason).toBe(
      'repository unavailable: p. Restore the repository, then `vigil resume r1` (or `vigil stop r1`)',
    );
    expect(
      onRepositoryTrouble(
        { kind: 'lost', problem: 'p' },
        'r1--l',
        { autonomyMode: 'perpetual' },
        { parentId: 'r1', task: 'l', checkpoint: 1 },
      ),
    ).toEqual({
      kind: 'end',
      reason: 'repository unavailable: p',
    });
    expect(
      nextStep({ ...base, pause: { by: 'vigil', at, reason: 'repository unavailable: p. Restore the repository, then resume' } }),
    ).toMatch(/restore the repository or free space, then resume/);
    expect(nextStep({ ...base, pause: { by: 'vigil', at, reason: 'escalation (uncertainty): the run looks stuck' } })).toMatch(
      /read the handoff, optionally redirect \(`vigil input r1 "…"`\) or ask the council \(`vigil review r1`\), then resume/,
    );
    expect(
      nextStep({
        ...base,
        pause: { by: 'vigil', at, reason: 'contract error, 2 checks in a row: the code reviewer x answered without …' },
      }),
    ).toMatch(/fix the agent command's answer format \(check it with `vigil doctor --agent-command CMD`/);
    expect(nextStep({ ...base, pause: { by: 'ops', at, reason: 'lunch' } })).toMatch(
      /resume when ready — `vigil resume r1` \(or `temporal workflow signal -w r1 --name resume`\)/,
    );
  });
});

describe('spendText', () => {
  it('says what was spent and for how many calls the cost is unknown', () => {
    expect(spendText({ budgetUsd: 5, spend: { usd: 1.2, inputTokens: 0, outputTokens: 0, calls: 4, unpricedCalls: 1 } })).toBe(
      '$1.20 of $5.00 budget (4 call(s); 1 unpriced: the agent reported no cost)',
    );
    expect(spendText({ budgetUsd: 0, spend: { usd: 0.5, inputTokens: 0, outputTokens: 0, calls: 2 } })).toBe('$0.50 (2 call(s))');
    // What orchestration cost, beside the builder's calls.
    expect(
      spendText({ budgetUsd: 0, spend: { usd: 0.8, inputTokens: 0, outputTokens: 0, calls: 5, orchestration: { calls: 4, usd: 0.2 } } }),
    ).toBe('$0.80 (5 call(s); orchestration 4 call(s), $0.20 (25%))');
  });

  it('never shows calls no one priced as $0.00: a command agent that reports no cost is unpriced, and its budget is said to be powerless', () => {
    const command = { usd: 0, inputTokens: 0, outputTokens: 0, calls: 6, unpricedCalls: 6 };
    expect(spendText({ budgetUsd: 0, spend: command })).toBe('unpriced: 6 call(s), none reported its cost');
    expect(spendText({ budgetUsd: 1, spend: { ...command, orchestration: { calls: 4, usd: 0 } } })).toBe(
      'unpriced: 6 call(s), none reported its cost (orchestration 4); the $1.00 budget cannot stop the run: no call reported its cost',
    );
    for (const text of [spendText({ budgetUsd: 1, spend: command }), spendText({ budgetUsd: 0, spend: command })])
      expect(text).not.toMatch(/\$0\.00/);
    // Control: priced calls still read as dollars, and a free priced call is $0.00 (it was priced).
    expect(spendText({ budgetUsd: 0, spend: { usd: 0, inputTokens: 5, outputTokens: 5, calls: 1 } })).toBe('$0.00 (1 call(s))');
  });
});
