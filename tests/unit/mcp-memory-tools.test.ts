/**
 * `vigil_memory_store_pattern`, `vigil_memory_consolidate` and `vigil_code_search` through the MCP
 * protocol (the official SDK's client and `buildMcpServer`, linked in memory), as the builder of a
 * run calls them (the variables Vigil sets for an agent call, a real git repository): a pattern is
 * validated, redacted and left in the run's memory signal with Vigil's provenance, never the
 * caller's; oversized, over-many and another run's are refused with what to do; a consolidation is
 * requested. The code search answers `path:line` and the line from git's index, bounded, and refuses
 * every way out of the repository. Plus the pure rules (rules/memory-agent.ts). What reaches the
 * store when the call ends: tests/store/memory-agent.test.ts. Seed rows: loki_memory_store_pattern,
 * loki_consolidate_memory, loki_code_search (MCP tools), path security validation.
 */
import { readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { McpCodeSearchOutputSchema } from '../../schemas/mcp.js';
import {
  AGENT_PATTERN_LIMITS,
  McpMemoryConsolidateOutputSchema,
  McpMemoryStorePatternOutputSchema,
  MemorySignalLineSchema,
} from '../../schemas/memory-agent.js';
import { runDirPath } from '../../schemas/paths.js';
import { agentSignature, redactPattern, refusalOf } from '../../rules/memory-agent.js';
import { makeRepo } from '../support/harness.js';
import { agentCallEnv as agentEnv, okCall, refusedCall } from '../support/mcp-in-memory.js';

const GH_TOKEN = 'ghp_' + 'Q1w2E3r4T5y6U7i8O9p0A1s2D3f4G5h6J7k8';

const refused = refusedCall;
const ok = okCall;
const signalLines = (repo: string) =>
  readFileSync(path.join(repo, '.vigil', 'signals', 'MEMORY'), 'utf8')
    .trim()
    .split('\n')
    .map((l) => MemorySignalLineSchema.parse(JSON.parse(l)));

const lesson = {
  kind: 'anti_pattern',
  topic: 'Tests',
  title: 'Do not mock the clock in the carry tests',
  body: 'The carry tests compare real timestamps; a mocked clock made them pass while the code was wrong.',
  keywords: ['carry', 'clock'],
};

describe('vigil_memory_store_pattern from a run', () => {
  it("leaves the pattern in the run's memory signal, with the call's run and iteration (honest control)", async () => {
    const repo = makeRepo();
    const env = agentEnv(repo);
    const out = McpMemoryStorePatternOutputSchema.parse(await ok(env, 'vigil_memory_store_pattern', lesson));
    expect(out).toMatchObject({
      state: 'pending',
      kind: 'anti_pattern',
      redactions: 0,
      storedBy: { via: 'agent', runId: 'vigil-prd-7', iteration: 2 },
    });
    expect(out.note).toContain('when this agent call ends');
    const [line] = signalLines(repo);
    expect(line).toEqual({
      ask: 'store_pattern',
      runId: 'vigil-prd-7',
      iteration: 2,
      pattern: { kind: 'anti_pattern', topic: 'tests', title: lesson.title, body: lesson.body, keywords: ['carry', 'clock'] },
    });
  });

  it('adversarial: a secret in the pattern is redacted before anything is written, and the answer says so', async () => {
    const repo = makeRepo();
    const out = McpMemoryStorePatternOutputSchema.parse(
      await ok(agentEnv(repo), 'vigil_memory_store_pattern', {
        title: `Deploy with GITHUB_TOKEN=${GH_TOKEN}`,
        body: `export GITHUB_TOKEN=${GH_TOKEN} before npm publish`,
        keywords: [GH_TOKEN],
      }),
    );
    expect(out.redactions).toBeGreaterThanOrEqual(3);
    expect(out.note).toContain('secret(s) in it were replaced');
    const file = readFileSync(path.join(repo, '.vigil', 'signals', 'MEMORY'), 'utf8');
    expect(file).not.toContain(GH_TOKEN);
    expect(file).toContain('Deploy with');
  });

  it('adversarial: an oversized pattern is refused whole, with the bound, and nothing is written', async () => {
    const repo = makeRepo();
    const env = agentEnv(repo);
    const big = 'x'.repeat(AGENT_PATTERN_LIMITS.bodyChars + 1);
    expect(await refused(env, 'vigil_memory_store_pattern', { title: 'big', body: big })).toMatch(
      /body: the body is longer than 2000 characters: say it in fewer/,
    );
    expect(await refused(env, 'vigil_memory_store_pattern', { title: 't'.repeat(201), body: 'b' })).toMatch(/title is longer than 200/);
    const many = Array.from({ length: 21 }, (_, i) => `k${i}`);
    expect(await refused(env, 'vigil_memory_store_pattern', { title: 't', body: 'b', keywords: many })).toMatch(/at most 20 keywords/);
    expect(await refused(env, 'vigil_memory_store_pattern', { title: '   ', body: 'b' })).toMatch(/title: the title is empty/);
    expect(() => readFileSync(path.join(repo, '.vigil', 'signals', 'MEMORY'))).toThrow();
  });

  it("adversarial: a pattern claiming another run's provenance is refused; the call's own run is accepted", async () => {
    const repo = makeRepo();
    const env = agentEnv(repo, 'vigil-prd-7', 2);
    expect(await refused(env, 'vigil_memory_store_pattern', { ...lesson, runId: 'vigil-prd-OTHER' })).toMatch(
      /claims run "vigil-prd-OTHER", but this server serves an agent call of run "vigil-prd-7"/,
    );
    expect(await refused(env, 'vigil_memory_store_pattern', { ...lesson, repo: '/srv/elsewhere' })).toMatch(/leave repo out/);
    await ok(env, 'vigil_memory_store_pattern', { ...lesson, runId: 'vigil-prd-7' });
    expect(signalLines(repo)).toHaveLength(1);
    // A person's server (no run) cannot store as a run either.
    expect(await refused({}, 'vigil_memory_store_pattern', { ...lesson, runId: 'vigil-prd-7' })).toMatch(/serves no run/);
  });

  it('bounds one call: at most 20 patterns and requests; a reviewer (read-only) cannot store', async () => {
    const repo = makeRepo();
    const env = agentEnv(repo);
    for (let i = 0; i < AGENT_PATTERN_LIMITS.linesPerCall; i++)
      await ok(env, 'vigil_memory_store_pattern', { title: `lesson ${i}`, body: 'what it says' });
    expect(await refused(env, 'vigil_memory_store_pattern', { title: 'one more', body: 'b' })).toMatch(/at most 20 patterns/);
    expect(signalLines(repo)).toHaveLength(20);
    const reviewer = agentEnv(makeRepo(), 'vigil-prd-7', 2, 'reviewer');
    expect(await refused(reviewer, 'vigil_memory_store_pattern', lesson)).toMatch(/vigil_memory_store_pattern is for the builder/);
  });
});

describe('vigil_memory_consolidate from a run', () => {
  it('records the request for the worker, as the call; runs of its choosing are refused', async () => {
    const repo = makeRepo();
    const env = agentEnv(repo, 'vigil-prd-9', 4);
    const out = McpMemoryConsolidateOutputSchema.parse(await ok(env, 'vigil_memory_consolidate', {}));
    expect(out.state).toBe('requested');
    expect(signalLines(repo)).toEqual([{ ask: 'consolidate', runId: 'vigil-prd-9', iteration: 4 }]);
    expect(await refused(env, 'vigil_memory_consolidate', { runs: ['other'] })).toMatch(/its own run's consolidation/);
  });
});

describe('vigil_code_search', () => {
  const files = {
    'README.md': '# calc\n',
    'src/add.js': 'export function add(a, b) {\n  return a + b; // carry the one\n}\n',
    'src/sub.js': 'export function sub(a, b) {\n  return a - b;\n}\n',
    'docs/notes.md': 'How to ADD numbers.\n',
  };

  it('finds the lines, path:line and the line, in the run repository, untracked files included (honest control)', async () => {
    const repo = makeRepo({ files });
    writeFileSync(path.join(repo, 'src', 'new.js'), 'export const addAll = (xs) => xs.reduce(add, 0);\n');
    const env = agentEnv(repo);
    const out = McpCodeSearchOutputSchema.parse(await ok(env, 'vigil_code_search', { query: 'add' }));
    expect(out.repo).toBe(repo);
    expect(out.truncated).toBe(false);
    expect(out.hits).toEqual([
      { path: 'docs/notes.md', line: 1, snippet: 'How to ADD numbers.' },
      { path: 'src/add.js', line: 1, snippet: 'export function add(a, b) {' },
      { path: 'src/new.js', line: 1, snippet: 'export const addAll = (xs) => xs.reduce(add, 0);' },
    ]);
    const cased = McpCodeSearchOutputSchema.parse(await ok(env, 'vigil_code_search', { query: 'ADD', caseSensitive: true }));
    expect(cased.hits.map((h) => h.path)).toEqual(['docs/notes.md']);
    const inSrc = McpCodeSearchOutputSchema.parse(
      await ok(env, 'vigil_code_search', { query: 'return a [-+] b', regex: true, path: 'src' }),
    );
    expect(inSrc.hits.map((h) => `${h.path}:${h.line}`)).toEqual(['src/add.js:2', 'src/sub.js:2']);
    // A query that looks like an option is text.
    expect(McpCodeSearchOutputSchema.parse(await ok(env, 'vigil_code_search', { query: '--carry' })).hits).toEqual([]);
  });

  it("never searches Vigil's own folder (prompts, logs, signals), and bounds the hits", async () => {
    const repo = makeRepo({ files: { 'a.txt': Array.from({ length: 30 }, () => 'needle').join('\n') } });
    const env = agentEnv(repo);
    writeFileSync(path.join(runDirPath(repo, 'vigil-prd-7'), 'iteration-0001.log'), 'needle in a log\n');
    const out = McpCodeSearchOutputSchema.parse(await ok(env, 'vigil_code_search', { query: 'needle', limit: 5 }));
    expect(out.hits).toHaveLength(5);
    expect(out.truncated).toBe(true);
    expect(out.hits.every((h) => h.path === 'a.txt')).toBe(true);
  });

  it('adversarial: refuses every way out of the repository — ../../etc/passwd, an absolute path, a link out, another repo', async () => {
    const repo = makeRepo({ files });
    symlinkSync('/etc', path.join(repo, 'etc-link'));
    const env = agentEnv(repo);
    for (const p of ['../../etc/passwd', '/etc/passwd', 'src/../../x', 'etc-link', 'etc-link/passwd'])
      expect(await refused(env, 'vigil_code_search', { query: 'root', path: p })).toMatch(
        /is outside the repository .*: vigil_code_search searches that repository only/,
      );
    const other = makeRepo({ files: { 'secret.txt': 'root:x:0:0\n' } });
    expect(await refused(env, 'vigil_code_search', { query: 'root', repo: other })).toMatch(/searches its run's repository .* only/);
    // A person's server searches the repository it names, and refuses a folder that is none.
    const mine = McpCodeSearchOutputSchema.parse(await ok({}, 'vigil_code_search', { query: 'root', repo: other }));
    expect(mine.hits).toEqual([{ path: 'secret.txt', line: 1, snippet: 'root:x:0:0' }]);
    expect(await refused({}, 'vigil_code_search', { query: 'root', repo: '/etc' })).toMatch(/not inside a git work tree/);
  });
});

describe('the rules of a stored pattern', () => {
  it('redacts every field, keeps one line, and counts what it replaced', () => {
    const { pattern, redactions } = redactPattern({
      kind: 'pattern',
      topic: 'Deploy',
      title: `use\n${GH_TOKEN}`,
      body: `token ${GH_TOKEN}`,
      keywords: ['Deploy'],
    });
    expect(redactions).toBe(2);
    expect(JSON.stringify(pattern)).not.toContain(GH_TOKEN);
    expect(pattern.title).not.toContain('\n');
    expect(pattern.topic).toBe('deploy');
  });

  it('one identity per lesson, spacing and case aside; a line naming another run or iteration is refused', () => {
    expect(agentSignature({ title: 'Carry  the ONE' })).toBe(agentSignature({ title: 'carry the one' }));
    const line = { ask: 'consolidate' as const, runId: 'a', iteration: 3 };
    expect(refusalOf(line, { runId: 'a', iteration: 3 })).toBeNull();
    expect(refusalOf(line, { runId: 'b', iteration: 3 })).toMatch(/names run "a", but the call that left it is of run "b"/);
    expect(refusalOf(line, { runId: 'a', iteration: 4 })).toMatch(/names iteration 3/);
  });
});
