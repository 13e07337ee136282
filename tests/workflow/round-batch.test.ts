/**
 * Batched rounds with the claude preset, against the fake claude CLI of examples/agents/fake-cli
 * (which declares an `--agents` and answers a `--json-schema` the way the real CLI does): a
 * council round is one call for its three members and a code review one call for its reviewers,
 * with each member's vote, reason and log in status as if it had been asked alone; a batched
 * call that gives no usable answer asks each member instead, and the round's record says why;
 * with `batchRounds: off` each member is asked in a call of its own. Default knobs otherwise.
 */
import { existsSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { expect, it } from 'vitest';
import { privateRunDir } from '../../lib/paths.js';
import { fileWorker, makeRepo, ROOT, runInput, startRun, status, uniqueId, writeScenario } from '../support/harness.js';

const dir = mkdtempSync(path.join(os.tmpdir(), 'vigil-round-batch-'));
// Set before the worker starts: the fake CLIs it runs read them.
const shared = fileWorker('round-batch', () => {
  process.env.FAKE_CLI_LOG = path.join(dir, 'calls.jsonl');
  process.env.VIGIL_SANDBOX_WRITABLE = dir;
});

interface LoggedCall {
  call: number | null;
  agents?: string[];
  env: Record<string, string>;
}

const CHECKLIST = '[{"id": "REQ-1", "title": "the three files exist", "priority": "critical", "verify": "ls a.txt b.txt c.txt"}]';
/** The builder's three iterations: a file each, the third claims. */
const BUILDER = [
  { writes: { 'a.txt': 'a\n' } },
  { writes: { 'b.txt': 'b\n' } },
  { writes: { 'c.txt': 'c\n' }, text: 'COMPLETION PROMISE FULFILLED' },
];

function scenario(name: string, roles: Record<string, unknown>, builder: unknown[]): string {
  const file = path.join(dir, `${name}.json`);
  writeFileSync(
    file,
    JSON.stringify({
      calls: builder,
      roles: {
        checklist: { text: CHECKLIST },
        'checklist-verifier': { text: 'ITEM REQ-1: PASS - a.txt, b.txt and c.txt are there' },
        ...roles,
      },
    }),
  );
  return file;
}

/** A run on its own scenario and builder call counter; the calls it made, from the shared log. */
async function run(name: string, roles: Record<string, unknown>, knobs: Record<string, unknown> = {}, builder: unknown[] = BUILDER) {
  const file = scenario(name, roles, builder);
  const repo = makeRepo();
  const input = runInput(repo, writeScenario('', { version: 1, iterations: [] }), {
    provider: 'claude',
    agentCommand: [path.join(ROOT, 'examples/agents/fake-cli', 'claude')],
    // The fake CLI's failures are scripted; the breaker would only add waits.
    providerBreaker: false,
    maxIterations: 6,
    notifyDesktop: false,
    ...knobs,
  });
  // The fake CLI reads its scenario from the worker's environment at each call: one run at a time in this file.
  process.env.FAKE_CLI_SCENARIO = file;
  process.env.FAKE_CLI_STATE = path.join(dir, `${name}.count`);
  const before = existsSync(path.join(dir, 'calls.jsonl'))
    ? readFileSync(path.join(dir, 'calls.jsonl'), 'utf8').split('\n').filter(Boolean).length
    : 0;
  const handle = await startRun(shared.env, shared.taskQueue, input, uniqueId(name));
  const outcome = await handle.result();
  const s = await status(handle);
  const calls = readFileSync(path.join(dir, 'calls.jsonl'), 'utf8')
    .split('\n')
    .filter(Boolean)
    .slice(before)
    .map((l) => JSON.parse(l) as LoggedCall);
  return { outcome, s, calls, repo };
}

const byRole = (calls: LoggedCall[], role: string) => calls.filter((c) => c.env.VIGIL_ROLE === role);
const VERIFIER = 'vigil-prd-checklist-verifier';
const MEMBERS = [
  'vigil-council-member-0-requirements-verifier',
  'vigil-council-member-1-test-auditor',
  'vigil-council-member-2-devils-advocate-minded',
];
/** The round's devil's advocate, declared last in its members' call: run there after a unanimous round. */
const DEVIL = 'vigil-devil-s-advocate';
/** Claims at 3 and 4, each on a tree with a new file. */
const TWO_CLAIMS = [...BUILDER, { writes: { 'd.txt': 'd\n' }, text: 'COMPLETION PROMISE FULFILLED' }];

it('a council round is one call for its three members, a code review one call for its reviewers; each keeps its own verdict', async () => {
  const { outcome, s, calls } = await run('batched', {
    reviewer: { text: 'VERDICT: PASS\n- [Low] a name could be clearer' },
    'devils-advocate': { text: 'VERDICT: PASS\nVOTE: APPROVE\nREASON: found nothing' },
    // The test auditor rejects; the other two approve (2 of 3 is the threshold).
    council: {
      text: 'VOTE: APPROVE\nREASON: every file is there',
      agents: { 'test-auditor': 'VOTE: REJECT\nREASON: no test covers the files\nISSUES: MEDIUM: no tests' },
    },
  });
  expect(outcome.status, JSON.stringify(s.council.verdicts)).toBe('council_approved');

  // Every council call was a batched one, one per round, declaring the three members.
  const council = byRole(calls, 'council');
  expect(s.council.rounds).toBeGreaterThanOrEqual(1);
  expect(council).toHaveLength(s.council.rounds);
  // The checklist's verification rides in the round's call, declared first (its main agent runs it before the members), the devil's advocate last.
  for (const c of council) expect(c.agents).toEqual([VERIFIER, ...MEMBERS, DEVIL]);
  expect(byRole(calls, 'checklist-verifier')).toEqual([]);
  const v = s.council.verdicts.at(-1);
  expect(v?.batch).toMatchObject({
    batched: true,
    members: 3,
    note: 'one call for the checklist verifier and 3 members (claude --agents)',
  });
  expect(v?.batch?.logPath).toMatch(/council-round-\d{4}-batch-i\d{4}\.log$/);
  expect(v?.votes.map((x) => [x.member, x.recorded, x.reason])).toEqual([
    [0, 'APPROVE', 'every file is there'],
    [1, 'REJECT', 'no test covers the files'],
    [2, 'APPROVE', 'every file is there'],
  ]);
  expect(v).toMatchObject({ result: 'APPROVED', approve: 2, reject: 1 });
  // Each member's own log and transcript hold its part of the one call and its finding.
  for (const [i, vote] of (v?.votes ?? []).entries()) {
    expect(vote.logPath).toMatch(new RegExp(`council-round-\\d{4}-m${i}\\.log$`));
    const log = readFileSync(vote.logPath, 'utf8');
    expect(log).toContain('[answered as agent vigil-council-member-');
    expect(log).toContain(i === 1 ? 'VOTE: REJECT' : 'VOTE: APPROVE');
    expect(existsSync(vote.logPath.replace(/\.log$/, '.transcript.md'))).toBe(true);
    expect(readFileSync(vote.logPath.replace(/\.log$/, '.prompt.md'), 'utf8')).toContain(
      `You are member ${i + 1} of 3 of a completion council`,
    );
  }

  // Every code review was one call for its reviewers and, as they all passed, its devil's advocate.
  const review = s.quality?.lastReview;
  expect(review?.result).toBe('pass');
  expect(review?.batch).toMatchObject({
    batched: true,
    members: review?.reviewers.length,
    note: `one call for ${review?.reviewers.length} members and the devil's advocate (claude --agents)`,
  });
  expect(review?.reviewers.length).toBeGreaterThanOrEqual(3);
  for (const r of review?.reviewers ?? []) {
    expect(r).toMatchObject({ verdict: 'PASS', blocking: false, counts: { low: 1 } });
    expect(readFileSync(r.logPath, 'utf8')).toContain('VERDICT: PASS');
  }
  const reviewers = byRole(calls, 'reviewer');
  expect(reviewers).toHaveLength(s.quality?.reviewRounds ?? -1);
  for (const c of reviewers) expect(c.agents?.at(-1)).toBe(DEVIL);
  for (const c of reviewers) expect(c.agents?.length).toBe((review?.reviewers.length ?? 0) + 1);
  expect(review?.devilsAdvocate?.verdict).toBe('PASS');
  expect(readFileSync(review?.devilsAdvocate?.logPath ?? '', 'utf8')).toContain(`[answered as agent ${DEVIL} of one call`);
  // The council's 2-of-3 approval was not unanimous: no devil's advocate ran, in the call or on its own.
  expect(v?.devilsAdvocate).toBeNull();
  expect(byRole(calls, 'devils-advocate')).toEqual([]);

  // Orchestration counts each batched call once.
  const orchestration = calls.filter((c) => c.env.VIGIL_ROLE !== 'iteration').length;
  expect(s.spend.orchestration?.calls).toBe(orchestration);
});

it('a batched call without a usable answer asks each member instead, and the round says why', async () => {
  const { outcome, s, calls } = await run('fallback', {
    // The review's answer misses a reviewer; the council's has no structured answer at all.
    reviewer: { text: 'VERDICT: PASS', dropFinding: true },
    'devils-advocate': { text: 'VERDICT: PASS\nVOTE: APPROVE\nREASON: found nothing' },
    council: { text: 'VOTE: APPROVE\nREASON: every file is there', structuredOutput: false },
  });
  expect(outcome.status, JSON.stringify(s.council.verdicts)).toBe('council_approved');

  const v = s.council.verdicts.at(-1);
  expect(v?.batch).toMatchObject({
    batched: false,
    members: 3,
    note: 'the batched call gave no usable answer (no structured answer): one call per member',
  });
  expect(v?.votes.map((x) => x.recorded)).toEqual(['APPROVE', 'APPROVE', 'APPROVE']);
  for (const vote of v?.votes ?? []) expect(readFileSync(vote.logPath, 'utf8')).not.toContain('[answered as agent');
  // Each round: the batched call, then one call per member (and the devil's advocate on the unanimous approval).
  const council = byRole(calls, 'council');
  expect(council.filter((c) => c.agents !== undefined)).toHaveLength(s.council.rounds);
  expect(council.filter((c) => c.agents === undefined && c.env.VIGIL_MEMBER !== undefined)).toHaveLength(3 * s.council.rounds);

  const review = s.quality?.lastReview;
  expect(review?.result).toBe('pass');
  expect(review?.batch?.batched).toBe(false);
  expect(review?.batch?.note).toMatch(/^the batched call gave no usable answer \(no finding for vigil-[a-z-]+\): one call per member$/);
  const reviewers = byRole(calls, 'reviewer');
  expect(reviewers.filter((c) => c.agents !== undefined)).toHaveLength(s.quality?.reviewRounds ?? -1);
  expect(reviewers.filter((c) => c.agents === undefined)).toHaveLength((review?.reviewers.length ?? 0) * (s.quality?.reviewRounds ?? 0));
});

it("a member's vote counts only when the call ran that member: a finding the main agent wrote itself asks the member on its own", async () => {
  const { outcome, s, calls } = await run('fabricated', {
    reviewer: { text: 'VERDICT: PASS' },
    'devils-advocate': { text: 'VERDICT: PASS\nVOTE: APPROVE\nREASON: found nothing' },
    // The main agent answers for the last council member (an approval) without dispatching it.
    council: { text: 'VOTE: APPROVE\nREASON: every file is there', fabricate: true },
  });
  expect(outcome.status, JSON.stringify(s.council.verdicts)).toBe('council_approved');
  const v = s.council.verdicts.at(-1);
  expect(v?.batch?.batched).toBe(false);
  expect(v?.batch?.note).toMatch(
    /^the batched call answered for vigil-[a-z0-9-]+ without running it as its own sub-agent: one call per member$/,
  );
  for (const vote of v?.votes ?? []) expect(readFileSync(vote.logPath, 'utf8')).not.toContain('[answered as agent');
  const council = byRole(calls, 'council');
  expect(council.filter((c) => c.agents === undefined && c.env.VIGIL_MEMBER !== undefined)).toHaveLength(3 * s.council.rounds);
});

it('with batchRounds off, every member and reviewer is asked in a call of its own, though claude could batch', async () => {
  // The knob under test: the same claude that batched above, told not to.
  const { outcome, s, calls } = await run(
    'off',
    {
      reviewer: { text: 'VERDICT: PASS\n- [Low] a name could be clearer' },
      'devils-advocate': { text: 'VERDICT: PASS\nVOTE: APPROVE\nREASON: found nothing' },
      council: {
        text: 'VOTE: APPROVE\nREASON: every file is there',
        agents: { 'test-auditor': 'VOTE: REJECT\nREASON: no test covers the files\nISSUES: MEDIUM: no tests' },
      },
    },
    { batchRounds: 'off' },
  );
  expect(outcome.status, JSON.stringify(s.council.verdicts)).toBe('council_approved');
  expect(calls.filter((c) => c.agents !== undefined)).toEqual([]);

  const v = s.council.verdicts.at(-1);
  expect(v?.batch).toBeUndefined();
  // Each member answered from its own call: the fake's answer for all (its per-agent answers only apply to a batched call).
  expect(v?.votes.map((x) => x.recorded)).toEqual(['APPROVE', 'APPROVE', 'APPROVE']);
  const council = byRole(calls, 'council');
  expect(council).toHaveLength(3 * s.council.rounds);
  expect(
    council
      .map((c) => c.env.VIGIL_MEMBER)
      .slice(0, 3)
      .sort(),
  ).toEqual(['0', '1', '2']);

  const review = s.quality?.lastReview;
  expect(review?.result).toBe('pass');
  expect(review?.batch).toBeUndefined();
  expect(byRole(calls, 'reviewer')).toHaveLength((review?.reviewers.length ?? 0) * (s.quality?.reviewRounds ?? 0));
  expect(review?.reviewers.length).toBeGreaterThanOrEqual(3);
  const orchestration = calls.filter((c) => c.env.VIGIL_ROLE !== 'iteration').length;
  expect(s.spend.orchestration?.calls).toBe(orchestration);
});

it("a claim the council refuses costs one call: the checklist verifier rides in the round, run first, its answer the checklist's", async () => {
  const { outcome, s, calls, repo } = await run(
    'verifier-rides',
    {
      reviewer: { text: 'VERDICT: PASS' },
      'devils-advocate': { text: 'VERDICT: PASS\nVOTE: APPROVE\nREASON: found nothing' },
      council: [{ text: 'VOTE: REJECT\nREASON: not yet' }, { text: 'VOTE: APPROVE\nREASON: every file is there' }],
    },
    {},
    TWO_CLAIMS,
  );
  expect(outcome.status, JSON.stringify(s.council.verdicts)).toBe('council_approved');
  expect(outcome.iteration).toBe(4);
  // Two checks, each one council call that declared the verifier and the members; no verifier call of its own.
  const council = byRole(calls, 'council');
  expect(council).toHaveLength(2);
  for (const c of council) expect(c.agents).toEqual([VERIFIER, ...MEMBERS, DEVIL]);
  expect(byRole(calls, 'checklist-verifier')).toEqual([]);
  // The unanimous approval at 4 had its devil's advocate in the same call: no call of its own.
  expect(s.council.verdicts.map((v) => [v.iteration, v.result, v.batch?.note, v.devilsAdvocate?.recorded ?? null])).toEqual([
    [3, 'REJECTED', 'one call for the checklist verifier and 3 members (claude --agents)', null],
    [4, 'APPROVED', "one call for the checklist verifier, 3 members and the devil's advocate (claude --agents)", 'APPROVE'],
  ]);
  expect(byRole(calls, 'devils-advocate')).toEqual([]);
  expect(s.checks).toMatchObject({ total: 2, refused: 1, byCause: { council: 1 } });
  // The verifier's answer is the checklist's, as its own call's would have been.
  expect(s.quality?.checklist?.find((i) => i.id === 'REQ-1')).toMatchObject({ status: 'passing' });
  // Its prompt and answer name the checklist's items: the call's files stay out of the repository.
  const batchLog = s.council.verdicts[0]?.batch?.logPath ?? '';
  expect(batchLog.startsWith(privateRunDir(s.workflowId))).toBe(true);
  expect(readFileSync(path.join(privateRunDir(s.workflowId), 'checklist-verifier-0003.log'), 'utf8')).toContain(
    'ITEM REQ-1: PASS - a.txt, b.txt and c.txt are there',
  );
  const inRepo = readdirSync(path.join(repo, '.vigil'), { recursive: true, withFileTypes: true }).filter(
    (e) => e.isFile() && readFileSync(path.join(e.parentPath, e.name), 'utf8').includes('ITEM REQ-1'),
  );
  expect(inRepo.map((e) => e.name)).toEqual([]);
  const orchestration = calls.filter((c) => c.env.VIGIL_ROLE !== 'iteration').length;
  expect(s.spend.orchestration?.calls).toBe(orchestration);
});

it('a verifier that finds the checklist not met stops the round before any member is asked, in the same one call', async () => {
  const { outcome, s, calls } = await run(
    'verifier-stops',
    {
      'checklist-verifier': [
        { text: 'ITEM REQ-1: FAIL - c.txt is empty' },
        { text: 'ITEM REQ-1: PASS - a.txt, b.txt and c.txt are there' },
      ],
      reviewer: { text: 'VERDICT: PASS' },
      'devils-advocate': { text: 'VERDICT: PASS\nVOTE: APPROVE\nREASON: found nothing' },
      council: { text: 'VOTE: APPROVE\nREASON: every file is there' },
    },
    {},
    TWO_CLAIMS,
  );
  expect(outcome.status, JSON.stringify(s.council.verdicts)).toBe('council_approved');
  expect(outcome.iteration).toBe(4);
  const council = byRole(calls, 'council');
  expect(council).toHaveLength(2);
  // The claim at 3 was refused by the checklist: no member voted, no council round counted.
  // Both calls of round 1 carry the run's iteration (3, then 4) as VIGIL_ITERATION; the round has its own variable.
  expect(council.map((c) => [c.env.VIGIL_ITERATION, c.env.VIGIL_COUNCIL_ROUND])).toEqual([
    ['3', '1'],
    ['4', '1'],
  ]);
  expect(s.council.rounds).toBe(1);
  expect(s.council.verdicts.map((v) => [v.round, v.iteration, v.result])).toEqual([[1, 4, 'APPROVED']]);
  expect(s.checks).toMatchObject({ total: 2, refused: 1, byCause: { checklist: 1 } });
  const firstLog = readFileSync(path.join(privateRunDir(s.workflowId), 'council-round-0001-batch-i0003.log'), 'utf8');
  expect(firstLog).toContain(VERIFIER);
  for (const m of MEMBERS) expect(firstLog).not.toContain(`"subagent_type":"${m}"`);
  expect(byRole(calls, 'checklist-verifier')).toEqual([]);
});

it("a batched call that leaves out the devil's advocate it was asked for: the round asks it on its own", async () => {
  const { outcome, s, calls } = await run('devil-left-out', {
    reviewer: { text: 'VERDICT: PASS', skipFollowUp: true },
    'devils-advocate': { text: 'VERDICT: PASS\nVOTE: APPROVE\nREASON: found nothing' },
    council: { text: 'VOTE: APPROVE\nREASON: every file is there', skipFollowUp: true },
  });
  expect(outcome.status, JSON.stringify(s.council.verdicts)).toBe('council_approved');
  const v = s.council.verdicts.at(-1);
  expect(v?.batch?.note).toBe('one call for the checklist verifier and 3 members (claude --agents)');
  expect(v?.devilsAdvocate).toMatchObject({ triggered: true, recorded: 'APPROVE', flipped: false });
  // Each unanimous round's devil's advocate in a call of its own, as the council's and the review's always were before.
  const devils = byRole(calls, 'devils-advocate');
  expect(devils.every((c) => c.agents === undefined)).toBe(true);
  expect(devils.filter((c) => c.env.VIGIL_COUNCIL_ROUND !== undefined)).toHaveLength(s.council.rounds);
  expect(devils.filter((c) => c.env.VIGIL_REVIEW_ROUND !== undefined)).toHaveLength(s.quality?.reviewRounds ?? -1);
  // The devil's advocates of the review and of the council at the claim's iteration (3), each round in its own variable.
  expect(devils.map((c) => c.env.VIGIL_ITERATION)).toEqual(devils.map(() => '3'));
  expect(s.quality?.lastReview?.devilsAdvocate?.verdict).toBe('PASS');
  const orchestration = calls.filter((c) => c.env.VIGIL_ROLE !== 'iteration').length;
  expect(s.spend.orchestration?.calls).toBe(orchestration);
});
