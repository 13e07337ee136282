/**
 * Who may make a worker execute commands. Anyone who reaches the Temporal port can start a
 * `vigilRun`; two worker-side guards make that harmless:
 *
 * - **Signed runs** (`vigil worker --require-signed-runs`, or VIGIL_REQUIRE_SIGNED_RUNS=1): the
 *   installation's run secret (`$VIGIL_HOME/run-secret`, or the file in VIGIL_RUN_SECRET_FILE;
 *   created private on first use) signs what a run may execute — agent command, provider,
 *   test command, repository, run id — when the operator's CLI starts it. The worker checks every
 *   agent call and test run against the signed claims and refuses anything else.
 * - **An allow-list** (VIGIL_AGENT_ALLOW, comma-separated): the worker refuses to run an agent
 *   binary not on it. The binary is found the way the call will execute it — a path against the
 *   repository (the call's working directory), a bare name on PATH (relative PATH entries against
 *   the repository too) — and its real path (links followed) is what is compared. An entry is an
 *   absolute path (its real path), a bare name (the real path that name has on the worker's PATH,
 *   absolute entries only), or `sha256:<64 hex digits>` (a binary with that content). So with
 *   `claude` allowed, `/any/path/claude` or a `claude` planted in the repository does not run.
 *   (The file is checked just before it starts: whoever can replace an allowed binary between the
 *   two can run their own; a digest entry pins content, a path entry does not.)
 */
import { createHash, createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import { accessSync, constants, existsSync, mkdirSync, readFileSync, realpathSync, statSync } from 'node:fs';
import path from 'node:path';
import { ApplicationFailure } from '@temporalio/common';
import { FAILURE_TYPES } from '../schemas/activities.js';
import { canonicalClaims, claimsCoverRun, type RunAuthorization, type RunClaims } from '../schemas/authorization.js';
import { vigilHome } from '../workers/paths.js';
import { isProviderName, PROVIDERS } from './providers/index.js';
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

// ---------------------------------------------------------------------------------------------
// The agent allow-list

/** The search path execvp uses when PATH is not set. */
const DEFAULT_PATH = '/usr/bin:/bin';
const DIGEST_ENTRY = /^sha256:([0-9a-f]{64})$/i;

function isExecutableFile(p: string): boolean {
  try {
    if (!statSync(p).isFile()) return false;
    accessSync(p, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

/**
 * The real path of the file `bin` names when started with working directory `cwd` and `PATH`:
 * a name with a slash is taken from `cwd`; a bare name is looked up in PATH's folders in order
 * (an empty or relative one from `cwd`, unless `absoluteOnly`). Null when there is none.
 */
export function resolveExecutable(bin: string, cwd: string, envPath: string | undefined, absoluteOnly = false): string | null {
  const candidates = bin.includes('/')
    ? [path.resolve(cwd, bin)]
    : (envPath ?? DEFAULT_PATH)
        .split(path.delimiter)
        .filter((dir) => !absoluteOnly || path.isAbsolute(dir))
        .map((dir) => path.resolve(cwd, dir || '.', bin));
  for (const c of candidates) {
    if (!isExecutableFile(c)) continue;
    try {
      return realpathSync(c);
    } catch {
      /* gone meanwhile: try the next */
    }
  }
  return null;
}

const digestCache = new Map<string, { stamp: string; digest: string }>();

/** The sha256 of a file's content (cached while its size, time and inode stay the same). */
function sha256Of(file: string): string {
  const st = statSync(file);
  const stamp = `${st.size}:${st.mtimeMs}:${st.ino}:${st.ctimeMs}`;
  const cached = digestCache.get(file);
  if (cached?.stamp === stamp) return cached.digest;
  const digest = createHash('sha256').update(readFileSync(file)).digest('hex');
  digestCache.set(file, { stamp, digest });
  return digest;
}

/**
 * Whether the agent binary `bin`, started in `cwd` with `env`'s PATH, is on the allow-list
 * `entries`; the reason when it is not.
 */
export function checkAgentAllowed(bin: string, entries: readonly string[], cwd: string, env: NodeJS.ProcessEnv = process.env): { ok: true; path: string } | { ok: false; reason: string } {
  const listed = `VIGIL_AGENT_ALLOW=${entries.join(',')}`;
  const invalid = entries.filter((e) => !DIGEST_ENTRY.test(e) && e.includes('/') && !path.isAbsolute(e));
  if (invalid.length > 0) {
    return { ok: false, reason: `this worker's allow-list has entries that are neither an absolute path, a bare name nor sha256:<hex>: ${invalid.join(', ')} (${listed})` };
  }
  const real = resolveExecutable(bin, cwd, env.PATH);
  if (real === null) return { ok: false, reason: `the agent binary "${bin}" is not an executable file ${bin.includes('/') ? `(from ${cwd})` : 'on PATH'}, so it cannot be checked against this worker's allow-list (${listed})` };
  const paths = new Set<string>();
  const digests = new Set<string>();
  for (const e of entries) {
    const digest = DIGEST_ENTRY.exec(e)?.[1];
    if (digest) digests.add(digest.toLowerCase());
    else {
      const p = path.isAbsolute(e) ? resolveExecutable(e, '/', undefined) : resolveExecutable(e, '/', env.PATH, true);
      if (p) paths.add(p);
    }
  }
  if (paths.has(real) || (digests.size > 0 && digests.has(sha256Of(real)))) return { ok: true, path: real };
  return { ok: false, reason: `the agent binary "${bin}" (${real}) is not on this worker's allow-list (${listed}; entries match the real path a name has on the worker's PATH, an absolute path, or sha256:<hex> of the file)` };
}

/** Throws (non-retryable) when this worker must not execute the request; returns otherwise. */
export function authorizeExecution(req: ExecutionRequest, auth: RunAuthorization | null | undefined, env: NodeJS.ProcessEnv = process.env): void {
  const allow = (env.VIGIL_AGENT_ALLOW ?? '').split(',').map((s) => s.trim()).filter(Boolean);
  if (allow.length > 0 && 'agent' in req.kind) {
    const { provider, argv } = req.kind.agent;
    // What the call starts: its argv, else the provider preset's binary (activities/provider-call.ts).
    const bin = argv[0] ?? (isProviderName(provider) ? PROVIDERS[provider].binary : null) ?? provider;
    const verdict = checkAgentAllowed(bin, allow, req.repoPath, env);
    if (!verdict.ok) refuse(verdict.reason);
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
