/**
 * Quality gates, the blind code review and the PRD checklist against a real Temporal server,
 * with scripted agents and real tools (bash -n for static analysis): a failing gate refuses a
 * claim and the next prompt names it, reviewer severities block or advise, an inconclusive
 * review re-runs once then blocks, a stuck gate ends the run, a held-out item blocks without
 * ever reaching the builder, and a waiver lifts the block.
 */
import { existsSync, mkdtempSync, readdirSync, readFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { WorkflowUpdateFailedError } from '@temporalio/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Knobs } from '../../schemas/knobs.js';
import { ChecklistItemSchema } from '../../schemas/gates.js';
import { selectHeldOut } from '../../rules/checklist/held-out.js';
import { printStatus, statusJson } from '../../cli/status.js';
import { viewRun } from '../../cli/steer.js';
import { lightRunApi } from '../../cli/wire/client.js';
import { pauseUpdate, resumeUpdate, stopUpdate, waiveUpdate } from '../../workflows/messages.js';
import {
  agentCalls,
  assertBuilt,
  createTestEnv,
  makeRepo,
  makeWorker,
  NAMESPACE,
  loopInput,
  runInput,
  startRun,
  status,
  temporalAddress,
  uniqueId,
  waitForStatus,
  writeScenario,
  type ScenarioInput,
  type TestEnv,
  PASS_ON_START_TREE,
} from '../support/harness.js';

let env: TestEnv;
beforeAll(async () => {
  assertBuilt();
  env = await createTestEnv();
});
afterAll(async () => {
  await env?.close();
});

/** Every tool gate on; review and checklist per test. */
const GATES: Partial<Knobs> = { qualityGates: true, gateTimeoutSeconds: 60, councilMemberTimeoutSeconds: 30 };

const BAD_SH = '#!/bin/sh\nif [ -f x ]; then\n  echo broken\n'; // no `fi`: bash -n fails
const GOOD_SH = '#!/bin/sh\nif [ -f x ]; then\n  echo fine\nfi\n';

/** The prompts the builder was given, in order. */
function builderPrompts(repo: string, runId: string): string[] {
  const dir = path.join(repo, '.vigil/runs', runId);
  return readdirSync(dir)
    .filter((f) => /^iteration-\d+\.prompt\.md$/.test(f))
    .sort()
    .map((f) => readFileSync(path.join(dir, f), 'utf8'));
}

/** Every file under the repository's .vigil folder, concatenated (what the builder could read). */
function everythingTheBuilderCanRead(repo: string): string {
  const out: string[] = [];
  const walk = (dir: string): void => {
    for (const e of readdirSync(dir, { withFileTypes: true })) {
      const p = path.join(dir, e.name);
      if (e.isDirectory()) walk(p);
      else if (e.isFile()) out.push(readFileSync(p, 'utf8'));
    }
  };
  walk(path.join(repo, '.vigil'));
  return out.join('\n');
}

async function run(scenario: ScenarioInput, knobs: Partial<Knobs>, drive?: (h: Awaited<ReturnType<typeof startRun>>) => Promise<void>) {
  const repo = makeRepo();
  const file = writeScenario(repo, scenario);
  const tq = uniqueId('gates');
  const worker = await makeWorker(env, tq);
  const runId = uniqueId('gated');
  return worker.runUntil(async () => {
    const handle = await startRun(env, tq, loopInput(repo, file, { ...GATES, ...knobs }), runId);
    if (drive) await drive(handle);
    const outcome = await handle.result();
    const meta = (await handle.query('__temporal_workflow_metadata')) as { currentDetails?: string };
    return { outcome, snap: await status(handle), repo, runId, details: meta.currentDetails ?? '' };
  });
}

describe('tool gates', () => {
  it('a syntax error in a changed file refuses the claim; the next prompt names the file; the fix completes the run', async () => {
    const { outcome, snap, repo, runId, details } = await run(
      {
        version: 1,
        iterations: [
          { writes: { 'scripts/deploy.sh': BAD_SH }, claim: 'file' },
          { writes: { 'scripts/deploy.sh': GOOD_SH }, claim: 'file' },
        ],
      },
      { codeReview: false, prdChecklist: false },
    );
    expect(outcome).toMatchObject({ status: 'completion_promise_fulfilled', iteration: 2 });
    const prompts = builderPrompts(repo, runId);
    expect(prompts[0]).not.toContain('QUALITY GATE FAILURES');
    expect(prompts[1]).toContain('QUALITY GATE FAILURES');
    expect(prompts[1]).toMatch(/static analysis FAILED \(blocks completion\)/);
    expect(prompts[1]).toContain('scripts/deploy.sh');
    expect(prompts[1]).toContain('refused before the council was asked');
    const sa = snap.quality?.gates.find((g) => g.gate === 'static_analysis');
    expect(sa).toMatchObject({ verdict: 'pass', iteration: 2 });
    expect(snap.quality?.gates.map((g) => g.gate)).toEqual(
      expect.arrayContaining(['static_analysis', 'secret_scan', 'tests', 'mock_integrity', 'test_mutation', 'doc_coverage']),
    );
    expect(details).toContain('Quality gates: ✓ static analysis');
  });

  it('the same failure three times ends the run as gate_stuck (exit 20), naming the gate', async () => {
    const { outcome, snap } = await run(
      {
        version: 1,
        iterations: [],
        // Each iteration changes the tree (a note) but never fixes the script.
        default: { writes: { 'scripts/deploy.sh': BAD_SH }, appends: { 'notes.txt': 'tried again\n' } },
      },
      { codeReview: false, prdChecklist: false, maxIterations: 10 },
    );
    expect(outcome).toMatchObject({ status: 'gate_stuck', exitCode: 20, iteration: 3 });
    expect(outcome.reason).toMatch(/^the static analysis gate failed 3 times in a row for the same reason: .*scripts\/deploy\.sh/);
    expect(snap.quality?.failing.static_analysis).toBe(3);
  });
});

// A test suite that marks when it starts (outside the repository, so the tree stays the agent's)
// and takes long enough for a message, or a look at the run, to land while the gates run.
const slowSuite = (seconds = 2): { marker: string; testCommand: string } => {
  const marker = path.join(mkdtempSync(path.join(os.tmpdir(), 'vigil-suite-')), 'started');
  // The sandboxed test run writes its marker outside the repository only where the worker's
  // operator names the folder (docs/security.md, The agent's sandbox); the in-process workers read it.
  process.env.VIGIL_SANDBOX_WRITABLE = path.dirname(marker);
  return { marker, testCommand: `${PASS_ON_START_TREE}touch '${marker}'; sleep ${seconds}; echo '1 passed'` };
};
const untilPresent = async (file: string): Promise<void> => {
  const deadline = Date.now() + 60_000;
  while (!existsSync(file)) {
    if (Date.now() > deadline) throw new Error(`the test suite never started (${file})`);
    await new Promise((r) => setTimeout(r, 25));
  }
};

describe('a completion claim interrupted while it is checked', () => {
  const claimOnce = { version: 1 as const, iterations: [{ writes: { 'notes.md': '# done\n' }, claim: 'file' as const }] };
  const COUNCIL: Partial<Knobs> = {
    councilEnabled: true,
    councilMinIterations: 1,
    councilCheckInterval: 1000,
    councilEarlyCheck: false,
    councilSize: 1,
    councilThreshold: 1,
  };

  for (const council of [true, false]) {
    it(`is held through a pause and judged after the resume, not dropped (${council ? 'council' : 'no council'})`, async () => {
      const { marker, testCommand } = slowSuite();
      const scenario = council
        ? {
            ...claimOnce,
            roles: {
              council: { default: { output: 'VOTE: APPROVE\nREASON: done\n' } },
              'devils-advocate': { default: { output: 'VOTE: APPROVE\nREASON: fine\n' } },
            },
          }
        : claimOnce;
      let held: number | null | undefined;
      const said: string[] = [];
      const { outcome, snap } = await run(
        scenario,
        { codeReview: false, prdChecklist: false, testCommand, maxIterations: 3, ...(council ? COUNCIL : { councilEnabled: false }) },
        async (h) => {
          await untilPresent(marker);
          await h.executeUpdate(pauseUpdate, { args: [{ reason: 'look first', by: 'ana' }] });
          // Paused at the boundary: the interrupted check is over (its call's gate pass was skipped).
          const paused = await waitForStatus(h, (s) => s.status === 'paused' && !s.agentRunning);
          held = paused.council.heldClaimIteration;
          printStatus(
            {
              kind: 'running',
              workflowId: h.workflowId,
              snapshot: paused,
              workerAnswered: true,
              iteration: paused.iteration,
              searchStatus: 'paused',
              taskFailing: null,
            },
            (l = '') => said.push(l),
          );
          await h.executeUpdate(resumeUpdate, { args: [{ by: 'ana' }] });
        },
      );
      expect(held).toBe(1);
      expect(said).toContain('  held check: the completion claim of iteration 1 is judged once the run is resumed');
      // Judged on the resume, at the iteration that claimed: the agent never had to claim again.
      expect(outcome).toMatchObject({ status: council ? 'council_approved' : 'completion_promise_fulfilled', iteration: 1 });
      expect(snap.council.heldClaimIteration).toBeNull();
      if (council) expect(snap.council.verdicts.map((v) => [v.iteration, v.trigger])).toEqual([[1, 'claim']]);
    });
  }
});

describe('what a run does right now', () => {
  it("vigil status names the gates an agent call's carried pass runs once its agent is done", async () => {
    const { marker, testCommand } = slowSuite(6);
    const repo = makeRepo();
    const file = writeScenario(repo, { version: 1, iterations: [{ writes: { 'notes.md': '# a start\n' } }] });
    const tq = uniqueId('gates');
    const worker = await makeWorker(env, tq, { heartbeatSendMs: 300 });
    const runId = uniqueId('gating');
    const api = lightRunApi({ address: temporalAddress(), namespace: NAMESPACE, taskQueue: tq, uiUrl: '' });
    try {
      const { outcome, line } = await worker.runUntil(async () => {
        const h = await startRun(
          env,
          tq,
          loopInput(repo, file, { ...GATES, codeReview: false, prdChecklist: false, testCommand, maxIterations: 1 }),
          runId,
        );
        await untilPresent(marker);
        let view = await viewRun(api, runId);
        for (
          const deadline = Date.now() + 5000;
          !(view.kind === 'running' && view.gatesRunning?.includes('tests')) && Date.now() < deadline;
        ) {
          await new Promise((r) => setTimeout(r, 100));
          view = await viewRun(api, runId);
        }
        const said: string[] = [];
        printStatus(view, (l = '') => said.push(l));
        expect(statusJson(view).gatesRunning).toContain('tests');
        return { outcome: await h.result(), line: said.find((l) => l.startsWith('  status')) };
      });
      // The run itself says only that its agent call runs: the pass rides in the same activity.
      expect(line).toMatch(/^ {2}status {4}: iteration 1: the agent is done, its quality gates run \((.+, )?tests(, .+)?\)$/);
      expect(outcome.status).toBe('max_iterations_reached');
    } finally {
      await api.close();
    }
  });
});

const reviewerSays = (text: string) => ({ default: { output: text } });

describe('blind code review', () => {
  it("a reviewer's [High] blocks, [Medium] does not; the builder hears the finding", async () => {
    const { outcome, snap, repo, runId } = await run(
      {
        version: 1,
        iterations: [
          // The sql/query keywords bring the security sentinel in (spec §5.4).
          { writes: { 'src/sql.js': 'export const query = (id) => `SELECT * FROM t WHERE id = ${id}`;\n' }, claim: 'file' },
          { writes: { 'src/sql.js': 'export const query = (id) => ["SELECT * FROM t WHERE id = ?", [id]];\n' }, claim: 'file' },
        ],
        roles: {
          reviewer: {
            default: { output: 'Reviewed.\nVERDICT: PASS\n- [Medium] the query helper needs a doc comment (src/sql.js:1)\n' },
            reviewers: {
              'security-sentinel': {
                rounds: [{ output: 'VERDICT: FAIL\n- [High] SQL injection: id is interpolated into the query (src/sql.js:1)\n' }],
                default: { output: 'VERDICT: PASS\n' },
              },
            },
          },
          'devils-advocate': reviewerSays('VERDICT: PASS\nNothing was missed.\n'),
        },
      },
      { codeReview: true, prdChecklist: false, gateDocCoverage: false },
    );
    expect(outcome).toMatchObject({ status: 'completion_promise_fulfilled', iteration: 2 });
    const prompts = builderPrompts(repo, runId);
    expect(prompts[1]).toContain('the code review did not pass');
    expect(prompts[1]).toContain('SQL injection');
    const review = snap.quality?.lastReview;
    expect(review).toMatchObject({ round: 2, result: 'pass' });
    expect(review?.reviewers.map((r) => r.reviewer)).toEqual(
      expect.arrayContaining(['requirements-verifier', 'architecture-strategist', 'maintainer-mergeability', 'security-sentinel']),
    );
    expect(review?.devilsAdvocate?.verdict).toBe('PASS');
    // 4 Medium findings (one per reviewer but security): 100 - 5 * n.
    expect(review?.mergeability).toBe(100 - 5 * review!.reviewers.filter((r) => r.counts.medium > 0).length);
    const calls = agentCalls(repo).filter((c) => c.role === 'reviewer');
    expect(calls.filter((c) => (c as { reviewer?: string }).reviewer === 'security-sentinel')).toHaveLength(2);
  });

  it('a review without verdict lines re-runs once, then refuses completion as a contract error, never a failing gate', async () => {
    const { outcome, snap, repo } = await run(
      {
        version: 1,
        iterations: [{ writes: { 'src/a.js': 'export const a = 1;\n' }, claim: 'file' }],
        default: { appends: { 'notes.txt': 'waiting\n' } },
        roles: { reviewer: reviewerSays('I looked at it and have opinions, but no verdict line.\n') },
      },
      { codeReview: true, prdChecklist: false, gateDocCoverage: false, maxIterations: 2 },
    );
    expect(outcome.status).toBe('max_iterations_reached');
    const review = snap.quality?.lastReview;
    expect(review).toMatchObject({ round: 1, result: 'inconclusive', rerun: true });
    // Every reviewer was asked twice (the first time and the one re-run), no more.
    const calls = agentCalls(repo).filter((c) => c.role === 'reviewer');
    expect(calls.length).toBe(review!.reviewers.length * 2);
    // The reviewers' format, not the work: no failure on the gate's streak, and the contract counts it.
    expect(snap.quality?.gates.find((g) => g.gate === 'code_review')).toMatchObject({ verdict: 'inconclusive' });
    expect(snap.quality?.failing.code_review ?? 0).toBe(0);
    expect(snap.contract).toMatchObject({ consecutive: 1, total: 1, last: { role: 'reviewer', answer: 'verdict' } });
    expect(snap.checks?.last).toMatchObject({ cause: 'contract' });
  });
});

describe('PRD checklist with held-out items', () => {
  const items = [
    { id: 'REQ-1', title: 'The CLI prints the sum of its arguments', priority: 'critical', verify: 'run it' },
    { id: 'REQ-2', title: 'Negative numbers are accepted', priority: 'high', verify: 'run it' },
    { id: 'REQ-3', title: 'Non-numbers give exit code 2', priority: 'medium', verify: 'run it' },
    { id: 'REQ-4', title: 'A --help flag explains the usage in plain words', priority: 'low', verify: 'run it' },
  ];
  const [heldOutId] = selectHeldOut(items.map((i) => ChecklistItemSchema.parse(i)));
  const heldOut = items.find((i) => i.id === heldOutId)!;

  it('a failing held-out item blocks while no builder prompt carries its text; a waiver lifts the block', async () => {
    const verdicts = items.map((i) => `ITEM ${i.id}: ${i.id === heldOutId ? 'FAIL - not implemented' : 'PASS - works'}`).join('\n');
    const { outcome, snap, repo, runId } = await run(
      {
        version: 1,
        iterations: [
          { writes: { 'sum.js': 'console.log(1);\n' }, claim: 'file' },
          { writes: { 'sum.js': 'console.log(2);\n' }, claim: 'file' },
        ],
        roles: {
          checklist: { default: { output: `Here is the checklist:\n\`\`\`json\n${JSON.stringify(items)}\n\`\`\`\n` } },
          'checklist-verifier': { default: { output: `${verdicts}\n` } },
        },
      },
      { codeReview: false, prdChecklist: true, gateDocCoverage: false },
      async (h) => {
        // The first claim is refused on the held-out item; a person waives it by its label.
        await waitForStatus(h, (s) => (s.quality?.checklist ?? []).some((i) => i.heldOut && i.status === 'failing'), 60_000);
        const masked = (await status(h)).quality?.checklist ?? [];
        const label = masked.find((i) => i.heldOut)?.id ?? '';
        expect(label).toBe('held-out-1');
        expect(JSON.stringify(masked)).not.toContain(heldOut.title);
        const ack = await h.executeUpdate(waiveUpdate, { args: [{ item: label, reason: 'next release', by: 'ana' }] });
        expect(ack.changed).toBe(true);
      },
    );
    expect(outcome).toMatchObject({ status: 'completion_promise_fulfilled', iteration: 2 });
    expect(snap.quality?.checklist).toHaveLength(4);
    // The builder never saw the held-out item, in prompts or anywhere under .vigil/.
    const prompts = builderPrompts(repo, runId);
    expect(prompts.length).toBe(2);
    for (const p of prompts) {
      expect(p).not.toContain(heldOut.title);
      expect(p).not.toMatch(/held.out/i);
    }
    expect(prompts[0]).toContain(items.find((i) => i.id !== heldOutId)!.title);
    expect(prompts[1]).toContain('the requirements checklist is not met');
    expect(everythingTheBuilderCanRead(repo)).not.toContain(heldOut.title);
  });

  it('without a waiver the held-out failure keeps blocking, across continue-as-new', async () => {
    const verdicts = items.map((i) => `ITEM ${i.id}: ${i.id === heldOutId ? 'FAIL - not implemented' : 'PASS - works'}`).join('\n');
    const { outcome, snap } = await run(
      {
        version: 1,
        iterations: [],
        default: { appends: { 'sum.js': '// more\n' }, claim: 'file' },
        roles: {
          checklist: { default: { output: JSON.stringify(items) } },
          'checklist-verifier': { default: { output: `${verdicts}\n` } },
        },
      },
      { codeReview: false, prdChecklist: true, gateDocCoverage: false, maxIterations: 3, continueAsNewEvery: 1 },
    );
    expect(outcome.status).toBe('max_iterations_reached');
    expect(snap.generations).toBeGreaterThanOrEqual(2);
    expect(snap.quality?.gates.find((g) => g.gate === 'checklist')).toMatchObject({ verdict: 'fail', iteration: 3 });
    // The same single item is held out in every generation: chosen once, carried in the state.
    expect(snap.quality?.checklist?.filter((i) => i.heldOut).map((i) => [i.id, i.status])).toEqual([['held-out-1', 'failing']]);
    expect(snap.quality?.checklist?.filter((i) => !i.heldOut).map((i) => i.id)).toEqual(
      items.filter((i) => i.id !== heldOutId).map((i) => i.id),
    );
  });

  it('an OpenAPI file the PRD names adds an item per operation to the extracted checklist; a broken one is said, with the default knobs', async () => {
    const repo = makeRepo({
      files: {
        'README.md': '# pets\n',
        'package.json': '{ "name": "pets", "version": "1.0.0" }\n',
        'api/admin.graphql': 'type Query {\n  pets: [String\n',
        'PRD.md': '# Pets\n\nImplement the API described in `api/openapi.yaml` and `api/admin.graphql`; keep `package.json`.\n',
        'api/openapi.yaml':
          'openapi: 3.0.3\ninfo: { title: Pets, version: "1" }\npaths:\n  /pets:\n    get:\n      summary: List the pets\n     ' +
          ' responses: { "200": { description: ok } }\n    post:\n      responses: { "201": { description: created } }\n',
      },
    });
    const file = writeScenario(repo, {
      version: 1,
      iterations: [],
      default: { sleepMs: 300, appends: { 'x.txt': 'x\n' } },
      roles: { checklist: { default: { output: JSON.stringify([items[0]]) } } },
    });
    const tq = uniqueId('api-spec');
    const worker = await makeWorker(env, tq);
    await worker.runUntil(async () => {
      const h = await startRun(env, tq, { ...runInput(repo, file), prdPath: path.join(repo, 'PRD.md') }, uniqueId('api-spec'));
      const s = await waitForStatus(h, (x) => (x.quality?.checklist?.length ?? 0) > 0, 60_000);
      expect(s.quality?.checklist?.map((i) => [i.id, i.priority, i.title])).toEqual([
        ['REQ-1', 'critical', items[0]?.title],
        ['API-1', 'high', 'GET /pets works as api/openapi.yaml declares: List the pets'],
        ['API-2', 'high', 'POST /pets works as api/openapi.yaml declares'],
      ]);
      // The broken schema is said beside the checklist; the package.json the PRD also names is no API description.
      expect(s.quality?.checklistProblem).toMatch(
        /^api\/admin\.graphql, named by the PRD, is not a readable API description \(GraphQL: Syntax Error: .*\): its operations are not in the checklist$/,
      );
      expect(s.quality?.checklistProblem).not.toMatch(/package\.json/);
      await h.executeUpdate(stopUpdate, { args: [{ by: 'test' }] });
      await h.result();
    });
  });

  it('a waiver of an unknown item is refused with a clear error', async () => {
    await run(
      {
        version: 1,
        iterations: [],
        default: { sleepMs: 300, appends: { 'x.txt': 'x\n' } },
        roles: { checklist: { default: { output: JSON.stringify(items) } } },
      },
      { codeReview: false, prdChecklist: true, maxIterations: 50 },
      async (h) => {
        await waitForStatus(h, (s) => (s.quality?.checklist?.length ?? 0) === 4, 60_000);
        const err = await h.executeUpdate(waiveUpdate, { args: [{ item: 'REQ-99' }] }).catch((e: unknown) => e);
        expect(err).toBeInstanceOf(WorkflowUpdateFailedError);
        expect((err as WorkflowUpdateFailedError).cause?.message).toMatch(/^waive: .*REQ-99/);
        await h.executeUpdate(stopUpdate, { args: [{ by: 'test' }] });
      },
    );
  });
});
