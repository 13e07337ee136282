/**
 * Owns the real-CLI suite's tests, defined once and run per CLI (one spec file each, so the two
 * forks run two CLIs at a time): one complete Vigil run through the real CLI against the local
 * model server (tests/support/model-server) — builder, checklist extraction, code reviewers and
 * the review's devil's advocate, council members and the council's devil's advocate, checklist
 * verifier — asserting the outcome, cost and tokens, the session and what status says; then each
 * API fault the server can play, and what Vigil makes of it:
 *   - 429: a rate-limit wait, no failure counted;
 *   - 401: the run pauses for the credentials;
 *   - overloaded (529/503) and 500: a failed iteration the provider's circuit breaker counts
 *     (the run waits for the provider), never a successful one, after a bounded number of the
 *     CLI's own retries where the preset or the CLI's configuration bounds them;
 *   - a hung stream (claude and codex; presets that read whether the model said anything):
 *     the call times out silently, a failure the breaker counts, never a success.
 * A CLI that is not installed (scripts/install-real-clis.sh) has its tests reported as skipped.
 *
 * Each CLI has two spec files, one per part: `<cli>.spec.ts` (the complete run) and
 * `<cli>-faults.spec.ts` (the faults), so that the faults, which mostly wait out the CLIs' own
 * retries (aider and opencode keep retrying a refused request for a minute or more), run beside
 * another CLI's complete run instead of after it (tests/real-clis/vitest.config.ts: three forks).
 * What each CLI is expected to do is said once, in tests/real-clis/expectations.ts.
 */
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { WorkflowHandle } from '@temporalio/client';
import type { Worker } from '@temporalio/worker';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { Knobs } from '../../schemas/knobs.js';
import type { StatusSnapshot } from '../../schemas/status.js';
import { statusLine } from '../../cli/follow.js';
import { stopUpdate } from '../../workflows/messages.js';
import { breakerStateQuery, breakerWorkflowId, resetUpdate } from '../../workflows/provider-breaker-messages.js';
import {
  createTestEnv,
  git,
  makeRepo,
  makeWorker,
  runInput,
  startRun,
  status,
  uniqueId,
  waitForStatus,
  writeScenario,
  type TestEnv,
} from '../support/harness.js';
import { BUILDER_FILE, type ScriptRole } from '../support/model-server/script.js';
import { startModelServer, type ModelServer } from '../support/model-server/server.js';
import { cliEnvironment, installedBinary, readPins, type RealCliName } from './clis.js';
import { patient } from '../support/patience.js';

export interface CliExpectations {
  /** Vigil's tokens equal the server's exactly (false: the CLI rounds them, e.g. aider's `2.7k sent`). */
  exactTokens: boolean;
  /** The CLI's usage report counts its own side requests (session titles) too. */
  countsSideRequests: boolean;
  /** The CLI reports a session or thread id. */
  reportsSession: boolean;
  /** The CLI reports what the call cost. */
  reportsCost: boolean;
  /** How long one faulty call may take before Vigil hears of it (the CLI's own retries). */
  faultSeconds: number;
  /**
   * At most this many requests of one call reach the server when every one is refused (529): the
   * CLI's own retries, bounded by the preset (claude: CLAUDE_CODE_MAX_RETRIES) or by its provider
   * configuration (codex: request_max_retries in tests/real-clis/clis.ts); null: no bound is set.
   */
  faultRequests: number | null;
  /**
   * Run the hung-stream case: the preset reads from the output whether the model said anything
   * (ParsedOutput.modelOutput), so a call that times out on a hung stream is a provider failure.
   */
  readsHangs: boolean;
  /** Model roles the full run must have sent through the CLI. */
  roles: ScriptRole[];
  /**
   * The CLI runs declared sub-agents (claude `--agents` with `--json-schema`): the full run's
   * council round and code review each go out as one call whose main agent runs every member as
   * an agent of its own, and the records say so.
   */
  batchesRounds: boolean;
  /**
   * Faults Vigil does not yet handle for this CLI, and why: their tests are expected to fail
   * (vitest `it.fails`), and start failing, as they should, once Vigil handles the fault.
   */
  knownGaps: Partial<Record<'rate-limit' | 'auth', string>>;
}

const ALL_ROLES: ScriptRole[] = [
  'checklist',
  'iteration',
  'reviewer',
  'review-devils-advocate',
  'council',
  'council-devils-advocate',
  'checklist-verifier',
];
export const DEFAULT_EXPECTATIONS: CliExpectations = {
  exactTokens: true,
  countsSideRequests: true,
  reportsSession: true,
  reportsCost: true,
  faultSeconds: 60,
  faultRequests: null,
  readsHangs: false,
  roles: ALL_ROLES,
  batchesRounds: false,
  knownGaps: {},
};

/** `it`, or `it.fails` with the gap in the title. */
function testFor(title: string, gap: string | undefined): [string, typeof it | typeof it.fails] {
  return gap === undefined ? [title, it] : [`${title} (known gap, expected to fail: ${gap})`, it.fails];
}

/** Every reviewing role on, sized to a few calls each. */
const FULL_RUN: Partial<Knobs> = {
  councilEnabled: true,
  councilMinIterations: 1,
  councilSize: 2,
  councilEarlyCheck: false,
  qualityGates: true,
  gateDocCoverage: false,
  gateStaticAnalysis: false,
  gateTests: false,
  codeReview: true,
  reviewComplexity: 'simple',
  reviewMaxReviewers: 2,
  reviewDevilsAdvocate: true,
  prdChecklist: true,
  maxIterations: 3,
  providerBreaker: false,
  tierLadder: false,
  uncertaintyEscalation: false,
  agentTimeoutSeconds: 300,
  councilMemberTimeoutSeconds: 300,
  heartbeatTimeoutSeconds: 30,
  notifyDesktop: false,
};

const noScenario = writeScenario('', { version: 1, iterations: [] });

async function stop(handle: WorkflowHandle): Promise<void> {
  await handle.executeUpdate(stopUpdate, { args: [{ by: 'test' }] }).catch(() => undefined);
  await handle.result().catch(() => undefined);
}

/** Iterations were recorded, and none of them succeeded (a fault is never a successful iteration). */
function failedOnly(s: StatusSnapshot): boolean {
  return s.recentIterations.length > 0 && s.recentIterations.every((r) => r.exitCode !== 0);
}

/** The end of each iteration's transcript (or log), for a failure message. */
function iterationTails(repo: string): string {
  try {
    const dir = runFolder(repo);
    return readdirSync(dir)
      .filter((f) => /^iteration-\d+\.(?:transcript\.md|log)$/.test(f))
      .map((f) => `--- ${f}\n${readFileSync(path.join(dir, f), 'utf8').slice(-1500)}`)
      .join('\n');
  } catch {
    return '(no run folder)';
  }
}

const say = (name: string, what: string, s: StatusSnapshot): void => {
  process.stderr.write(`${name} ${what}: status says "${statusLine(s)}"\n`);
};

function runFolder(repo: string): string {
  const runs = path.join(repo, '.vigil', 'runs');
  return path.join(runs, readdirSync(runs)[0] as string);
}

/** The suite's two parts: the complete run (and the unmet checklist of a batching CLI), or the API faults. */
export type SuitePart = 'run' | 'faults';

export function realCliSuite(name: RealCliName, part: SuitePart, expect_: Partial<CliExpectations> = {}): void {
  const x = { ...DEFAULT_EXPECTATIONS, ...expect_ };
  const pin = readPins().find((p) => p.provider === name);
  const binary = pin ? installedBinary(pin) : null;
  const title = `${name} ${pin?.version ?? '(not pinned)'}, the real CLI${part === 'faults' ? ': API faults' : ''}`;

  describe.skipIf(binary === null)(title, () => {
    let env: TestEnv;
    let server: ModelServer;
    let worker: Worker;
    let running: Promise<void>;
    let tq: string;
    const bin = binary as string;

    beforeAll(async () => {
      const dir = mkdtempSync(path.join(os.tmpdir(), `vigil-real-${name}-`));
      server = await startModelServer({ logFile: path.join(dir, 'requests.jsonl') });
      // The worker runs in this process: the CLIs it starts inherit this environment.
      // The CLIs' HOME outside the temporary folder: codex refuses to set up its helper binaries
      // (apply_patch among them) under a temporary folder, and its edits then never run.
      const homes = path.join(process.env.XDG_CACHE_HOME || path.join(os.homedir(), '.cache'), 'vigil', 'real-cli-homes');
      mkdirSync(homes, { recursive: true });
      Object.assign(process.env, cliEnvironment(server.url, mkdtempSync(path.join(homes, `${name}-`))));
      process.stderr.write(`${name}: model server ${server.url}, requests logged to ${dir}/requests.jsonl\n`);
      env = await createTestEnv();
      tq = uniqueId(`real-${name}`);
      worker = await makeWorker(env, tq);
      running = worker.run();
    });
    afterAll(async () => {
      worker?.shutdown();
      await running?.catch(() => undefined);
      await server?.close();
      await env?.close();
    });
    afterEach(() => server.clearFaults());

    const knobs = (more: Partial<Knobs> = {}): Partial<Knobs> => ({ ...FULL_RUN, provider: name, agentCommand: [bin], ...more });

    if (part === 'run') completeRun();
    else faults();

    function completeRun(): void {
      it('a complete run: builder and every reviewing role through the CLI; outcome, cost, tokens, session, status', async () => {
        const repo = makeRepo();
        const gitignoreBefore = existsSync(path.join(repo, '.gitignore'));
        const handle = await startRun(env, tq, runInput(repo, noScenario, knobs()));
        const outcome = await handle.result();
        const s = await status(handle);
        const requests = server.requests().map((r) => `${r.role}:${r.status}`);
        const detail = `${JSON.stringify({ outcome, refusal: s.quality?.lastRefusal, checks: s.checks, requests })}\n${iterationTails(repo)}`;
        say(name, 'complete run', s);
        expect(outcome.status, detail).toBe('council_approved');
        expect(outcome.iteration, detail).toBe(1);

        // The builder wrote the file with the CLI's own tool.
        expect(readFileSync(path.join(repo, BUILDER_FILE), 'utf8')).toContain('written by the builder');
        // Every role went through the CLI to the model.
        const roles = new Set(server.requests().map((r) => r.role));
        for (const role of x.roles) expect([...roles], `role ${role}`).toContain(role);

        // No reviewing call touched the tree (a vote voided for it would say so), nothing of the CLI's in the repository.
        expect(s.council.verdicts.at(-1)?.result).toBe('APPROVED');
        for (const v of s.council.verdicts.at(-1)?.votes ?? []) expect(v.reason ?? '').not.toMatch(/vote void/);
        expect(s.quality?.lastReview?.result).toBe('pass');
        expect(s.quality?.checklist?.length ?? 0).toBeGreaterThan(0);
        expect(s.quality?.checklist?.every((i) => i.status === 'passing')).toBe(true);
        expect(statusLine(s)).toMatch(/^finished: council_approved \(exit 0\) — council approved at iteration 1/);
        expect(existsSync(path.join(repo, '.gitignore'))).toBe(gitignoreBefore);
        const untracked = git(repo, 'status', '--porcelain', '--untracked-files=all')
          .split('\n')
          .filter(Boolean)
          .map((l) => l.slice(3));
        expect(untracked.filter((f) => f !== BUILDER_FILE && !f.startsWith('.aider.tags.cache'))).toEqual([]);

        if (x.batchesRounds) {
          // One call for the council's two members and one for the two reviewers: each main agent ran
          // every member as a declared agent (its own conversation with the server, its member prompt
          // as its instructions) and answered with one structured document; as every member approved
          // (passed), each main agent then ran the round's devil's advocate, declared in the same call.
          const requests = server.requests();
          const count = (role: ScriptRole) => requests.filter((r) => r.role === role && r.fault === null).length;
          expect(count('council-batch'), detail).toBeGreaterThanOrEqual(2);
          expect(count('review-batch'), detail).toBeGreaterThanOrEqual(2);
          const verdict = s.council.verdicts.at(-1);
          const review = s.quality?.lastReview;
          // Each member and reviewer one conversation of its own, within the batched calls.
          expect(count('council'), detail).toBe(2);
          expect(count('reviewer'), detail).toBe(review?.reviewers.length);
          // The PRD checklist verifier rode in the council's call (run first by its main agent): no call of its own.
          expect(verdict?.batch, detail).toMatchObject({
            batched: true,
            members: 2,
            note: "one call for the checklist verifier, 2 members and the devil's advocate (claude --agents)",
          });
          expect(count('checklist-verifier'), detail).toBe(1);
          // Each devil's advocate one conversation within its round's call: no call of its own.
          expect(count('council-devils-advocate'), detail).toBe(1);
          expect(count('review-devils-advocate'), detail).toBe(1);
          expect(verdict?.devilsAdvocate, detail).toMatchObject({ triggered: true, recorded: 'APPROVE', flipped: false });
          expect(review?.devilsAdvocate?.verdict, detail).toBe('PASS');
          expect(s.quality?.checklist?.every((i) => i.status === 'passing')).toBe(true);
          expect(verdict?.votes.map((v) => v.recorded)).toEqual(['APPROVE', 'APPROVE']);
          expect(review?.batch, detail).toMatchObject({
            batched: true,
            members: review?.reviewers.length,
            note: `one call for ${review?.reviewers.length} members and the devil's advocate (claude --agents)`,
          });
          for (const v of verdict?.votes ?? [])
            expect(readFileSync(v.logPath, 'utf8')).toMatch(/^\[answered as agent vigil-council-member-\d-/);
        }

        // Cost and tokens: what the CLI reported of what the server answered.
        const served = server.tokens(undefined, x.countsSideRequests);
        const perRequest = server
          .requests()
          .map((r) => `${r.role}${r.fault ? `(${r.fault})` : ''}:${r.inputTokens}/${r.outputTokens}`)
          .join(' ');
        // A call per role, but the checklist verifier's and the devil's advocates' where they ride in the rounds' batched calls.
        expect(s.spend.calls).toBeGreaterThanOrEqual(x.roles.length - (x.batchesRounds ? 3 : 0));
        if (x.exactTokens) {
          expect(s.spend.inputTokens + (s.spend.cacheReadTokens ?? 0), perRequest).toBe(served.input);
          expect(s.spend.outputTokens, perRequest).toBe(served.output);
        } else {
          expect(s.spend.inputTokens).toBeGreaterThan(served.input * 0.9);
          expect(s.spend.inputTokens).toBeLessThan(served.input * 1.1);
        }
        if (x.reportsCost) expect(s.spend.usd).toBeGreaterThan(0);
        const it1 = s.recentIterations[0];
        expect(it1).toMatchObject({ iteration: 1, exitCode: 0, provider: name, claimed: true, changed: true });
        if (x.reportsCost) expect(it1?.costUsd).toBeGreaterThan(0);
        // The model recorded is the one the CLI used, as its requests to the server named it (no
        // model knob is set: the CLI's default, which only the CLI knows; OpenCode names it with
        // its provider, `anthropic/…`).
        expect([...new Set(server.requests().map((r) => r.model))]).toContain(it1?.model?.replace(/^[\w-]+\//, ''));

        // The session the CLI reported, in the iteration's transcript.
        const transcript = readFileSync(path.join(runFolder(repo), 'iteration-0001.transcript.md'), 'utf8');
        if (x.reportsSession) expect(transcript).toMatch(/\[\w+ (?:session|thread) [0-9a-zA-Z_-]{8,}/);
      });

      if (x.batchesRounds) {
        it("a claim whose checklist is not met is stopped inside the council's one call: the verifier ran first, no member was asked", async () => {
          server.failChecklist(1);
          const before = server.requests().length;
          const repo = makeRepo();
          const handle = await startRun(env, tq, runInput(repo, noScenario, knobs()));
          try {
            const s = await waitForStatus(handle, (v) => (v.checks?.total ?? 0) >= 1, 120_000);
            const requests = server.requests().slice(before);
            const detail = `${JSON.stringify({ checks: s.checks, requests: requests.map((r) => `${r.role}:${r.status}`) })}\n${iterationTails(repo)}`;
            say(name, 'unmet checklist', s);
            expect(s.checks?.last, detail).toMatchObject({ iteration: 1, approved: false, cause: 'checklist' });
            expect(s.council.rounds, detail).toBe(0);
            const count = (role: ScriptRole) => requests.filter((r) => r.role === role && r.fault === null).length;
            // The council's call ran: its main agent asked the verifier, read FAIL and returned without dispatching a member.
            expect(count('council-batch'), detail).toBeGreaterThanOrEqual(2);
            expect(count('checklist-verifier'), detail).toBe(1);
            expect(count('council'), detail).toBe(0);
            expect(
              s.quality?.checklist?.some((i) => i.status === 'failing'),
              detail,
            ).toBe(true);
            expect(s.quality?.lastRefusal, detail).toMatchObject({ iteration: 1, gates: ['checklist'] });
          } finally {
            await stop(handle);
          }
        });
      }
    }

    function faults(): void {
      const [rlTitle, rlTest] = testFor('429: the run waits out the rate limit and counts no failure', x.knownGaps['rate-limit']);
      rlTest(rlTitle, async () => {
        server.fail({ kind: 'rate-limit', retryAfterSeconds: 2, roles: ['iteration'] });
        const repo = makeRepo();
        const handle = await startRun(
          env,
          tq,
          runInput(repo, noScenario, knobs({ prdChecklist: false, codeReview: false, qualityGates: false })),
        );
        try {
          const s = await waitForStatus(handle, (v) => v.status === 'backing_off', x.faultSeconds * 1000 + 60_000);
          say(name, '429', s);
          expect(s.consecutiveFailures, iterationTails(repo)).toBe(0);
          expect(statusLine(s)).toMatch(new RegExp(`^rate limited by ${name} until \\S+`));
          expect(failedOnly(s)).toBe(true);
          expect(server.requests().some((r) => r.fault === 'rate-limit')).toBe(true);
        } finally {
          await stop(handle);
        }
      });

      const [authTitle, authTest] = testFor('401: the run pauses for the credentials', x.knownGaps.auth);
      authTest(authTitle, async () => {
        server.fail({ kind: 'auth', roles: ['iteration'] });
        const repo = makeRepo();
        const handle = await startRun(
          env,
          tq,
          runInput(repo, noScenario, knobs({ prdChecklist: false, codeReview: false, qualityGates: false })),
        );
        try {
          const s = await waitForStatus(handle, (v) => v.paused, x.faultSeconds * 1000 + 60_000);
          say(name, '401', s);
          expect(s.pause?.reason).toMatch(new RegExp(`^authentication failed for provider ${name}: `));
          expect(statusLine(s)).toMatch(new RegExp(`^paused by vigil: authentication failed for provider ${name}: `));
          expect(s.consecutiveFailures).toBe(0);
          expect(failedOnly(s)).toBe(true);
        } finally {
          await stop(handle);
        }
      });

      for (const kind of ['overloaded', 'server-error'] as const) {
        it(
          `${kind === 'overloaded' ? '529/503 overloaded' : '500'}: a failed iteration the provider breaker counts, the run ` +
            `waits for the provider`,
          async () => {
            server.fail({ kind, roles: ['iteration'] });
            const repo = makeRepo();
            const handle = await startRun(
              env,
              tq,
              runInput(
                repo,
                noScenario,
                knobs({
                  prdChecklist: false,
                  codeReview: false,
                  qualityGates: false,
                  providerBreaker: true,
                  breakerFailures: 1,
                  breakerCooldownSeconds: 600,
                  baseWaitSeconds: 1,
                }),
              ),
            );
            const breaker = env.client.workflow.getHandle(breakerWorkflowId(name));
            const started = Date.now();
            try {
              const s: StatusSnapshot = await waitForStatus(
                handle,
                (v) => v.status === 'waiting_for_provider',
                x.faultSeconds * 1000 + 60_000,
              );
              say(name, kind, s);
              const refused = server.requests().filter((r) => r.fault === kind && r.role === 'iteration').length;
              process.stderr.write(
                `${name} ${kind}: ${refused} refused request(s) of the iteration, the run waiting for the provider after ` +
                  `${((Date.now() - started) / 1000).toFixed(1)} s\n`,
              );
              // The CLI's own retries are bounded: Vigil hears of the outage after a few requests, not ten.
              if (x.faultRequests !== null) expect(refused).toBeLessThanOrEqual(x.faultRequests);
              expect(s.providerWait?.provider).toBe(name);
              expect(s.consecutiveFailures).toBe(1);
              expect(s.providerWait?.reason).toBeTruthy();
              expect(statusLine(s)).toMatch(new RegExp(`^waiting for ${name} until \\S+`));
              expect(failedOnly(s)).toBe(true);
              const view = await breaker.query(breakerStateQuery);
              expect(JSON.stringify(view)).toMatch(/API failure/);
            } finally {
              await stop(handle);
              await breaker.executeUpdate(resetUpdate, { args: [{ by: 'test', reason: 'next test' }] }).catch(() => undefined);
            }
          },
        );
      }

      // Only for CLIs whose preset reads whether the model said anything (the others cannot tell a hang).
      if (x.readsHangs) {
        it('a hung stream: the call times out without a word from the model, a failure the provider breaker counts', async () => {
          server.fail({ kind: 'hang', roles: ['iteration'] });
          const repo = makeRepo();
          // agentTimeoutSeconds shortened (from 7200) to keep the suite in budget: the hang lasts until
          // Vigil's timeout, shorter than the CLIs' own idle timeouts (codex's 120 s in clis.ts, claude's
          // minutes), and long enough for a CLI to start and send its request on a loaded machine (15 s was not).
          const handle = await startRun(
            env,
            tq,
            runInput(
              repo,
              noScenario,
              knobs({
                prdChecklist: false,
                codeReview: false,
                qualityGates: false,
                providerBreaker: true,
                breakerFailures: 1,
                breakerCooldownSeconds: 600,
                baseWaitSeconds: 1,
                agentTimeoutSeconds: patient(10),
              }),
            ),
          );
          const breaker = env.client.workflow.getHandle(breakerWorkflowId(name));
          try {
            const s: StatusSnapshot = await waitForStatus(handle, (v) => v.status === 'waiting_for_provider', 120_000);
            say(name, 'hung stream', s);
            expect(server.requests().some((r) => r.fault === 'hang' && r.role === 'iteration')).toBe(true);
            expect(s.recentIterations[0], iterationTails(repo)).toMatchObject({ exitCode: 124 });
            expect(s.consecutiveFailures).toBe(1);
            expect(s.providerWait?.provider).toBe(name);
            expect(statusLine(s)).toMatch(new RegExp(`^waiting for ${name} until \\S+`));
            // Status says why: this run's own call heard nothing from the model.
            expect(statusLine(s)).toContain("this run's last call to it: no answer from the model before the call timed out");
            const view = await breaker.query(breakerStateQuery);
            expect(JSON.stringify(view)).toMatch(/no answer from the model before the call timed out/);
          } finally {
            await stop(handle);
            await breaker.executeUpdate(resetUpdate, { args: [{ by: 'test', reason: 'next test' }] }).catch(() => undefined);
          }
        });
      }
    }
  });
}
