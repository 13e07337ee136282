/**
 * The completion council against a real Temporal server, with scripted members: thresholds,
 * the devil's advocate, the evidence gate, the circuit breaker and its safety valve, a member
 * that hangs, a forced review, and a worker killed in the middle of a round.
 */
import { existsSync, readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Knobs } from '../../schemas/knobs.js';
import { forceReviewUpdate } from '../../workflows/messages.js';
import {
  agentCalls,
  assertBuilt,
  createTestEnv,
  makeRepo,
  makeWorker,
  agentAlive,
  loopInput,
  sleep,
  startRun,
  status,
  uniqueId,
  waitForStatus,
  WorkerProcesses,
  writeScenario,
  type ScenarioInput,
  type TestEnv,
} from '../support/harness.js';

let env: TestEnv;
const workers = new WorkerProcesses();
beforeAll(async () => {
  assertBuilt();
  env = await createTestEnv();
});
afterAll(async () => {
  workers.killAll();
  await env?.close();
});

const COUNCIL: Partial<Knobs> = {
  councilEnabled: true,
  councilMinIterations: 1,
  councilCheckInterval: 1000,
  councilEarlyCheck: false,
  councilMemberTimeoutSeconds: 30,
};

const vote = (v: 'APPROVE' | 'REJECT', reason = `member says ${v.toLowerCase()}`) => ({
  output: `Looked at the evidence.\nVOTE: ${v}\nREASON: ${reason}\n`,
});

/** Runs a scenario to its end on a fresh in-process worker; returns the outcome and final status. */
async function run(scenario: ScenarioInput, knobs: Partial<Knobs> = {}) {
  const repo = makeRepo();
  const file = writeScenario(repo, scenario);
  const tq = uniqueId('council');
  const worker = await makeWorker(env, tq);
  return worker.runUntil(async () => {
    const handle = await startRun(env, tq, loopInput(repo, file, { ...COUNCIL, ...knobs }));
    const outcome = await handle.result();
    const meta = (await handle.query('__temporal_workflow_metadata')) as { currentDetails?: string };
    return { outcome, snap: await status(handle), repo, details: meta.currentDetails ?? '' };
  });
}

const councilCalls = (repo: string) => agentCalls(repo).filter((c) => c.role !== 'iteration');

describe('council votes', () => {
  it('approves with 2 of 3 and a green test run', async () => {
    const { outcome, snap, repo } = await run(
      {
        version: 1,
        iterations: [{ writes: { 'a.txt': 'a' }, claim: 'promise' }],
        roles: {
          council: {
            members: {
              '0': { default: vote('APPROVE') },
              '1': { default: vote('APPROVE') },
              '2': { default: vote('REJECT', 'needs more tests') },
            },
          },
        },
      },
      { testCommand: 'test -f a.txt' },
    );
    expect(outcome.status).toBe('council_approved');
    expect(outcome.exitCode).toBe(0);
    expect(outcome.iteration).toBe(1);
    // The approved run's work is delivered on its run branch (deliver=branch, the default).
    expect(outcome.notes).toEqual([expect.stringMatching(/^evidence: /), expect.stringMatching(/^delivered on branch vigil\//)]);
    const [v] = snap.council.verdicts;
    expect(v).toMatchObject({
      round: 1,
      iteration: 1,
      trigger: 'claim',
      result: 'APPROVED',
      approve: 2,
      reject: 1,
      threshold: 2,
      size: 3,
      devilsAdvocate: null,
    });
    expect(v?.votes.map((x) => [x.member, x.role, x.recorded])).toEqual([
      [0, 'requirements-verifier', 'APPROVE'],
      [1, 'test-auditor', 'APPROVE'],
      [2, 'devils-advocate-minded', 'REJECT'],
    ]);
    expect(v?.votes[2]?.reason).toBe('needs more tests');
    expect(v?.evidence).toMatchObject({ pass: true, testsPassed: true, filesChanged: 1 });
    const transcript = JSON.parse(readFileSync(v?.transcriptPath as string, 'utf8')) as {
      result: string;
      votes: unknown[];
      evidencePath: string;
    };
    expect(transcript.result).toBe('APPROVED');
    expect(transcript.votes).toHaveLength(3);
    expect(readFileSync(transcript.evidencePath, 'utf8')).toMatch(
      /## PRD requirements[\s\S]*## Git status[\s\S]*## Test results[\s\S]*PASSED/,
    );
    // Blind by default: members do not see convergence data.
    expect(readFileSync(transcript.evidencePath, 'utf8')).not.toContain('## Convergence data');
    expect(councilCalls(repo).map((c) => c.role)).toEqual(['council', 'council', 'council']);
  });

  it('shows the latest round in the Temporal UI details', async () => {
    const { details } = await run({
      version: 1,
      iterations: [{ writes: { 'a.txt': 'a' }, claim: 'promise' }],
      roles: {
        council: { members: { '0': { default: vote('APPROVE') }, '1': { default: vote('APPROVE') }, '2': { default: vote('REJECT') } } },
      },
    });
    expect(details).toContain('Council round 1 (iteration 1, claim): **APPROVED** · 2/3 approve, 2 needed');
  });

  it('continues on 1 of 3, then completes on a unanimous vote the devil’s advocate confirms', async () => {
    const { outcome, snap, repo } = await run({
      version: 1,
      iterations: [
        { writes: { 'a.txt': 'a' }, claim: 'promise' },
        { writes: { 'b.txt': 'b' }, claim: 'file' },
      ],
      roles: {
        council: {
          rounds: [vote('REJECT', 'b.txt is missing'), vote('APPROVE')],
          members: { '0': { rounds: [vote('APPROVE')] } },
        },
        'devils-advocate': { default: vote('APPROVE', 'found nothing') },
      },
    });
    expect(outcome.status).toBe('council_approved');
    expect(outcome.iteration).toBe(2);
    expect(snap.council.verdicts.map((v) => [v.round, v.iteration, v.result, v.approve])).toEqual([
      [1, 1, 'REJECTED', 1],
      [2, 2, 'APPROVED', 3],
    ]);
    expect(snap.council.verdicts[1]?.devilsAdvocate).toMatchObject({ triggered: true, flipped: false, recorded: 'APPROVE' });
    // The rejection reasons reached the next prompt.
    const prompt2 = readFileSync(snap.recentIterations[1]?.logPath.replace(/\.log$/, '.prompt.md') as string, 'utf8');
    expect(prompt2).toMatch(/did not approve: 1 of 3 approved, 2 needed/);
    expect(prompt2).toContain('b.txt is missing');
    expect(councilCalls(repo).filter((c) => c.role === 'devils-advocate')).toHaveLength(1);
  });

  it('turns a unanimous approval into CONTINUE when the devil’s advocate objects', async () => {
    const { outcome, snap } = await run({
      version: 1,
      iterations: [
        { writes: { 'a.txt': 'a' }, claim: 'promise' },
        { writes: { 'b.txt': 'b' }, claim: 'promise' },
      ],
      roles: {
        council: { default: vote('APPROVE') },
        'devils-advocate': { rounds: [vote('REJECT', 'no error handling for empty input')], default: vote('APPROVE', 'nothing left') },
      },
    });
    expect(outcome.status).toBe('council_approved');
    expect(outcome.iteration).toBe(2);
    const [first, second] = snap.council.verdicts;
    expect(first).toMatchObject({
      result: 'REJECTED',
      approve: 1,
      reject: 2,
      threshold: 2,
      devilsAdvocate: { triggered: true, flipped: true, recorded: 'REJECT' },
    });
    expect(second).toMatchObject({ result: 'APPROVED', approve: 3, devilsAdvocate: { flipped: false } });
  });

  it('counts a member that hangs past its timeout as REJECT and goes on', async () => {
    const started = Date.now();
    const { outcome, snap, repo } = await run(
      {
        version: 1,
        iterations: [{ writes: { 'a.txt': 'a' }, claim: 'promise' }],
        roles: {
          council: {
            members: { '0': { default: vote('APPROVE') }, '1': { default: vote('APPROVE') }, '2': { default: { sleepBeforeMs: 120_000 } } },
          },
        },
      },
      { councilMemberTimeoutSeconds: 3 },
    );
    expect(outcome.status).toBe('council_approved');
    expect(snap.council.verdicts[0]?.votes[2]).toMatchObject({ recorded: 'TIMEOUT', approves: false });
    expect(Date.now() - started).toBeLessThan(60_000);
    const hung = councilCalls(repo).find((c) => c.role === 'council' && c.member === 2);
    expect(hung && agentAlive(hung)).toBe(false);
  });
});

describe('evidence gate', () => {
  it('blocks an empty diff, red tests and a leaked secret before any member is asked', async () => {
    const secret = `const client = new Client({ apiKey: "sk-ant-api03-${'Q7xk2LmN9pR4sT6v'.repeat(3)}" });\n`;
    const { outcome, snap, repo } = await run(
      {
        version: 1,
        iterations: [
          { claim: 'promise' }, // nothing changed (and the tests fail)
          { writes: { 'x.txt': 'x' }, claim: 'promise' }, // tests need y.txt
          { writes: { 'y.txt': 'y', 'src/client.js': secret }, claim: 'promise' },
          { writes: { 'src/client.js': 'const client = new Client({ apiKey: process.env.ANTHROPIC_API_KEY });\n' }, claim: 'promise' },
        ],
        roles: { council: { default: vote('APPROVE') }, 'devils-advocate': { default: vote('APPROVE') } },
      },
      { testCommand: 'test -f y.txt' },
    );
    expect(outcome.status).toBe('council_approved');
    expect(outcome.iteration).toBe(4);
    // Nothing changed at 1: the evidence gate refuses it before any round (and before the tests run).
    expect(snap.checks?.byCause).toEqual({ evidence: 1, council: 2 });
    expect(snap.council.verdicts.map((v) => [v.iteration, v.result, v.evidence.reason])).toEqual([
      [2, 'BLOCKED_BY_GATE', 'tests_red'],
      [3, 'BLOCKED_BY_GATE', 'secret_leak_in_changed_files'],
      [4, 'APPROVED', null],
    ]);
    expect(snap.council.verdicts[1]?.evidence.failures.join('\n')).toMatch(/Anthropic API key in src\/client\.js:1/);
    // Blocked rounds asked nobody: 3 members + the devil's advocate, once, in round 4.
    expect(councilCalls(repo)).toHaveLength(4);
  });

  it('refuses a claim with an empty diff before any round, and shows members convergence data when not blind', async () => {
    const { outcome, snap } = await run(
      {
        version: 1,
        iterations: [{ claim: 'promise' }, { writes: { 'a.txt': 'a' }, claim: 'promise' }],
        roles: {
          council: { members: { '0': { default: vote('APPROVE') }, '1': { default: vote('APPROVE') }, '2': { default: vote('REJECT') } } },
        },
      },
      { councilBlind: false },
    );
    expect(outcome.status).toBe('council_approved');
    expect(snap.council.verdicts.map((v) => [v.iteration, v.result, v.evidence.reason])).toEqual([[2, 'APPROVED', null]]);
    expect(snap.checks).toMatchObject({ total: 2, refused: 1, byCause: { evidence: 1 }, last: { iteration: 2, approved: true } });
    expect(outcome.notes).toEqual([
      'evidence: no test runner, integrity findings: not checked, gaming findings: not checked, tree ' +
        (outcome.notes[0] ?? '').slice(-12),
      'completion not independently verified: no test runner',
      expect.stringMatching(/^delivered on branch vigil\//),
    ]);
    const transcript = JSON.parse(readFileSync(snap.council.verdicts[0]?.transcriptPath as string, 'utf8')) as { evidencePath: string };
    expect(readFileSync(transcript.evidencePath, 'utf8')).toMatch(
      /## Convergence data\n\nNo-change streak 0; done signals 2 in a row, 2 in total/,
    );
  });

  it('without a council, a claim that passes the gate completes; "no test command" is reported as unverified', async () => {
    const { outcome } = await run({ version: 1, iterations: [{ writes: { 'a.txt': 'a' }, claim: 'promise' }] }, { councilEnabled: false });
    expect(outcome.status).toBe('completion_promise_fulfilled');
    expect(outcome.notes).toEqual([
      'evidence: no test runner, integrity findings: not checked, gaming findings: not checked, tree ' +
        (outcome.notes[0] ?? '').slice(-12),
      'completion not independently verified: no test runner',
      expect.stringMatching(/^delivered on branch vigil\//),
    ]);
  });
});

describe('circuit breaker and safety valves', () => {
  it('trips at the stagnation limit and force-stops at twice the limit (exit 20)', async () => {
    const { outcome, snap, repo } = await run(
      { version: 1, iterations: [], default: { output: 'thinking about it\n' }, roles: { council: { default: vote('REJECT') } } },
      { stagnationLimit: 2, maxIterations: 20 },
    );
    expect(outcome.status).toBe('force_stopped');
    expect(outcome.exitCode).toBe(20);
    expect(outcome.iteration).toBe(4);
    expect(outcome.reason).toMatch(/^stopped without approval: no change for 4 iterations/);
    // No check before the limit; one per iteration once tripped, each refused by the evidence gate
    // (nothing changed) before any round or agent call.
    expect(snap.council.verdicts).toEqual([]);
    expect(snap.checks).toMatchObject({
      total: 3,
      refused: 3,
      byCause: { evidence: 3 },
      last: { iteration: 4, trigger: 'circuit_breaker', cause: 'evidence' },
    });
    expect(outcome.reason).toContain('the last completion check was refused by the evidence gate: no file changed since the run started');
    expect(snap.breaker).toBe('stagnation');
    expect(agentCalls(repo).filter((c) => c.role === 'iteration')).toHaveLength(4);
  });

  it('force-stops a run that keeps saying it is done once the done-signal limit is reached', async () => {
    const { outcome, snap } = await run(
      {
        version: 1,
        iterations: [],
        default: { appends: { 'log.txt': 'x\n' }, output: 'Implementation complete!\n' },
        roles: { council: { default: vote('REJECT', 'not done') } },
      },
      { doneSignalLimit: 3, councilCheckInterval: 1000 },
    );
    // Done-phrases every iteration: the breaker trips at 2 in a row, the flood valve at 3 in total.
    expect(outcome.status).toBe('force_stopped');
    expect(outcome.reason).toMatch(
      /3 completion claims without approval \(doneSignalLimit 3\); the last completion check was refused by the council: 0 of 3 approve, 2 needed$/,
    );
    expect(snap.totalDoneSignals).toBe(3);
    expect(snap.council.verdicts.map((v) => [v.iteration, v.trigger, v.result])).toEqual([
      [2, 'circuit_breaker', 'REJECTED'],
      [3, 'circuit_breaker', 'REJECTED'],
    ]);
  });
});

describe('durability of a round', () => {
  it('finishes a round once after the worker is killed in the middle of it', async () => {
    const repo = makeRepo();
    const scenario = writeScenario(repo, {
      version: 1,
      iterations: [{ writes: { 'a.txt': 'a' }, claim: 'promise' }],
      roles: {
        council: {
          members: {
            '0': { default: vote('APPROVE') },
            '1': { default: { ...vote('APPROVE'), sleepMs: 5000 } }, // still voting when the worker dies
            '2': { default: vote('REJECT') },
          },
        },
      },
    });
    const tq = uniqueId('council-crash');
    const { child } = await workers.spawn(tq);
    const handle = await startRun(env, tq, loopInput(repo, scenario, { ...COUNCIL, heartbeatTimeoutSeconds: 4 }));
    const deadline = Date.now() + 60_000;
    while (councilCalls(repo).length < 3) {
      if (Date.now() > deadline) throw new Error('the council never convened');
      await sleep(100);
    }
    await sleep(1000);
    child.kill('SIGKILL');
    await child;
    await workers.spawn(tq);
    const outcome = await handle.result();
    const snap = await status(handle);
    expect(outcome.status).toBe('council_approved');
    expect(snap.council.rounds).toBe(1);
    expect(snap.council.verdicts).toHaveLength(1);
    expect(snap.council.verdicts[0]).toMatchObject({ round: 1, approve: 2, reject: 1 });
    // Each member was asked once: the interrupted member's retry re-attached to its running call.
    const byMember = (m: number) => councilCalls(repo).filter((c) => c.member === m).length;
    expect([byMember(0), byMember(1), byMember(2)]).toEqual([1, 1, 1]);
    const transcripts = snap.council.verdicts.map((v) => v.transcriptPath);
    expect(transcripts.every((p) => existsSync(p))).toBe(true);
    // The round is one activity, which ran twice: its second attempt collected the three votes.
    const events = (await handle.fetchHistory()).events ?? [];
    const rounds = events.filter((e) => e.activityTaskScheduledEventAttributes?.activityType?.name === 'councilRound');
    expect(rounds).toHaveLength(1);
    const started = events.find((e) => String(e.activityTaskStartedEventAttributes?.scheduledEventId ?? '') === String(rounds[0]?.eventId));
    expect(started?.activityTaskStartedEventAttributes?.attempt).toBe(2);
  });
});

describe('forceReview', () => {
  it('convenes the council at the next boundary when a person asks', async () => {
    const repo = makeRepo();
    const scenario = writeScenario(repo, {
      version: 1,
      iterations: [{ writes: { 'a.txt': 'a' }, sleepBeforeMs: 1500 }],
      default: { output: 'polishing\n', sleepBeforeMs: 300 },
      roles: { council: { default: vote('APPROVE') }, 'devils-advocate': { default: vote('APPROVE') } },
    });
    const tq = uniqueId('force');
    const worker = await makeWorker(env, tq);
    await worker.runUntil(async () => {
      const handle = await startRun(env, tq, loopInput(repo, scenario, { ...COUNCIL, councilMinIterations: 50, maxIterations: 40 }));
      await waitForStatus(handle, (s) => s.agentRunning && s.iteration === 1);
      const ack = await handle.executeUpdate(forceReviewUpdate, { args: [{ by: 'erin', reason: 'looks done to me' }] });
      expect(ack.changed).toBe(true);
      const outcome = await handle.result();
      const snap = await status(handle);
      expect(outcome.status).toBe('council_approved');
      expect(outcome.iteration).toBe(1);
      expect(snap.council.verdicts[0]).toMatchObject({ trigger: 'forced', iteration: 1, result: 'APPROVED' });
    });
  });
});
