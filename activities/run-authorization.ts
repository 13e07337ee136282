/**
 * Who may make a worker execute commands. Anyone who reaches the Temporal port can start a
 * `vigilRun`; two worker-side guards make that harmless:
 *
 * - **Signed runs** (`vigil worker --require-signed-runs`, or VIGIL_REQUIRE_SIGNED_RUNS=1): the
 *   installation's run secret (`$VIGIL_HOME/run-secret`, or the file in VIGIL_RUN_SECRET_FILE;
 *   created private on first use) signs what a run may execute — agent command, provider,
 *   test command, repository, run id, the PRD's path and digest, the knobs' digest, a nonce and
 *   an expiry — when the operator's CLI starts it. The worker admits the run once, at its start
 *   (`admitRun`: not expired, the PRD and knobs it got are the signed ones, the nonce used by no
 *   other run), recording the admission for the run's first execution; then it checks every agent
 *   call and test run against the signed claims and the admission, and refuses anything else.
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
import { createHash, timingSafeEqual } from 'node:crypto';
import { accessSync, constants, readFileSync, realpathSync, statSync } from 'node:fs';
import path from 'node:path';
import { ApplicationFailure } from '@temporalio/common';
import { FAILURE_TYPES } from '../schemas/activities.js';
import {
  AdmitRunInputSchema,
  canonicalTasks,
  claimsAdmittable,
  claimsCoverRun,
  RUN_SIGNATURE_TTL_MS,
  streamOfClaims,
  type AdmitRunInput,
  type AdmitRunResult,
  type RunAuthorization,
  type RunClaims,
} from '../schemas/authorization.js';
import { isProviderName, PROVIDERS } from '../lib/providers/index.js';
import { knobsDigest, knobsGivenDigest, prdDigest, runSecret, sha256Hex, signClaims } from '../lib/run-signing.js';
import { worktreePath } from './worktree.js';
import { admissionHolder, admissionStore } from './admission-record.js';

const refuse = (message: string): never => {
  throw ApplicationFailure.create({ type: FAILURE_TYPES.agentNotRunnable, nonRetryable: true, message });
};

export interface ExecutionRequest {
  runId: string;
  repoPath: string;
  /** The agent call's provider and argv, the test command, or the acceptance tests (their folder or command, which the signed knobs bind). */
  kind: { agent: { provider: string; argv: string[] } } | { tests: string } | { acceptance: string };
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
export function checkAgentAllowed(
  bin: string,
  entries: readonly string[],
  cwd: string,
  env: NodeJS.ProcessEnv = process.env,
): { ok: true; path: string } | { ok: false; reason: string } {
  const listed = `VIGIL_AGENT_ALLOW=${entries.join(',')}`;
  const invalid = entries.filter((e) => !DIGEST_ENTRY.test(e) && e.includes('/') && !path.isAbsolute(e));
  if (invalid.length > 0) {
    return {
      ok: false,
      reason: `this worker's allow-list has entries that are neither an absolute path, a bare name nor sha256:<hex>: ${invalid.join(', ')} (${listed})`,
    };
  }
  const real = resolveExecutable(bin, cwd, env.PATH);
  if (real === null)
    return {
      ok: false,
      reason:
        `the agent binary "${bin}" is not an executable file ${bin.includes('/') ? `(from ${cwd})` : 'on PATH'}, so it cannot be ` +
        `checked against this worker's allow-list (${listed})`,
    };
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
  return {
    ok: false,
    reason:
      `the agent binary "${bin}" (${real}) is not on this worker's allow-list (${listed}; entries match the real path a name has ` +
      `on the worker's PATH, an absolute path, or sha256:<hex> of the file)`,
  };
}

const requiresSignedRuns = (env: NodeJS.ProcessEnv): boolean => /^(1|true|yes)$/i.test(env.VIGIL_REQUIRE_SIGNED_RUNS ?? '');

const RESIGN =
  'start it again with a current `vigil start` (or create the schedule again), which signs the PRD, the knobs, a nonce and an expiry';

/**
 * The signature's verdict on its own: null when `auth` was made with this installation's secret
 * over claims a current CLI signs, else the refusal.
 */
function signatureProblem(auth: RunAuthorization | null | undefined, env: NodeJS.ProcessEnv): string | null {
  const secret = runSecret(env, true) as Buffer;
  if (!auth)
    return 'this worker runs only runs signed by its installation (started with `vigil start` where the run secret is readable); this one is unsigned';
  const expected = Buffer.from(signClaims(secret, auth.claims), 'hex');
  const given = Buffer.from(auth.signature, 'hex');
  if (given.length !== expected.length || !timingSafeEqual(given, expected))
    return "the run's signature does not match this installation's run secret";
  if (!claimsAdmittable(auth.claims))
    return `the run's signature is from an older vigil and binds neither its PRD, its knobs, a nonce nor an expiry, so this worker does not run it: ${RESIGN}`;
  return null;
}

/** Throws (non-retryable) when this worker must not execute the request; returns otherwise. */
export function authorizeExecution(
  req: ExecutionRequest,
  auth: RunAuthorization | null | undefined,
  env: NodeJS.ProcessEnv = process.env,
): void {
  const allow = (env.VIGIL_AGENT_ALLOW ?? '')
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
  if (allow.length > 0 && 'agent' in req.kind) {
    const { provider, argv } = req.kind.agent;
    // What the call starts: its argv, else the provider preset's binary (lib/providers/call.ts).
    const bin = argv[0] ?? (isProviderName(provider) ? PROVIDERS[provider].binary : null) ?? provider;
    const verdict = checkAgentAllowed(bin, allow, req.repoPath, env);
    if (!verdict.ok) refuse(verdict.reason);
  }
  if (!requiresSignedRuns(env)) return;
  const problem = signatureProblem(auth, env);
  if (problem !== null || !auth) return refuse(problem ?? 'unsigned');
  const c = auth.claims;
  if (!coversCall(c, req.runId, req.repoPath)) return refuse(`the signature covers run ${c.workflowId} in ${c.repoPath}, not this one`);
  if ('tests' in req.kind) {
    if (req.kind.tests !== c.testCommand) refuse('the test command is not the one the run was signed for');
    return;
  }
  if ('acceptance' in req.kind) return;
  const { provider, argv } = req.kind.agent;
  const signedArgv = JSON.stringify(argv) === JSON.stringify(c.agentCommand) || argv.length === 0;
  const presetOnly = argv.length === 0 && (provider === c.councilProvider || (c.failover ?? []).includes(provider));
  if (!(provider === c.provider && signedArgv) && !presetOnly) {
    refuse(`the agent command (${provider} ${argv.join(' ')}) is not the one the run was signed for`);
  }
}

// ---------------------------------------------------------------------------------------------
// The admission: once per run, at its start

/** The key of one run's admission: its nonce, and the run id (a schedule's template admits each of its runs once). */
const admissionKey = (nonce: string, runId: string): string => sha256Hex(`${nonce}\0${runId}`);

/**
 * Whether the claims cover a call of `runId` in `repoPath`: the signed run (or a scheduled run of
 * it) in the signed repository, or one of its parallel streams (`<run>--<task>`) in that stream's
 * worktree of the signed repository.
 */
function coversCall(c: RunClaims, runId: string, repoPath: string): boolean {
  if (claimsCoverRun(c, runId)) return c.repoPath === repoPath;
  const stream = streamOfClaims(c, runId);
  return stream !== null && repoPath === worktreePath(c.repoPath, stream.parentId, stream.task);
}

/**
 * Where a run's admission is recorded: per nonce and run id; a parallel stream's per execution too
 * (a stream that failed is started again under the same id, and is admitted again).
 */
function runAdmissionKey(c: RunClaims, runId: string, first: string): string {
  return streamOfClaims(c, runId) !== null && !claimsCoverRun(c, runId)
    ? admissionKey(c.nonce as string, `${runId}@${first}`)
    : admissionKey(c.nonce as string, runId);
}

/**
 * A parallel stream's admission: it was started as a child by the signed run (Temporal says so in
 * the stream's own workflow info, which no client can set), that run was admitted on this
 * deployment, and it works in its task's worktree of the signed repository. The run's expiry, PRD,
 * knobs and task list were checked when the run was admitted; the stream's input is the admitted
 * run's own doing.
 */
async function admitStream(
  input: AdmitRunInput,
  c: RunClaims,
  stream: { parentId: string; task: string },
  first: string,
  env: NodeJS.ProcessEnv,
): Promise<AdmitRunResult> {
  if (input.parent?.workflowId !== stream.parentId)
    return {
      refused:
        `${input.runId} is named as a parallel stream of ${stream.parentId}, but that run did not start it: a stream is admitted ` +
        `only as its run's child`,
    };
  if (input.repoPath !== worktreePath(c.repoPath, stream.parentId, stream.task))
    return { refused: `the signature covers run ${c.workflowId} in ${c.repoPath}, not this one` };
  const parentAdmitted = await admissionHolder(admissionKey(c.nonce as string, stream.parentId), env);
  if (parentAdmitted === null) return { refused: `the run ${stream.parentId} this stream belongs to was not admitted on this deployment` };
  const key = runAdmissionKey(c, input.runId, first);
  const admitted = await admissionHolder(key, env, { firstRunId: first, workflowId: input.runId });
  return admitted === first ? { refused: null } : { refused: `this stream's admission is held by another execution (${admitted})` };
}

/**
 * The run's admission, at its start (the workflow asks once per run, before anything else): on a
 * worker that requires signed runs, the signature must be this installation's over current claims
 * covering this run, unexpired (a schedule's template has no expiry), over the PRD and the knobs
 * this run got, with a nonce no other run was admitted with. The admission is recorded for the
 * run's first execution, so a retry, a continue-as-new or a second preparation of the same run is
 * admitted again (without the expiry: the run was admitted in time) and a replay of its
 * authorization by another run is not. `refused`: why not, for the run's outcome.
 */
export async function checkAdmission(
  input: AdmitRunInput,
  env: NodeJS.ProcessEnv = process.env,
  now: number = Date.now(),
): Promise<AdmitRunResult> {
  if (!requiresSignedRuns(env)) return { refused: null };
  const auth = input.authorization;
  const problem = signatureProblem(auth, env);
  if (problem !== null || !auth) return { refused: problem ?? 'unsigned' };
  const c = auth.claims;
  if (!claimsAdmittable(c)) return { refused: RESIGN };
  if (!coversCall(c, input.runId, input.repoPath))
    return { refused: `the signature covers run ${c.workflowId} in ${c.repoPath}, not this one` };
  const first = auth.firstExecutionRunId;
  if (!first) return { refused: 'the run did not say which execution it started as, so it cannot be admitted' };
  const stream = claimsCoverRun(c, input.runId) ? null : streamOfClaims(c, input.runId);
  if (stream) return admitStream(input, c, stream, first, env);
  const key = admissionKey(c.nonce, input.runId);
  const holder = await admissionHolder(key, env);
  if (holder === first) return { refused: null };
  if (holder !== null)
    return {
      refused: `this signature was already used to start another run (first execution ${holder}); a signature admits one run: ${RESIGN}`,
    };
  if (c.expiresAt !== null && c.expiresAt !== undefined) {
    const expires = Date.parse(c.expiresAt);
    if (!Number.isFinite(expires) || now > expires)
      return {
        refused: `the run's signature expired at ${c.expiresAt} (a signature admits a run start for ${RUN_SIGNATURE_TTL_MS / 60_000} minutes): ${RESIGN}`,
      };
  }
  if (input.prdPath !== c.prdPath) return { refused: `the run's PRD (${input.prdPath}) is not the one it was signed for (${c.prdPath})` };
  if (c.prdSha256 !== null && c.prdSha256 !== undefined) {
    const digest = prdDigest(input.prdPath);
    if (digest === null)
      return { refused: `the run's PRD ${input.prdPath} cannot be read on this worker, so it cannot be checked against its signature` };
    if (digest !== c.prdSha256)
      return {
        refused:
          `the run's PRD ${input.prdPath} is not the text it was signed for (sha256 ${digest.slice(0, 12)}…, signed ` +
          `${c.prdSha256.slice(0, 12)}…): it changed after \`vigil start\`, or the signature is being replayed; ${RESIGN}`,
      };
  }
  if (knobsDigest(input.knobs) !== c.knobsSha256) return { refused: `the run's knobs are not the ones it was signed for: ${RESIGN}` };
  const tasksDigest = input.tasks?.length ? sha256Hex(canonicalTasks(input.tasks)) : null;
  if (tasksDigest !== (c.tasksSha256 ?? null))
    return {
      refused: tasksDigest
        ? `the run's task list is not the one it was signed for${c.tasksSha256 ? '' : ' (its signature covers none)'}: ${RESIGN}`
        : `the run was signed with a task list and started without one: ${RESIGN}`,
    };
  // Which knobs a person set decides what the measured complexity may size; a run started before
  // the CLI sent them has neither the list nor its digest.
  const givenDigest = input.knobsGiven ? knobsGivenDigest(input.knobsGiven) : null;
  if (givenDigest !== (c.knobsGivenSha256 ?? null))
    return {
      refused: givenDigest
        ? `the run's list of the knobs a person set is not the one it was signed for${c.knobsGivenSha256 ? '' : ' (its signature covers none)'}: ${RESIGN}`
        : `the run was signed with a list of the knobs a person set and started without one: ${RESIGN}`,
    };
  const admitted = await admissionHolder(key, env, { firstRunId: first, workflowId: input.runId });
  if (admitted !== first)
    return {
      refused: `this signature was already used to start another run (first execution ${admitted}); a signature admits one run: ${RESIGN}`,
    };
  return { refused: null };
}

/** The activity: `checkAdmission` with this worker's environment and clock. */
export async function admitRun(raw: AdmitRunInput): Promise<AdmitRunResult> {
  return checkAdmission(AdmitRunInputSchema.parse(raw));
}

/**
 * Before every agent call and test run: `authorizeExecution`, then, on a worker that requires
 * signed runs, that the run was admitted at its start as the execution the call belongs to. A run
 * that skipped its admission (a forged carried state) or replays another run's signature is refused.
 */
export async function authorizeCall(
  req: ExecutionRequest,
  auth: RunAuthorization | null | undefined,
  env: NodeJS.ProcessEnv = process.env,
): Promise<void> {
  authorizeExecution(req, auth, env);
  if (!requiresSignedRuns(env) || !auth || !claimsAdmittable(auth.claims)) return;
  const first = auth.firstExecutionRunId;
  const holder = first ? await admissionHolder(runAdmissionKey(auth.claims, req.runId, first), env) : null;
  if (holder !== null && holder === first) return;
  const store = admissionStore(env);
  refuse(
    holder !== null
      ? `this signature was already used to start another run (first execution ${holder}); a signature admits one run: ${RESIGN}`
      : `this run was not admitted at its start on this worker (no record in ` +
          `${store.kind === 'postgres' ? 'the event store' : store.dir}); workers that share runs need a shared event store ` +
          `(VIGIL_DATABASE_URL) to share that record`,
  );
}
