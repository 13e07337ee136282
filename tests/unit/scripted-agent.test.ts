/**
 * Tests of the scripted agent: the scenario schema (schemas/scenario.ts) and the compiled agent
 * as the launcher runs it (dist/examples/agents/scripted-agent/scripted-agent.bundle.js, main.js
 * and what it loads in one file), run as a child process in fresh temporary git repositories.
 * Needs `npm run build` first (the test script builds before running vitest).
 */
import { spawn, execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_PROMISE_TEXT, parseScenario, roleStep, ScenarioSchema } from '../../schemas/scenario.js';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
const AGENT = join(ROOT, 'dist/examples/agents/scripted-agent/scripted-agent.bundle.js');
const WRAPPER = join(ROOT, 'examples/agents/scripted-agent/scripted-agent');

/** A scenario using every field. */
const FULL_EXAMPLE = {
  version: 1,
  description: 'every field',
  promiseText: 'ALL DONE',
  iterations: [
    {
      sleepBeforeMs: 5,
      deletes: ['old.txt', 'gone/'],
      writes: { 'src/a.txt': 'a\n', './b.txt': 'b' },
      appends: { 'log.txt': 'line\n' },
      output: 'out\n',
      stderr: 'err\n',
      claim: 'promise',
      commit: 'msg',
      sleepMs: 10,
      exitCode: 7,
    },
    {},
  ],
  default: { claim: 'file' },
  roles: {
    council: { rounds: [{ output: 'c\n' }], default: { output: 'd\n' } },
    'devils-advocate': { default: { output: 'no\n' } },
    reviewer: { rounds: [] },
  },
};

function parseError(json: unknown): string {
  try {
    parseScenario(json);
  } catch (error) {
    return (error as Error).message;
  }
  throw new Error('expected parseScenario to throw');
}

describe('scenario schema', () => {
  it('accepts a full example and fills defaults', () => {
    const scenario = parseScenario(FULL_EXAMPLE);
    expect(scenario.iterations[0]?.exitCode).toBe(7);
    expect(scenario.iterations[1]).toEqual({
      sleepBeforeMs: 0,
      deletes: [],
      writes: {},
      appends: {},
      sleepMs: 0,
      exitCode: 0,
    });
    expect(scenario.roles.council?.rounds).toHaveLength(1);
    expect(scenario.roles['devils-advocate']?.rounds).toEqual([]);
  });

  it('defaults promiseText and roles', () => {
    const scenario = ScenarioSchema.parse({ version: 1, iterations: [] });
    expect(scenario.promiseText).toBe(DEFAULT_PROMISE_TEXT);
    expect(scenario.roles).toEqual({});
    expect(scenario.default).toBeUndefined();
  });

  it('rejects unknown keys, naming them', () => {
    const message = parseError({ version: 1, iterations: [{ wirtes: {} }], extra: true, roles: { councel: {} } });
    expect(message).toContain('scenario: iterations.0.wirtes: unknown key');
    expect(message).toContain('scenario: extra: unknown key');
    expect(message).toContain('scenario: roles.councel: unknown key');
  });

  it('rejects paths that escape the repository', () => {
    const message = parseError({
      version: 1,
      iterations: [
        {
          writes: { '../outside.txt': 'x', '/etc/passwd': 'x', 'fine.txt': 'x' },
          appends: { '.git/config': 'x' },
          deletes: ['a/../../b', 'C:\\win'],
        },
      ],
    });
    expect(message).toMatch(/iterations\.0\.writes\["\.\.\/outside\.txt"\]: .*"\.\." segments/);
    expect(message).toMatch(/iterations\.0\.writes\["\/etc\/passwd"\]: .*absolute/);
    expect(message).toMatch(/iterations\.0\.appends\["\.git\/config"\]: .*\.git/);
    expect(message).toMatch(/iterations\.0\.deletes\.0: .*"\.\." segments/);
    expect(message).toMatch(/iterations\.0\.deletes\.1: .*absolute/);
    expect(message).not.toContain('fine.txt');
  });

  it('rejects bad exit codes, naming the field', () => {
    expect(parseError({ version: 1, iterations: [{}, {}, { exitCode: 'x' }] })).toContain(
      'scenario: iterations.2.exitCode: Invalid input: expected number',
    );
    expect(parseError({ version: 1, iterations: [{ exitCode: 256 }] })).toContain('iterations.0.exitCode');
    expect(parseError({ version: 1, iterations: [{ exitCode: -1 }] })).toContain('iterations.0.exitCode');
    expect(parseError({ version: 1, iterations: [], default: { exitCode: 1.5 } })).toContain('default.exitCode');
  });

  it('lists every bad field in one error', () => {
    const message = parseError({
      version: 2,
      iterations: [{ claim: 'maybe', sleepMs: -1 }],
      roles: { reviewer: { rounds: [{ commit: '' }] } },
    });
    expect(message).toContain('scenario: version:');
    expect(message).toContain('scenario: iterations.0.claim:');
    expect(message).toContain('scenario: iterations.0.sleepMs:');
    expect(message).toContain('scenario: roles.reviewer.rounds.0.commit:');
    expect(message).toMatch(/^invalid scenario \(4 problems\)/);
  });

  it('accepts per-member council scripts and keeps them', () => {
    const scenario = parseScenario({
      version: 1,
      iterations: [],
      roles: { council: { members: { '0': { rounds: [{ output: 'm0\n' }] }, '12': { default: {} } } } },
    });
    const council = scenario.roles.council;
    expect(council?.rounds).toEqual([]);
    expect(council?.members?.['0']?.rounds[0]?.output).toBe('m0\n');
    expect(council?.members?.['12']?.rounds).toEqual([]);
    expect(council?.members?.['12']?.default?.exitCode).toBe(0);
  });

  it('picks member step, member default, shared round, shared default, in that order', () => {
    const step = (output: string) => ({ output });
    const council = parseScenario({
      version: 1,
      iterations: [],
      roles: {
        council: {
          rounds: [step('shared 0'), step('shared 1'), step('shared 2')],
          default: step('shared default'),
          members: {
            '0': { rounds: [step('m0 r0')], default: step('m0 default') },
            '1': { rounds: [step('m1 r0'), step('m1 r1')] },
            '2': { default: step('m2 default') },
            '3': {},
          },
        },
      },
    }).roles.council;
    const pick = (member: number | null, index: number) => roleStep(council, index, member)?.output;
    expect([0, 1, 5].map((n) => pick(0, n))).toEqual(['m0 r0', 'm0 default', 'm0 default']);
    expect([0, 1, 2, 3].map((n) => pick(1, n))).toEqual(['m1 r0', 'm1 r1', 'shared 2', 'shared default']);
    expect([0, 3].map((n) => pick(2, n))).toEqual(['m2 default', 'm2 default']);
    // An empty member script and an unlisted member both fall back to the shared script.
    expect([0, 2, 3].map((n) => pick(3, n))).toEqual(['shared 0', 'shared 2', 'shared default']);
    expect([1, 9].map((n) => pick(7, n))).toEqual(['shared 1', 'shared default']);
    expect(pick(null, 0)).toBe('shared 0');
    expect(roleStep(undefined, 0, 0)).toBeUndefined();
    expect(
      roleStep(parseScenario({ version: 1, iterations: [], roles: { council: { members: { '0': {} } } } }).roles.council, 0, 0),
    ).toBeUndefined();
  });

  it('accepts members only under the council, naming the path', () => {
    for (const role of ['devils-advocate', 'reviewer']) {
      const message = parseError({ version: 1, iterations: [], roles: { [role]: { members: { '0': {} } } } });
      expect(message).toContain(`scenario: roles.${role}.members: unknown key (only roles.council accepts per-member scripts)`);
      expect(message).toMatch(/^invalid scenario \(1 problem\)/);
    }
    // Elsewhere an unknown key is just that.
    expect(parseError({ version: 1, iterations: [{ members: {} }] })).toMatch(/scenario: iterations\.0\.members: unknown key$/);
  });

  it('rejects council member keys that are not non-negative integers', () => {
    const message = parseError({
      version: 1,
      iterations: [],
      roles: { council: { members: { x: {}, '-1': {}, '1.5': {}, '01': {}, ' 2': {}, '': {}, '3': {}, '10': {} } } },
    });
    for (const key of ['x', '-1', '1.5', '01', ' 2', '']) {
      expect(message).toContain(`scenario: roles.council.members[${JSON.stringify(key)}]: member key must be a non-negative integer`);
    }
    expect(message).not.toContain('members["3"]');
    expect(message).not.toContain('members["10"]');
    expect(message).toMatch(/^invalid scenario \(6 problems\)/);
  });

  it('validates member scripts strictly, naming the path', () => {
    const message = parseError({
      version: 1,
      iterations: [],
      roles: { council: { members: { '1': { rounds: [{ exitCode: 'x' }], defualt: {} } } } },
    });
    expect(message).toContain('scenario: roles.council.members.1.rounds.0.exitCode: Invalid input: expected number');
    expect(message).toContain('scenario: roles.council.members.1.defualt: unknown key');
  });

  it('rejects a non-object and a missing iterations list', () => {
    expect(parseError(null)).toContain('scenario: (root):');
    expect(parseError({ version: 1 })).toContain('scenario: iterations:');
  });
});

// --- the compiled agent ------------------------------------------------------------------------

interface AgentRun {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

const tempDirs: string[] = [];

function tempDir(prefix: string): string {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  tempDirs.push(dir);
  return dir;
}

/** A fresh git repository (no global config needed: the agent sets its own identity). */
function makeRepo(): string {
  const repo = tempDir('vigil-scripted-repo-');
  execFileSync('git', ['init', '-q'], { cwd: repo });
  return repo;
}

/** Writes a scenario (an object, or raw text) to its own temp file and returns the path. */
function scenarioFile(scenario: unknown): string {
  const path = join(tempDir('vigil-scenario-'), 'scenario.json');
  writeFileSync(path, typeof scenario === 'string' ? scenario : JSON.stringify(scenario));
  return path;
}

/** The environment minus any VIGIL_* variables of the test process. */
function baseEnv(): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [key, value] of Object.entries(process.env)) if (!key.startsWith('VIGIL_')) env[key] = value;
  return env;
}

interface RunOptions {
  env?: Record<string, string>;
  args?: string[];
  command?: string[];
  /** Called once the child started; may kill it. */
  onSpawn?: (kill: (signal: NodeJS.Signals) => void) => void;
}

function runAgent(repo: string, scenarioPath: string | null, options: RunOptions = {}): Promise<AgentRun> {
  const args = options.args ?? (scenarioPath === null ? [] : ['--scenario', scenarioPath]);
  const [command, ...prefix] = options.command ?? [process.execPath, AGENT];
  const env = {
    ...baseEnv(),
    VIGIL_ROLE: 'iteration',
    VIGIL_RUN_ID: 'run-test',
    VIGIL_ITERATION: '1',
    VIGIL_PHASE: 'ACT',
    VIGIL_TIER: 'development',
    ...options.env,
  };
  return new Promise((done, fail) => {
    const child = spawn(command ?? process.execPath, [...prefix, ...args], { cwd: repo, env });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.on('error', fail);
    child.on('close', (code, signal) => done({ code, signal, stdout, stderr }));
    child.stdin.end('the prompt\n');
    options.onSpawn?.((signal) => child.kill(signal));
  });
}

function read(repo: string, path: string): string {
  return readFileSync(join(repo, path), 'utf8');
}

function git(repo: string, args: string[]): string {
  return execFileSync('git', args, { cwd: repo, encoding: 'utf8' }).trim();
}

function calls(repo: string): Array<Record<string, unknown>> {
  return read(repo, '.vigil/scripted-agent/calls.jsonl')
    .trim()
    .split('\n')
    .map((line) => JSON.parse(line) as Record<string, unknown>);
}

async function waitFor(check: () => boolean, timeoutMs = 5000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error('timed out waiting for condition');
    await new Promise((r) => setTimeout(r, 20));
  }
}

describe('scripted agent (compiled)', () => {
  beforeAll(() => {
    if (!existsSync(AGENT)) {
      throw new Error(`${AGENT} does not exist: run \`npm run build\` before these tests`);
    }
  });

  afterAll(() => {
    for (const dir of tempDirs) rmSync(dir, { recursive: true, force: true });
  });

  it('performs deletes, writes and appends, prints output and exits with the scripted code', async () => {
    const repo = makeRepo();
    writeFileSync(join(repo, 'old.txt'), 'old');
    mkdirSync(join(repo, 'gone/deep'), { recursive: true });
    writeFileSync(join(repo, 'gone/deep/x'), 'x');
    writeFileSync(join(repo, 'log.txt'), 'first\n');
    const scenario = scenarioFile({
      version: 1,
      iterations: [
        {
          deletes: ['old.txt', 'gone', 'never-existed.txt'],
          writes: { 'src/nested/a.txt': 'A\n' },
          appends: { 'log.txt': 'second\n', 'new/appended.txt': 'fresh' },
          output: 'hello out\n',
          stderr: 'hello err\n',
          exitCode: 5,
        },
      ],
    });
    const run = await runAgent(repo, scenario);
    expect(run.code).toBe(5);
    expect(run.stdout).toBe('hello out\n');
    expect(run.stderr).toBe('hello err\n');
    expect(existsSync(join(repo, 'old.txt'))).toBe(false);
    expect(existsSync(join(repo, 'gone'))).toBe(false);
    expect(read(repo, 'src/nested/a.txt')).toBe('A\n');
    expect(read(repo, 'log.txt')).toBe('first\nsecond\n');
    expect(read(repo, 'new/appended.txt')).toBe('fresh');
    expect(existsSync(join(repo, '.vigil/signals/COMPLETION_REQUESTED'))).toBe(false);
  });

  it('claim "file" writes the signal file with a JSON body', async () => {
    const repo = makeRepo();
    const run = await runAgent(repo, scenarioFile({ version: 1, iterations: [{ claim: 'file' }] }));
    expect(run.code).toBe(0);
    const body = JSON.parse(read(repo, '.vigil/signals/COMPLETION_REQUESTED')) as Record<string, unknown>;
    expect(body).toMatchObject({ by: 'scripted-agent', role: 'iteration', runId: 'run-test', iteration: 1 });
    expect(run.stdout).not.toContain(DEFAULT_PROMISE_TEXT);
  });

  it('claim "promise" prints the promise text on its own line (default and custom)', async () => {
    const repo = makeRepo();
    const plain = await runAgent(repo, scenarioFile({ version: 1, iterations: [{ output: 'work', claim: 'promise' }] }));
    expect(plain.code).toBe(0);
    expect(plain.stdout).toBe(`work\n${DEFAULT_PROMISE_TEXT}\n`);
    expect(existsSync(join(repo, '.vigil/signals/COMPLETION_REQUESTED'))).toBe(false);

    const custom = await runAgent(
      repo,
      scenarioFile({ version: 1, promiseText: '<promise>DONE</promise>', iterations: [{ claim: 'promise' }] }),
    );
    expect(custom.stdout).toBe('<promise>DONE</promise>\n');
  });

  it('commits when asked, as the scripted identity, leaving .vigil/ out', async () => {
    const repo = makeRepo();
    const scenario = scenarioFile({
      version: 1,
      iterations: [{ writes: { 'a.txt': 'a\n' }, claim: 'file', commit: 'agent: add a' }, { commit: 'agent: nothing changed' }],
    });
    const first = await runAgent(repo, scenario);
    expect(first.code).toBe(0);
    expect(git(repo, ['log', '-1', '--format=%an <%ae>|%cn <%ce>|%s'])).toBe(
      'Scripted Agent <agent@vigil.invalid>|Scripted Agent <agent@vigil.invalid>|agent: add a',
    );
    expect(git(repo, ['ls-files'])).toBe('a.txt');
    expect(git(repo, ['status', '--porcelain', '--', '.', ':(exclude).vigil'])).toBe('');

    // An empty commit is still a commit (HEAD moves, the tree does not).
    const second = await runAgent(repo, scenario, { env: { VIGIL_ITERATION: '2' } });
    expect(second.code).toBe(0);
    expect(git(repo, ['rev-list', '--count', 'HEAD'])).toBe('2');
    expect(git(repo, ['log', '-1', '--format=%s'])).toBe('agent: nothing changed');
  });

  it('commits when .vigil/ is already ignored (as Vigil sets it up via .git/info/exclude)', async () => {
    const repo = makeRepo();
    writeFileSync(join(repo, '.git/info/exclude'), '/.vigil/\n');
    const result = await runAgent(
      repo,
      scenarioFile({ version: 1, iterations: [{ writes: { 'b.txt': 'b' }, claim: 'file', commit: 'agent: add b' }] }),
    );
    expect(result.code).toBe(0);
    expect(git(repo, ['ls-files'])).toBe('b.txt');
    expect(git(repo, ['log', '-1', '--format=%s'])).toBe('agent: add b');
  });

  it('records every call in calls.jsonl', async () => {
    const repo = makeRepo();
    const scenario = scenarioFile({ version: 1, iterations: [{}, {}] });
    await runAgent(repo, scenario, { env: { VIGIL_ITERATION: '1' } });
    await runAgent(repo, scenario, { env: { VIGIL_ITERATION: '2' } });
    await runAgent(repo, scenario, { env: { VIGIL_ITERATION: '2' } });
    const lines = calls(repo);
    expect(lines.map((c) => c.iteration)).toEqual([1, 2, 2]);
    for (const line of lines) {
      expect(Object.keys(line).sort()).toEqual(['iteration', 'member', 'pid', 'role', 'startedAt']);
      expect(line.role).toBe('iteration');
      expect(line.member).toBeNull();
      expect(typeof line.pid).toBe('number');
      expect(Number.isNaN(Date.parse(String(line.startedAt)))).toBe(false);
    }
    // Run by Vigil, the call's process token too (tests find the call's processes by it).
    await runAgent(repo, scenario, { env: { VIGIL_ITERATION: '2', VIGIL_PROCESS_TOKEN: 'call-token-1' } });
    expect(calls(repo).at(-1)).toMatchObject({ iteration: 2, token: 'call-token-1' });
  });

  it('uses default beyond the list, and does nothing when there is no default', async () => {
    const repo = makeRepo();
    const withDefault = scenarioFile({
      version: 1,
      iterations: [{ output: 'one\n' }],
      default: { output: 'default step\n', exitCode: 4 },
    });
    const first = await runAgent(repo, withDefault, { env: { VIGIL_ITERATION: '1' } });
    expect(first.stdout).toBe('one\n');
    const beyond = await runAgent(repo, withDefault, { env: { VIGIL_ITERATION: '7' } });
    expect(beyond.stdout).toBe('default step\n');
    expect(beyond.code).toBe(4);

    const noDefault = scenarioFile({ version: 1, iterations: [{ writes: { 'x.txt': 'x' } }] });
    const none = await runAgent(repo, noDefault, { env: { VIGIL_ITERATION: '3' } });
    expect(none.code).toBe(0);
    expect(none.stdout).toBe('scripted-agent: no step for iteration 3\n');
    expect(existsSync(join(repo, 'x.txt'))).toBe(false);
  });

  it('exits 2 with a clear message on a bad scenario', async () => {
    const repo = makeRepo();
    const invalid = await runAgent(repo, scenarioFile({ version: 1, iterations: [{}, {}, { exitCode: 'x', wirtes: {} }] }));
    expect(invalid.code).toBe(2);
    expect(invalid.stderr).toContain('scenario: iterations.2.exitCode: Invalid input: expected number');
    expect(invalid.stderr).toContain('scenario: iterations.2.wirtes: unknown key');

    const notJson = await runAgent(repo, scenarioFile('{ not json'));
    expect(notJson.code).toBe(2);
    expect(notJson.stderr).toMatch(/scripted-agent: scenario file .* is not valid JSON/);

    const missing = await runAgent(repo, join(repo, 'no-such-scenario.json'));
    expect(missing.code).toBe(2);
    expect(missing.stderr).toMatch(/scripted-agent: cannot read scenario file .*no-such-scenario\.json/);

    const none = await runAgent(repo, null);
    expect(none.code).toBe(2);
    expect(none.stderr).toContain('no scenario given');

    // Nothing was recorded for calls that never got a valid scenario.
    expect(existsSync(join(repo, '.vigil/scripted-agent/calls.jsonl'))).toBe(false);
  });

  it('accepts the scenario from VIGIL_SCENARIO', async () => {
    const repo = makeRepo();
    const path = scenarioFile({ version: 1, iterations: [{ output: 'from env\n' }] });
    const run = await runAgent(repo, null, { env: { VIGIL_SCENARIO: path } });
    expect(run.code).toBe(0);
    expect(run.stdout).toBe('from env\n');
  });

  it('exits 2 on a bad environment', async () => {
    const repo = makeRepo();
    const scenario = scenarioFile({ version: 1, iterations: [{}] });
    for (const value of ['0', 'abc', '-1', '1.5']) {
      const run = await runAgent(repo, scenario, { env: { VIGIL_ITERATION: value } });
      expect(run.code).toBe(2);
      expect(run.stderr).toContain('VIGIL_ITERATION must be a positive integer');
    }
    const role = await runAgent(repo, scenario, { env: { VIGIL_ROLE: 'janitor' } });
    expect(role.code).toBe(2);
    expect(role.stderr).toContain('VIGIL_ROLE must be one of');
    const member = await runAgent(repo, scenario, { env: { VIGIL_ROLE: 'council' } });
    expect(member.code).toBe(2);
    expect(member.stderr).toContain('VIGIL_MEMBER is not set');
  });

  it('scripts non-iteration roles with per-role (and per-member) call counters', async () => {
    const repo = makeRepo();
    const scenario = scenarioFile({
      version: 1,
      iterations: [],
      roles: {
        council: { rounds: [{ output: 'round 0\n' }, { output: 'round 1\n' }], default: { output: 'later\n' } },
        reviewer: { rounds: [{ output: 'review 0\n', exitCode: 1 }] },
      },
    });
    const council = (member: string): Promise<AgentRun> =>
      runAgent(repo, scenario, { env: { VIGIL_ROLE: 'council', VIGIL_MEMBER: member } });

    expect((await council('0')).stdout).toBe('round 0\n');
    expect((await council('0')).stdout).toBe('round 1\n');
    expect((await council('1')).stdout).toBe('round 0\n');
    expect((await council('0')).stdout).toBe('later\n');

    const review = await runAgent(repo, scenario, { env: { VIGIL_ROLE: 'reviewer' } });
    expect(review.stdout).toBe('review 0\n');
    expect(review.code).toBe(1);
    const review2 = await runAgent(repo, scenario, { env: { VIGIL_ROLE: 'reviewer' } });
    expect(review2.stdout).toBe('scripted-agent: no step for reviewer call 2\n');
    expect(review2.code).toBe(0);

    const advocate = await runAgent(repo, scenario, { env: { VIGIL_ROLE: 'devils-advocate' } });
    expect(advocate.stdout).toBe('scripted-agent: no step for devils-advocate call 1\n');

    const state = JSON.parse(read(repo, '.vigil/scripted-agent/state.json')) as { counts: Record<string, number> };
    expect(state.counts).toEqual({ 'council:0': 3, 'council:1': 1, reviewer: 2, 'devils-advocate': 1 });
    expect(
      calls(repo)
        .filter((c) => c.role === 'council')
        .map((c) => c.member),
    ).toEqual([0, 0, 1, 0]);
  });

  it('scripts council members per round, falling back to the shared rounds and default', async () => {
    const repo = makeRepo();
    const vote = (v: string, reason: string) => ({ output: `VOTE: ${v}\nREASON: ${reason}\n` });
    const scenario = scenarioFile({
      version: 1,
      iterations: [],
      roles: {
        council: {
          rounds: [vote('REJECT', 'shared 0'), vote('REJECT', 'shared 1')],
          default: vote('APPROVE', 'shared default'),
          members: {
            '0': { rounds: [vote('APPROVE', 'm0 r0')] },
            '1': { rounds: [vote('APPROVE', 'm1 r0'), { output: 'm1 r1\n', exitCode: 6 }], default: vote('CANNOT_VALIDATE', 'm1 default') },
          },
        },
        'devils-advocate': { rounds: [vote('REJECT', 'da 0')], default: vote('APPROVE', 'da default') },
      },
    });
    const council = (member: string): Promise<AgentRun> =>
      runAgent(repo, scenario, { env: { VIGIL_ROLE: 'council', VIGIL_MEMBER: member } });
    const say = async (member: string): Promise<string> => (await council(member)).stdout;

    // Members advance independently: member 1 is called three times before member 0's second call.
    expect(await say('1')).toBe('VOTE: APPROVE\nREASON: m1 r0\n');
    const m1r1 = await council('1');
    expect(m1r1.stdout).toBe('m1 r1\n');
    expect(m1r1.code).toBe(6);
    expect(await say('1')).toBe('VOTE: CANNOT_VALIDATE\nREASON: m1 default\n');
    expect(await say('0')).toBe('VOTE: APPROVE\nREASON: m0 r0\n');
    expect(await say('2')).toBe('VOTE: REJECT\nREASON: shared 0\n');
    // Member 0 has no step 1 and no default: the shared round 1, then the shared default.
    expect(await say('0')).toBe('VOTE: REJECT\nREASON: shared 1\n');
    expect(await say('0')).toBe('VOTE: APPROVE\nREASON: shared default\n');
    expect(await say('2')).toBe('VOTE: REJECT\nREASON: shared 1\n');
    expect(await say('1')).toBe('VOTE: CANNOT_VALIDATE\nREASON: m1 default\n');

    // The devil's advocate keeps one counter of its own, whatever VIGIL_MEMBER says.
    const advocate = (member?: string): Promise<AgentRun> =>
      runAgent(repo, scenario, { env: { VIGIL_ROLE: 'devils-advocate', ...(member === undefined ? {} : { VIGIL_MEMBER: member }) } });
    expect((await advocate()).stdout).toBe('VOTE: REJECT\nREASON: da 0\n');
    expect((await advocate('0')).stdout).toBe('VOTE: APPROVE\nREASON: da default\n');

    const state = JSON.parse(read(repo, '.vigil/scripted-agent/state.json')) as { counts: Record<string, number> };
    expect(state.counts).toEqual({ 'council:0': 3, 'council:1': 4, 'council:2': 2, 'devils-advocate': 2 });
  });

  it('runs a council whose members are all scripted and none shared, saying so past the script', async () => {
    const repo = makeRepo();
    const scenario = scenarioFile({
      version: 1,
      iterations: [],
      roles: {
        council: {
          members: {
            '0': { rounds: [{ output: 'VOTE: APPROVE\nREASON: done\n' }] },
            '1': { rounds: [{ output: 'VOTE: APPROVE\nREASON: tests pass\n' }] },
            '2': { rounds: [{ output: 'VOTE: REJECT\nREASON: docs missing\nISSUES: MEDIUM:no README section\n' }] },
          },
        },
      },
    });
    const results = await Promise.all(
      ['0', '1', '2'].map((member) => runAgent(repo, scenario, { env: { VIGIL_ROLE: 'council', VIGIL_MEMBER: member } })),
    );
    expect(results.map((r) => r.stdout.split('\n')[0])).toEqual(['VOTE: APPROVE', 'VOTE: APPROVE', 'VOTE: REJECT']);
    expect(results[2]?.stdout).toContain('ISSUES: MEDIUM:no README section\n');
    const again = await runAgent(repo, scenario, { env: { VIGIL_ROLE: 'council', VIGIL_MEMBER: '2' } });
    expect(again.code).toBe(0);
    expect(again.stdout).toBe('scripted-agent: no step for council:2 call 2\n');
  });

  it('exits 2 when members appear under a non-council role', async () => {
    const repo = makeRepo();
    const scenario = scenarioFile({ version: 1, iterations: [], roles: { reviewer: { members: { '0': {} } } } });
    const run = await runAgent(repo, scenario, { env: { VIGIL_ROLE: 'reviewer' } });
    expect(run.code).toBe(2);
    expect(run.stderr).toContain('scenario: roles.reviewer.members: unknown key (only roles.council accepts per-member scripts)');
  });

  it('keeps counters exact when council members run in parallel', async () => {
    const repo = makeRepo();
    const scenario = scenarioFile({ version: 1, iterations: [], roles: { council: { default: {} } } });
    const runs = [];
    for (let round = 0; round < 3; round++) {
      for (const member of ['0', '1', '2']) {
        runs.push(runAgent(repo, scenario, { env: { VIGIL_ROLE: 'council', VIGIL_MEMBER: member } }));
      }
    }
    const results = await Promise.all(runs);
    expect(results.every((r) => r.code === 0)).toBe(true);
    const state = JSON.parse(read(repo, '.vigil/scripted-agent/state.json')) as { counts: Record<string, number> };
    expect(state.counts).toEqual({ 'council:0': 3, 'council:1': 3, 'council:2': 3 });
    expect(calls(repo)).toHaveLength(9);
  });

  it('exits 143 promptly on SIGTERM during sleepMs, after its changes were made', async () => {
    const repo = makeRepo();
    const scenario = scenarioFile({
      version: 1,
      iterations: [{ writes: { 'done.txt': 'written' }, output: 'before sleep\n', sleepMs: 60_000 }],
    });
    const started = Date.now();
    const run = await runAgent(repo, scenario, {
      onSpawn: (kill) => {
        void waitFor(() => existsSync(join(repo, 'done.txt'))).then(() => kill('SIGTERM'));
      },
    });
    expect(run.code).toBe(143);
    expect(Date.now() - started).toBeLessThan(10_000);
    expect(run.stdout).toBe('before sleep\n');
    expect(read(repo, 'done.txt')).toBe('written');
  });

  it('sleepBeforeMs delays everything else', async () => {
    const repo = makeRepo();
    const scenario = scenarioFile({
      version: 1,
      iterations: [{ sleepBeforeMs: 60_000, writes: { 'late.txt': 'x' } }],
    });
    const run = await runAgent(repo, scenario, {
      onSpawn: (kill) => {
        // The call is recorded before the sleep; the write would come after it.
        void waitFor(() => existsSync(join(repo, '.vigil/scripted-agent/calls.jsonl'))).then(() => setTimeout(() => kill('SIGTERM'), 200));
      },
    });
    expect(run.code).toBe(143);
    expect(existsSync(join(repo, 'late.txt'))).toBe(false);
  });

  it('runs through the bash wrapper', async () => {
    const repo = makeRepo();
    const scenario = scenarioFile({ version: 1, iterations: [{ output: 'via wrapper\n', exitCode: 3 }] });
    const run = await runAgent(repo, scenario, { command: [WRAPPER] });
    expect(run.stdout).toBe('via wrapper\n');
    expect(run.code).toBe(3);
  });
});
