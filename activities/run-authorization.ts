/**
 * Who may make a worker execute commands. Anyone who reaches the Temporal port can start a
 * `vigilRun`; two worker-side guards make that harmless:
 *
 * - **Signed runs** (`vigil worker --require-signed-runs`, or VIGIL_REQUIRE_SIGNED_RUNS=1): the
 *   installation's run secret (`$VIGIL_HOME/run-secret`, or the file in VIGIL_RUN_SECRET_FILE;
 *   created private on first use) signs what a run may execute — agent command, provider,
 *   test command, repository, run id — when the operator's CLI starts it. The worker checks every
 *   agent call and test run against the signed claims and refuses anything else.
 * - **An allow-list** (VIGIL_AGENT_ALLOW: comma-separated binaries, absolute paths or names):
 *   the worker refuses to run an agent binary not on it.
 */
import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { ApplicationFailure } from '@temporalio/common';
import { FAILURE_TYPES } from '../schemas/activities.js';
import { canonicalClaims, claimsCoverRun, type RunAuthorization, type RunClaims } from '../schemas/authorization.js';
import { vigilHome } from '../workers/paths.js';
import { writePrivateFile } from './safe-files.js';

export function runSecretPath(env: NodeJS.ProcessEnv = process.env): string {
  return env.VIGIL_RUN_SECRET_FILE?.trim() || path.join(vigilHome(env), 'run-secret');
}

/** The installation's secret, or null when none exists yet (and `create` is false). */
export function runSecret(env: NodeJS.ProcessEnv = process.env, create = false): Buffer | null {
  const file = runSecretPath(env);
  if (existsSync(file)) {
    const text = readFileSync(file, 'utf8').trim();
    if (!/^[0-9a-f]{64}$/.test(text)) throw new Error(`${file} is not a run secret (64 hex characters); delete it to make a new one`);
    return Buffer.from(text, 'hex');
  }
  if (!create) return null;
  mkdirSync(path.dirname(file), { recursive: true, mode: 0o700 });
  writePrivateFile(file, `${randomBytes(32).toString('hex')}\n`);
  return runSecret(env, false);
}

export function signClaims(secret: Buffer, claims: RunClaims): string {
  return createHmac('sha256', secret).update(canonicalClaims(claims)).digest('hex');
}

export function signRun(secret: Buffer, claims: RunClaims): RunAuthorization {
  return { claims, signature: signClaims(secret, claims) };
}

const refuse = (message: string): never => {
  throw ApplicationFailure.create({ type: FAILURE_TYPES.agentNotRunnable, nonRetryable: true, message });
};

export interface ExecutionRequest {
  runId: string;
  repoPath: string;
  /** The agent call's provider and argv, or the test command. */
  kind: { agent: { provider: string; argv: string[] } } | { tests: string };
}

/** Throws (non-retryable) when this worker must not execute the request; returns otherwise. */
export function authorizeExecution(req: ExecutionRequest, auth: RunAuthorization | null | undefined, env: NodeJS.ProcessEnv = process.env): void {
  const allow = (env.VIGIL_AGENT_ALLOW ?? '').split(',').map((s) => s.trim()).filter(Boolean);
  if (allow.length > 0 && 'agent' in req.kind) {
    const bin = req.kind.agent.argv[0] ?? req.kind.agent.provider;
    if (!allow.includes(bin) && !allow.includes(path.basename(bin))) {
      refuse(`the agent binary "${bin}" is not on this worker's allow-list (VIGIL_AGENT_ALLOW=${allow.join(',')})`);
    }
  }
  if (!/^(1|true|yes)$/i.test(env.VIGIL_REQUIRE_SIGNED_RUNS ?? '')) return;
  const secret = runSecret(env, true) as Buffer;
  if (!auth) return refuse('this worker runs only runs signed by its installation (started with `vigil start` where the run secret is readable); this one is unsigned');
  const expected = Buffer.from(signClaims(secret, auth.claims), 'hex');
  const given = Buffer.from(auth.signature, 'hex');
  if (given.length !== expected.length || !timingSafeEqual(given, expected)) return refuse('the run\'s signature does not match this installation\'s run secret');
  const c = auth.claims;
  if (!claimsCoverRun(c, req.runId) || c.repoPath !== req.repoPath) return refuse(`the signature covers run ${c.workflowId} in ${c.repoPath}, not this one`);
  if ('tests' in req.kind) {
    if (req.kind.tests !== c.testCommand) refuse('the test command is not the one the run was signed for');
    return;
  }
  const { provider, argv } = req.kind.agent;
  const signedArgv = JSON.stringify(argv) === JSON.stringify(c.agentCommand) || argv.length === 0;
  const presetOnly = argv.length === 0 && (provider === c.councilProvider || (c.failover ?? []).includes(provider));
  if (!(provider === c.provider && signedArgv) && !presetOnly) {
    refuse(`the agent command (${provider} ${argv.join(' ')}) is not the one the run was signed for`);
  }
}
