/**
 * Owns the scripted agent: a fake coding agent, with no LLM, used by the demo and the test suite.
 * It does exactly what a scenario file (format: schemas/scenario.ts) says for the current call.
 *
 *   scripted-agent --scenario <file.json>      (or env VIGIL_SCENARIO=<file.json>)
 *
 * Vigil runs it in the repository (the working directory) with the prompt on stdin and VIGIL_ROLE,
 * VIGIL_RUN_ID, VIGIL_ITERATION, VIGIL_PHASE, VIGIL_TIER, VIGIL_PROMPT_FILE and, for council
 * members, VIGIL_MEMBER (for code reviewers VIGIL_REVIEWER) in the environment. Each invocation:
 *   1. reads stdin fully (the prompt; unused);
 *   2. appends {"role","iteration","member","pid","startedAt"} to .vigil/scripted-agent/calls.jsonl
 *      so tests can count the calls;
 *   3. picks its step: iterations[VIGIL_ITERATION - 1] or `default` for the iteration role; for the
 *      other roles the step of the role's call counter, kept in .vigil/scripted-agent/state.json
 *      (per member for the council, whose member m tries roles.council.members[m] first; per
 *      reviewer for code reviewers, who try roles.reviewer.reviewers[name] first);
 *   4. performs it: sleepBeforeMs, deletes, writes, appends, output, stderr, claim, commit,
 *      sleepMs, then exits with exitCode. The acceptance role's files go to VIGIL_ACCEPTANCE_DIR,
 *      the discovery call's to the folder of VIGIL_PRD_FILE.
 *
 * Exit codes of its own: 2 for a usage problem (bad arguments, bad environment, missing or invalid
 * scenario), 3 when a step could not be carried out (file system or git failure), 143 on SIGTERM
 * and 130 on SIGINT. Only node: APIs and zod (through the schema) are used.
 */
import { execFileSync } from 'node:child_process';
import { appendFileSync, closeSync, mkdirSync, openSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { dirname, isAbsolute, relative, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import {
  parseScenario,
  repoPathProblem,
  roleStep,
  SCRIPTED_ROLES,
  type Scenario,
  type ScenarioStep,
  type ScriptedRole,
} from '../../../schemas/scenario.js';

const USAGE = 'usage: scripted-agent --scenario <file.json>   (or env VIGIL_SCENARIO=<file.json>)';

/** Where the agent keeps its bookkeeping, relative to the repository. */
const STATE_DIR = '.vigil/scripted-agent';
const CALLS_FILE = `${STATE_DIR}/calls.jsonl`;
const STATE_FILE = `${STATE_DIR}/state.json`;
const LOCK_FILE = `${STATE_DIR}/state.lock`;
const SIGNAL_FILE = '.vigil/signals/COMPLETION_REQUESTED';

/** Identity of the commits made by `commit` steps; set through the environment so no git
 * configuration is needed. */
const GIT_IDENTITY = {
  GIT_AUTHOR_NAME: 'Scripted Agent',
  GIT_AUTHOR_EMAIL: 'agent@vigil.invalid',
  GIT_COMMITTER_NAME: 'Scripted Agent',
  GIT_COMMITTER_EMAIL: 'agent@vigil.invalid',
} as const;

/** A problem with how the agent was invoked: reported on stderr, exit code 2. */
class UsageError extends Error {}

type Role = 'iteration' | ScriptedRole;

interface Invocation {
  role: Role;
  /** VIGIL_ITERATION; required for the iteration role, optional for the others. */
  iteration: number | null;
  /** VIGIL_MEMBER; required for council members. */
  member: number | null;
  /** VIGIL_REVIEWER; the code reviewer's name (reviewer role). */
  reviewer: string | null;
  runId: string | null;
  scenarioPath: string;
}

/** One line of calls.jsonl. */
interface CallRecord {
  role: Role;
  iteration: number | null;
  member: number | null;
  reviewer?: string;
  /** The pid as the agent sees it (inside the agent sandbox's pid namespace, not the host's). */
  pid: number;
  /** Vigil's per-call process token (VIGIL_PROCESS_TOKEN), by which the call's processes are found from outside any namespace. */
  token?: string;
  startedAt: string;
}

/** Contents of state.json: calls made so far per role (`council:<member>` for the council). */
interface AgentState {
  version: 1;
  counts: Record<string, number>;
}

// Exit promptly when killed, even in the middle of a sleep.
process.on('SIGTERM', () => {
  process.stderr.write('scripted-agent: terminated (SIGTERM)\n');
  process.exit(143);
});
process.on('SIGINT', () => {
  process.stderr.write('scripted-agent: interrupted (SIGINT)\n');
  process.exit(130);
});

function parseCount(name: string, value: string, min: 0 | 1): number {
  const pattern = min === 1 ? /^[1-9][0-9]*$/ : /^(0|[1-9][0-9]*)$/;
  const n = Number(value);
  if (!pattern.test(value.trim()) || !Number.isSafeInteger(n)) {
    const what = min === 1 ? 'a positive integer' : 'a non-negative integer';
    throw new UsageError(`${name} must be ${what}, got ${JSON.stringify(value)}`);
  }
  return n;
}

/** Reads the command line and the VIGIL_* environment; throws UsageError on any problem. */
function readInvocation(argv: string[], env: NodeJS.ProcessEnv): Invocation | 'help' {
  let values: { scenario?: string; help?: boolean };
  try {
    ({ values } = parseArgs({
      args: argv,
      options: { scenario: { type: 'string' }, help: { type: 'boolean', short: 'h' } },
      strict: true,
      allowPositionals: false,
    }));
  } catch (error) {
    throw new UsageError(`${(error as Error).message}\n${USAGE}`);
  }
  if (values.help === true) return 'help';

  const scenarioPath = values.scenario ?? env.VIGIL_SCENARIO;
  if (scenarioPath === undefined || scenarioPath === '') {
    throw new UsageError(`no scenario given: pass --scenario <file.json> or set VIGIL_SCENARIO\n${USAGE}`);
  }

  // Unset role means an iteration (handy when running the agent by hand).
  const roleText = env.VIGIL_ROLE === undefined || env.VIGIL_ROLE === '' ? 'iteration' : env.VIGIL_ROLE;
  const roles: readonly string[] = ['iteration', ...SCRIPTED_ROLES];
  if (!roles.includes(roleText)) {
    throw new UsageError(`VIGIL_ROLE must be one of ${roles.join(', ')}; got ${JSON.stringify(roleText)}`);
  }
  const role = roleText as Role;

  const iterationText = env.VIGIL_ITERATION;
  let iteration: number | null = null;
  if (iterationText !== undefined && iterationText !== '') {
    iteration = parseCount('VIGIL_ITERATION', iterationText, 1);
  } else if (role === 'iteration') {
    throw new UsageError('VIGIL_ITERATION is not set (expected the 1-based iteration number)');
  }

  const memberText = env.VIGIL_MEMBER;
  let member: number | null = null;
  if (memberText !== undefined && memberText !== '') {
    member = parseCount('VIGIL_MEMBER', memberText, 0);
  } else if (role === 'council') {
    throw new UsageError('VIGIL_MEMBER is not set (expected the 0-based council member index)');
  }

  const reviewer = role === 'reviewer' && env.VIGIL_REVIEWER ? env.VIGIL_REVIEWER : null;
  const runId = env.VIGIL_RUN_ID === undefined || env.VIGIL_RUN_ID === '' ? null : env.VIGIL_RUN_ID;
  // An attempt of a run with attempts may have a scenario of its own: `{attempt}` in the path is its number (VIGIL_ATTEMPT).
  const attempt = env.VIGIL_ATTEMPT ?? '';
  // A call on another model may too: `{model}` is the model Vigil asked for (VIGIL_MODEL; empty when none was named).
  const model = env.VIGIL_MODEL ?? '';
  return {
    role,
    iteration,
    member,
    reviewer,
    runId,
    scenarioPath: scenarioPath.replaceAll('{attempt}', attempt).replaceAll('{model}', model),
  };
}

/** Reads and validates the scenario file; throws UsageError naming the file and every problem. */
function loadScenario(path: string): Scenario {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (error) {
    throw new UsageError(`cannot read scenario file ${path}: ${(error as Error).message}`);
  }
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (error) {
    throw new UsageError(`scenario file ${path} is not valid JSON: ${(error as Error).message}`);
  }
  try {
    return parseScenario(json);
  } catch (error) {
    throw new UsageError(`scenario file ${path}: ${(error as Error).message}`);
  }
}

/** Reads stdin to the end (the prompt), so the parent never blocks writing it. Skipped on a TTY. */
async function drainStdin(): Promise<void> {
  if (process.stdin.isTTY === true) return;
  for await (const chunk of process.stdin) void chunk;
}

/** Absolute path of a repository-relative path, refusing anything that leaves the repository. */
function inRepo(repo: string, path: string): string {
  const problem = repoPathProblem(path);
  if (problem !== null) throw new Error(problem);
  const absolute = resolve(repo, path);
  const rel = relative(repo, absolute);
  if (rel === '' || rel.startsWith('..') || isAbsolute(rel)) {
    throw new Error(`path escapes the repository: ${JSON.stringify(path)}`);
  }
  return absolute;
}

function ensureParent(path: string): void {
  mkdirSync(dirname(path), { recursive: true });
}

/** Writes through a temporary file and a rename, so readers never see half a file. */
function writeAtomic(path: string, content: string): void {
  ensureParent(path);
  const tmp = `${path}.${process.pid}.tmp`;
  writeFileSync(tmp, content);
  renameSync(tmp, path);
}

function sleep(ms: number): Promise<void> {
  return ms <= 0 ? Promise.resolve() : new Promise((done) => setTimeout(done, ms));
}

/** Blocking sleep, used only while waiting for the state lock. */
function sleepSync(ms: number): void {
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);
}

/**
 * Runs `fn` holding an exclusive lock file, so council members running in parallel do not lose
 * counter updates. A lock older than 10 s is taken to be left over by a killed agent.
 */
function withStateLock<T>(repo: string, fn: () => T): T {
  const lock = resolve(repo, LOCK_FILE);
  ensureParent(lock);
  const deadline = Date.now() + 30_000;
  for (;;) {
    try {
      closeSync(openSync(lock, 'wx'));
      break;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
      try {
        if (Date.now() - statSync(lock).mtimeMs > 10_000) rmSync(lock, { force: true });
      } catch {
        // The holder released it meanwhile: try again.
      }
      if (Date.now() > deadline) throw new Error(`timed out waiting for ${LOCK_FILE}`);
      sleepSync(20);
    }
  }
  try {
    return fn();
  } finally {
    rmSync(lock, { force: true });
  }
}

function readState(path: string): AgentState {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return { version: 1, counts: {} };
    throw error;
  }
  const parsed: unknown = JSON.parse(text);
  const counts: Record<string, number> = {};
  if (typeof parsed === 'object' && parsed !== null && 'counts' in parsed) {
    const raw = (parsed as { counts: unknown }).counts;
    if (typeof raw === 'object' && raw !== null) {
      for (const [key, value] of Object.entries(raw)) {
        if (typeof value === 'number' && Number.isSafeInteger(value) && value >= 0) counts[key] = value;
      }
    }
  }
  return { version: 1, counts };
}

/** Returns how many times the counter `key` was taken before, and increments it. */
function takeCallIndex(repo: string, key: string): number {
  return withStateLock(repo, () => {
    const path = resolve(repo, STATE_FILE);
    const state = readState(path);
    const previous = state.counts[key] ?? 0;
    state.counts[key] = previous + 1;
    writeAtomic(path, `${JSON.stringify(state, null, 2)}\n`);
    return previous;
  });
}

function recordCall(repo: string, invocation: Invocation): void {
  const record: CallRecord = {
    role: invocation.role,
    iteration: invocation.iteration,
    member: invocation.member,
    ...(invocation.reviewer !== null ? { reviewer: invocation.reviewer } : {}),
    pid: process.pid,
    ...(process.env.VIGIL_PROCESS_TOKEN ? { token: process.env.VIGIL_PROCESS_TOKEN } : {}),
    startedAt: new Date().toISOString(),
  };
  const path = resolve(repo, CALLS_FILE);
  ensureParent(path);
  // One small append per call: O_APPEND keeps lines of parallel agents whole.
  appendFileSync(path, `${JSON.stringify(record)}\n`);
}

/** The step to perform, or a message saying there is none. */
function chooseStep(repo: string, scenario: Scenario, invocation: Invocation): { step: ScenarioStep } | { none: string } {
  if (invocation.role === 'iteration') {
    const n = invocation.iteration ?? 1;
    const step = scenario.iterations[n - 1] ?? scenario.default;
    return step === undefined ? { none: `scripted-agent: no step for iteration ${n}` } : { step };
  }
  const key =
    invocation.role === 'council'
      ? `council:${invocation.member ?? 0}`
      : invocation.reviewer !== null
        ? `reviewer:${invocation.reviewer}`
        : invocation.role;
  const index = takeCallIndex(repo, key);
  // The council tries the member's own script (roles.council.members[m]) before the shared one;
  // a code reviewer its own (roles.reviewer.reviewers[name]).
  const member = invocation.role === 'council' ? (invocation.member ?? 0) : invocation.reviewer;
  const step = roleStep(scenario.roles[invocation.role], index, member);
  return step === undefined ? { none: `scripted-agent: no step for ${key} call ${index + 1}` } : { step };
}

function commitAll(repo: string, message: string): void {
  const env = { ...process.env, ...GIT_IDENTITY };
  const git = (args: string[]): void => {
    try {
      execFileSync('git', args, { cwd: repo, env, stdio: ['ignore', 'pipe', 'pipe'] });
    } catch (error) {
      const failure = error as Error & { stderr?: Buffer };
      const detail = failure.stderr?.toString().trim() || failure.message;
      throw new Error(`git ${args[0] ?? ''} failed: ${detail}`);
    }
  };
  // Vigil's own files (signals, this agent's bookkeeping) are never committed. An exclude
  // pathspec would make `git add` fail when .vigil/ is already ignored (Vigil ignores it via
  // .git/info/exclude), so stage everything and then unstage .vigil/.
  git(['add', '-A']);
  git(['rm', '-r', '-q', '--cached', '--ignore-unmatch', '--', '.vigil']);
  git(['-c', 'commit.gpgsign=false', 'commit', '--allow-empty', '--no-verify', '--quiet', '-m', message]);
}

/**
 * Where a step's writes, appends and deletes go: the repository, or for the acceptance role the
 * folder Vigil names in VIGIL_ACCEPTANCE_DIR, for the discovery call the folder of VIGIL_PRD_FILE
 * (a step writes `PRD.md` there) (the repository is read-only for both).
 */
function filesRoot(invocation: Invocation, env: NodeJS.ProcessEnv): string {
  if (invocation.role === 'discovery') {
    const file = env.VIGIL_PRD_FILE;
    if (file === undefined || file === '') throw new Error('VIGIL_PRD_FILE is not set (the discovery call writes the PRD there)');
    return dirname(file);
  }
  if (invocation.role !== 'acceptance') return process.cwd();
  const dir = env.VIGIL_ACCEPTANCE_DIR;
  if (dir === undefined || dir === '') throw new Error('VIGIL_ACCEPTANCE_DIR is not set (the acceptance role writes its tests there)');
  return dir;
}

/** Performs a step in the order documented in the schema (files under `root`); returns the exit code. */
async function performStep(repo: string, root: string, scenario: Scenario, invocation: Invocation, step: ScenarioStep): Promise<number> {
  await sleep(step.sleepBeforeMs);

  for (const path of step.deletes) rmSync(inRepo(root, path), { recursive: true, force: true });
  for (const [path, content] of Object.entries(step.writes)) {
    const target = inRepo(root, path);
    ensureParent(target);
    writeFileSync(target, content);
  }
  for (const [path, text] of Object.entries(step.appends)) {
    const target = inRepo(root, path);
    ensureParent(target);
    appendFileSync(target, text);
  }

  if (step.output !== undefined) process.stdout.write(step.output);
  if (step.stderr !== undefined) process.stderr.write(step.stderr);

  if (step.claim === 'promise') {
    const fresh = step.output === undefined || step.output === '' || step.output.endsWith('\n');
    process.stdout.write(`${fresh ? '' : '\n'}${scenario.promiseText}\n`);
  } else if (step.claim === 'file') {
    const body = {
      by: 'scripted-agent',
      role: invocation.role,
      runId: invocation.runId,
      iteration: invocation.iteration,
      at: new Date().toISOString(),
    };
    writeAtomic(resolve(repo, SIGNAL_FILE), `${JSON.stringify(body)}\n`);
  }

  if (step.commit !== undefined) commitAll(repo, step.commit);

  await sleep(step.sleepMs);
  return step.exitCode;
}

async function main(): Promise<number> {
  let invocation: Invocation | 'help';
  let scenario: Scenario;
  try {
    await drainStdin();
    invocation = readInvocation(process.argv.slice(2), process.env);
    if (invocation === 'help') {
      process.stdout.write(`${USAGE}\nScenario format: examples/agents/scripted-agent/README.md\n`);
      return 0;
    }
    scenario = loadScenario(invocation.scenarioPath);
  } catch (error) {
    if (error instanceof UsageError) {
      process.stderr.write(`scripted-agent: ${error.message}\n`);
      return 2;
    }
    throw error;
  }

  const repo = process.cwd();
  try {
    recordCall(repo, invocation);
    const chosen = chooseStep(repo, scenario, invocation);
    if ('none' in chosen) {
      process.stdout.write(`${chosen.none}\n`);
      return 0;
    }
    return await performStep(repo, filesRoot(invocation, process.env), scenario, invocation, chosen.step);
  } catch (error) {
    process.stderr.write(`scripted-agent: step failed: ${(error as Error).message}\n`);
    return 3;
  }
}

main().then(
  (code) => {
    process.exitCode = code;
  },
  (error: unknown) => {
    process.stderr.write(`scripted-agent: unexpected error: ${String(error)}\n`);
    process.exitCode = 3;
  },
);
