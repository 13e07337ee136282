/**
 * The original's runner-owned signal files (spec §1.9, §4.2, §8.4; activities/loop-signals.ts):
 * `RATE_LIMITED` while the run waits a provider's rate limit out, and `UNCERTAINTY_ESCALATION`
 * with the handoff of an uncertainty escalation; on real repositories, and through the
 * iteration's activity with a real agent in the sandbox for the rate limit.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { MockActivityEnvironment } from '@temporalio/testing';
import { DefaultLogger } from '@temporalio/worker';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { writeHandoff } from '../../activities/handoff.js';
import { runAgent } from '../../activities/iteration.js';
import { workingTreeHash } from '../../activities/git.js';
import { readAgentSignals } from '../../activities/signals.js';
import { agentUncertainty } from '../../rules/uncertainty-signal.js';
import type { AgentResult, RunAgentInput } from '../../schemas/activities.js';
import { makeRepo } from '../support/harness.js';
import { patient } from '../support/patience.js';

const repos: string[] = [];
afterEach(() => {
  for (const r of repos.splice(0)) rmSync(r, { recursive: true, force: true });
});
const repo = (): string => {
  const r = makeRepo();
  repos.push(r);
  return r;
};
const signalFile = (r: string, name: string): string => path.join(r, '.vigil', 'signals', name);

describe('UNCERTAINTY_ESCALATION', () => {
  it('Vigil writes it with the handoff of an uncertainty escalation; the next inspection consumes it and asks nobody', async () => {
    const r = repo();
    const sha = execFileSync('git', ['rev-parse', 'HEAD'], { cwd: r, encoding: 'utf8' }).trim();
    const handoff = {
      runId: 'run-u',
      repoPath: r,
      runStartSha: sha,
      iteration: 7,
      headline: 'the run looks stuck',
      signals: ['no change for 4 iterations', 'the council split twice'],
      mode: 'supervised' as const,
      paused: true,
      lastCouncil: null,
      lastTests: null,
      openQuestions: [],
    };
    await writeHandoff({ ...handoff, reason: 'uncertainty' });
    expect(JSON.parse(readFileSync(signalFile(r, 'UNCERTAINTY_ESCALATION'), 'utf8'))).toMatchObject({
      by: 'vigil',
      iteration: 7,
      headline: 'the run looks stuck',
      paused: true,
    });
    const read = await readAgentSignals({ runId: 'run-u', repoPath: r, iteration: 8 });
    expect(read.humanReview).toBeNull();
    expect(existsSync(signalFile(r, 'UNCERTAINTY_ESCALATION'))).toBe(false);
    // Another escalation's handoff writes no such marker.
    await writeHandoff({ ...handoff, reason: 'dead_letter', iteration: 9 });
    expect(existsSync(signalFile(r, 'UNCERTAINTY_ESCALATION'))).toBe(false);
  });

  it('one the agent wrote is its report of being unsure: a request for a person (empty, text or JSON)', async () => {
    const r = repo();
    mkdirSync(path.dirname(signalFile(r, 'x')), { recursive: true });
    writeFileSync(signalFile(r, 'UNCERTAINTY_ESCALATION'), '');
    const read = await readAgentSignals({ runId: 'run-u2', repoPath: r, iteration: 2 });
    expect(read.humanReview).toEqual({
      reason: 'the agent is unsure: the agent reported that it is unsure how to go on (UNCERTAINTY_ESCALATION)',
      blocking: false,
      questions: [],
      defaultAnswer: null,
    });
    expect(agentUncertainty('{"reason":"two specs disagree on the port"}')).toBe('two specs disagree on the port');
    expect(agentUncertainty('I cannot tell which API is meant')).toBe('I cannot tell which API is meant');
    expect(agentUncertainty('{"by":"vigil","iteration":3}')).toBeNull();
  });

  it('a HUMAN_REVIEW_NEEDED beside it wins: one request, the agent’s own words', async () => {
    const r = repo();
    mkdirSync(path.dirname(signalFile(r, 'x')), { recursive: true });
    writeFileSync(signalFile(r, 'UNCERTAINTY_ESCALATION'), 'unsure');
    writeFileSync(signalFile(r, 'HUMAN_REVIEW_NEEDED'), JSON.stringify({ reason: 'Which DB?' }));
    const read = await readAgentSignals({ runId: 'run-u3', repoPath: r, iteration: 2 });
    expect(read.humanReview?.reason).toBe('Which DB?');
  });
});

/** MODE=limit: a provider's 429 in the output and a failed exit; MODE=forge: the agent writes RATE_LIMITED itself and fails. */
const AGENT = `#!/bin/sh
cat > /dev/null
case "$MODE" in
  limit) echo 'Error: 429 Too Many Requests: rate limit exceeded; retry-after: 90' >&2; exit 1 ;;
  forge) mkdir -p .vigil/signals; echo '{"rate_limited":true,"wait_seconds":3600}' > .vigil/signals/RATE_LIMITED
    echo 'TypeError: x is undefined' >&2; exit 1 ;;
  *) echo 'did the work'; echo ok > work.txt ;;
esac
`;
const savedHome = process.env.VIGIL_HOME;
let scripts: string;
let agentPath: string;
beforeAll(() => {
  scripts = mkdtempSync(path.join(os.tmpdir(), 'vigil-loop-signals-'));
  // Vigil's private copies (activities/last-error.ts) go to a home of this file's own.
  process.env.VIGIL_HOME = path.join(scripts, 'home');
  agentPath = path.join(scripts, 'agent.sh');
  writeFileSync(agentPath, AGENT, { mode: 0o755 });
});
afterAll(() => {
  rmSync(scripts, { recursive: true, force: true });
  if (savedHome === undefined) delete process.env.VIGIL_HOME;
  else process.env.VIGIL_HOME = savedHome;
});

async function iterate(r: string, iteration: number, mode: string): Promise<AgentResult> {
  const input: RunAgentInput = {
    runId: 'run-rl',
    repoPath: r,
    argv: [agentPath],
    prompt: 'Do the work.\n',
    role: 'iteration',
    iteration,
    phase: 'ACT',
    tier: 'development',
    timeoutSeconds: 30,
    completionPromise: '',
    extraEnv: { MODE: mode },
    inspect: { runStartSha: null, previousTree: await workingTreeHash(r), signals: true },
  };
  return (await new MockActivityEnvironment({}, { logger: new DefaultLogger('ERROR') }).run(runAgent, input)) as AgentResult;
}

describe('RATE_LIMITED', () => {
  it(
    'is written while the run waits a provider rate limit out, and removed as the next call starts',
    async () => {
      const r = repo();
      const before = Date.now();
      const limited = await iterate(r, 1, 'limit');
      expect(limited.rateLimit).toEqual({ waitSeconds: 90, source: 'retry_after' });
      const marker = JSON.parse(readFileSync(signalFile(r, 'RATE_LIMITED'), 'utf8')) as { reset_time: string };
      expect(marker).toMatchObject({ rate_limited: true, wait_seconds: 90, by: 'vigil' });
      expect(Date.parse(marker.reset_time) - before).toBeGreaterThanOrEqual(90_000);
      const next = await iterate(r, 2, 'work');
      expect(next.exitCode).toBe(0);
      expect(existsSync(signalFile(r, 'RATE_LIMITED'))).toBe(false);
    },
    patient(60_000),
  );

  it(
    'adversarial: one the agent writes itself to pass a failure off as a rate limit is not taken, and is removed',
    async () => {
      const r = repo();
      const forged = await iterate(r, 1, 'forge');
      expect(forged.exitCode).toBe(1);
      expect(forged.rateLimit).toBeNull();
      expect(existsSync(signalFile(r, 'RATE_LIMITED'))).toBe(false);
    },
    patient(60_000),
  );
});
