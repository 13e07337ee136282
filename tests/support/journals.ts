/**
 * Hand-built run journals with known numbers, as the workflow would record them (EventEnvelopes
 * with seq counting across continue-as-new, events valid against RunEventSchema).
 */
import { EventEnvelopeSchema, type EventEnvelope, type RunEvent } from '../../schemas/events.js';

const MIN = 60_000;

class Journal {
  readonly events: EventEnvelope[] = [];
  private seq = 1;
  constructor(
    private runId: string,
    private readonly t0: number,
  ) {}
  continueAsNew(runId: string): this {
    this.runId = runId;
    return this;
  }
  add(minutes: number, event: RunEvent): this {
    this.events.push(
      EventEnvelopeSchema.parse({ seq: this.seq++, runId: this.runId, at: new Date(this.t0 + minutes * MIN).toISOString(), event }),
    );
    return this;
  }
}

const iteration = (n: number, over: Partial<Extract<RunEvent, { kind: 'iteration' }>>): RunEvent => ({
  kind: 'iteration',
  iteration: n,
  phase: 'ACT',
  tier: 'fast',
  exitCode: 0,
  durationMs: 60_000,
  changed: true,
  filesChangedSinceStart: n,
  claimed: false,
  tests: 'pass',
  provider: 'claude',
  model: 'claude-sonnet',
  costUsd: 0.1,
  attempts: 1,
  ...over,
});

const votes = (approving: number, of: number) =>
  Array.from({ length: of }, (_, i) => ({
    member: i,
    recorded: i < approving ? 'APPROVE' : 'REJECT',
    approves: i < approving,
    reason: i < approving ? 'PRD met' : 'README lacks docs',
  }));

export const SCRIPTED_START = Date.parse('2026-01-05T10:00:00.000Z');

/**
 * The scripted run `run-scripted` on /repos/slugify: 5 iterations (the 3rd fails with exit 1), a
 * tier climb fast -> development after it, council round 1 rejected (1 of 3) and round 2 approved
 * (3 of 3), one escalation that paused the run for 30 minutes until alice resumed it, a pause by
 * bob for 10 minutes, spend 0.42 USD (orchestration 7 calls, 0.14 USD), outcome council_approved (exit 0). A continue-as-new after
 * iteration 3 changes the run id.
 */
export function scriptedRun(): EventEnvelope[] {
  return new Journal('r-scripted-1', SCRIPTED_START)
    .add(0, {
      kind: 'run_started',
      prdPath: '/repos/slugify/PRD.md',
      prdTitle: 'Slugify helper',
      repoPath: '/repos/slugify',
      provider: 'claude',
      maxIterations: 10,
      budgetUsd: 2,
      autonomyMode: 'supervised',
    })
    .add(1, iteration(1, { tests: null, costUsd: 0.05 }))
    .add(1, { kind: 'gate', iteration: 1, gate: 'tests', verdict: 'inconclusive', reason: 'no test runner yet', findings: 0 })
    .add(1, { kind: 'spend', iteration: 1, usd: 0.05, calls: 1, unpricedCalls: 0, budgetUsd: 2 })
    .add(2, iteration(2, { claimed: true, costUsd: 0.07 }))
    .add(2, { kind: 'gate', iteration: 2, gate: 'tests', verdict: 'pass', reason: 'node-test: 3 passed', findings: 0 })
    .add(2, { kind: 'spend', iteration: 2, usd: 0.12, calls: 2, unpricedCalls: 0, budgetUsd: 2 })
    .add(3, iteration(3, { exitCode: 1, tests: null, changed: false, costUsd: 0.03 }))
    .add(3, { kind: 'tier_change', iteration: 3, from: 'fast', to: 'development', trigger: '3 failures at LOW' })
    .add(3, { kind: 'spend', iteration: 3, usd: 0.15, calls: 3, unpricedCalls: 0, budgetUsd: 2 })
    .continueAsNew('r-scripted-2')
    .add(5, { kind: 'message', name: 'pause', by: 'bob', summary: 'lunch', accepted: true })
    .add(15, { kind: 'message', name: 'resume', by: 'bob', summary: 'back', accepted: true })
    .add(16, iteration(4, { tier: 'development', phase: 'REASON', costUsd: 0.12 }))
    .add(16, { kind: 'gate', iteration: 4, gate: 'secret_scan', verdict: 'pass', reason: 'nothing found', findings: 0 })
    .add(16, {
      kind: 'review',
      round: 1,
      iteration: 4,
      result: 'PASS',
      mergeability: 95,
      reviewers: [
        { reviewer: 'requirements-verifier', verdict: 'PASS', blocking: false },
        { reviewer: 'maintainer-mergeability', verdict: 'PASS', blocking: false },
      ],
    })
    .add(17, {
      kind: 'council_round',
      round: 1,
      iteration: 4,
      trigger: 'tests green',
      result: 'REJECTED',
      approve: 1,
      reject: 2,
      threshold: 2,
      votes: votes(1, 3),
    })
    .add(17, { kind: 'escalation', iteration: 4, reason: 'uncertainty', detail: 'the agent asks whether slugs keep unicode', paused: true })
    .add(17, { kind: 'notification', event: 'escalation', delivered: 1, failed: 0 })
    .add(17, { kind: 'spend', iteration: 4, usd: 0.27, calls: 4, unpricedCalls: 0, budgetUsd: 2 })
    .add(47, { kind: 'message', name: 'resume', by: 'alice', summary: 'keep unicode', accepted: true })
    .add(48, iteration(5, { tier: 'development', claimed: true, costUsd: 0.15 }))
    .add(48, {
      kind: 'review',
      round: 2,
      iteration: 5,
      result: 'PASS',
      mergeability: 98,
      reviewers: [{ reviewer: 'requirements-verifier', verdict: 'PASS', blocking: false }],
    })
    .add(49, {
      kind: 'council_round',
      round: 2,
      iteration: 5,
      trigger: 'claim',
      result: 'APPROVED',
      approve: 3,
      reject: 0,
      threshold: 2,
      votes: votes(3, 3),
    })
    .add(49, {
      kind: 'spend',
      iteration: 5,
      usd: 0.42,
      calls: 12,
      unpricedCalls: 0,
      budgetUsd: 2,
      orchestrationCalls: 7,
      orchestrationUsd: 0.14,
    })
    .add(49, {
      kind: 'outcome',
      status: 'council_approved',
      exitCode: 0,
      reason: 'council approved at iteration 5 (round 2, 3 of 3)',
      iteration: 5,
    })
    .add(49, { kind: 'notification', event: 'run_finished', delivered: 1, failed: 0 }).events;
}

export const FAILED_START = Date.parse('2026-01-06T09:00:00.000Z');

/**
 * `run-failed` on /repos/other: 3 iterations (none failed), a climb fast -> development and a step
 * down development -> fast, two escalations (stuck, tier_ladder; neither paused), spend 0.30 USD,
 * outcome max_iterations_reached (exit 20).
 */
export function failedRun(): EventEnvelope[] {
  return new Journal('r-failed-1', FAILED_START)
    .add(0, {
      kind: 'run_started',
      prdPath: '/repos/other/PRD.md',
      prdTitle: 'Other',
      repoPath: '/repos/other',
      provider: 'codex',
      maxIterations: 3,
      budgetUsd: 1,
      autonomyMode: 'autonomous',
    })
    .add(1, iteration(1, { provider: 'codex', costUsd: 0.1 }))
    .add(1, { kind: 'tier_change', iteration: 1, from: 'LOW', to: 'MEDIUM', trigger: 'more than 5 files modified' })
    .add(1, { kind: 'escalation', iteration: 1, reason: 'stuck', detail: 'no progress', paused: false })
    .add(2, iteration(2, { provider: 'codex', tier: 'development', costUsd: 0.1 }))
    .add(2, { kind: 'tier_change', iteration: 2, from: 'development', to: 'fast', trigger: '5 small successes' })
    .add(3, iteration(3, { provider: 'codex', costUsd: 0.1 }))
    .add(3, { kind: 'escalation', iteration: 3, reason: 'tier_ladder', detail: 'failures at HIGH', paused: false })
    .add(3, { kind: 'spend', iteration: 3, usd: 0.3, calls: 3, unpricedCalls: 1, budgetUsd: 1 })
    .add(3, { kind: 'message', name: 'budget', by: 'carol', summary: 'raise to 2 USD', accepted: false })
    .add(4, { kind: 'outcome', status: 'max_iterations_reached', exitCode: 20, reason: 'reached 3 iterations', iteration: 3 }).events;
}

export const RUNNING_START = Date.parse('2026-01-07T12:00:00.000Z');
/** When the reports look: 15 minutes into the pause of `run-running`. */
export const REPORT_NOW = new Date(RUNNING_START + 20 * MIN);

/** `run-running` on /repos/slugify: 1 iteration, spend 0.10 USD, paused by dave 5 minutes in and still paused. */
export function runningRun(): EventEnvelope[] {
  return new Journal('r-running-1', RUNNING_START)
    .add(0, {
      kind: 'run_started',
      prdPath: '/repos/slugify/PRD2.md',
      prdTitle: 'More slugify',
      repoPath: '/repos/slugify',
      provider: 'claude',
      maxIterations: 10,
      budgetUsd: 2,
      autonomyMode: 'supervised',
    })
    .add(1, iteration(1, { costUsd: 0.1 }))
    .add(1, { kind: 'spend', iteration: 1, usd: 0.1, calls: 1, unpricedCalls: 0, budgetUsd: 2 })
    .add(5, { kind: 'message', name: 'pause', by: 'dave', summary: 'reviewing', accepted: true }).events;
}

/** One event of every kind, with distinctive values (the projection round trip). */
export function oneOfEachKind(): EventEnvelope[] {
  return new Journal('r-kinds', Date.parse('2026-02-01T00:00:00.000Z'))
    .add(0, {
      kind: 'run_started',
      prdPath: '/p/PRD.md',
      prdTitle: 'Kinds',
      repoPath: '/p',
      provider: 'aider',
      maxIterations: 7,
      budgetUsd: 3.5,
      autonomyMode: 'supervised',
    })
    .add(
      1,
      iteration(1, {
        phase: 'VERIFY',
        tier: 'planning',
        exitCode: 3,
        durationMs: 1234,
        changed: false,
        filesChangedSinceStart: 4,
        claimed: true,
        tests: 'inconclusive',
        provider: 'aider',
        model: 'm-1',
        costUsd: 0.0123,
        attempts: 2,
      }),
    )
    .add(2, {
      kind: 'council_round',
      round: 1,
      iteration: 1,
      trigger: 'stagnation',
      result: 'BLOCKED_BY_GATE',
      approve: 0,
      reject: 0,
      threshold: 2,
      votes: [{ member: 2, recorded: 'abstain', approves: false, reason: 'blocked' }],
    })
    .add(3, { kind: 'gate', iteration: 1, gate: 'static_analysis', verdict: 'fail', reason: '2 lint errors', findings: 2 })
    .add(4, {
      kind: 'review',
      round: 1,
      iteration: 1,
      result: 'BLOCK',
      mergeability: 40,
      reviewers: [
        { reviewer: 'security', verdict: 'BLOCK', blocking: true },
        { reviewer: 'style', verdict: 'PASS', blocking: false },
      ],
    })
    .add(5, { kind: 'escalation', iteration: 1, reason: 'gate_stuck', detail: 'static analysis failed 3 times', paused: true })
    .add(6, { kind: 'notification', event: 'escalation', delivered: 2, failed: 1 })
    .add(7, { kind: 'message', name: 'input', by: 'erin', summary: 'use eslint --fix', accepted: true })
    .add(8, { kind: 'tier_change', iteration: 1, from: 'development', to: 'planning', trigger: '4 failures at MEDIUM' })
    .add(9, { kind: 'spend', iteration: 1, usd: 0.0123, calls: 2, unpricedCalls: 1, budgetUsd: 3.5 })
    .add(10, { kind: 'outcome', status: 'gate_stuck', exitCode: 20, reason: 'static analysis stuck', iteration: 1 }).events;
}
