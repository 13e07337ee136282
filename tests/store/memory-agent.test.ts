/**
 * Patterns an agent stores and the consolidation it asks for, against a real Postgres (the
 * embedded one): the builder's `vigil_memory_store_pattern` (the MCP protocol, its server with
 * the variables of an agent call) leaves its signal; the worker's ingestion when the call ends
 * stores it as the call's — marked, below the evidence — where `vigil memory search`,
 * `vigil_memory_search` and the next prompt's retrieval find it, and consolidation keeps it. A
 * signal written by hand that names another run, a stale iteration, a secret, an oversized body or
 * no JSON: refused or cleaned, each with why. A person's server stores and consolidates in the store
 * directly; what a person forgot is not stored again. Seed rows: loki_memory_store_pattern,
 * loki_consolidate_memory.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { projectEventsTo } from '../../lib/event-store.js';
import { retrieveForPrompt } from '../../lib/lasting-memory.js';
import { ingestMemorySignals } from '../../lib/memory-agent.js';
import { consolidateMemory } from '../../lib/memory-consolidation.js';
import { searchMemory } from '../../lib/memory-reads.js';
import { forgetMemory } from '../../lib/memory-transfer.js';
import { McpMemorySearchOutputSchema } from '../../schemas/mcp.js';
import { McpMemoryConsolidateOutputSchema, McpMemoryStorePatternOutputSchema } from '../../schemas/memory-agent.js';
import { runDirPath } from '../../schemas/paths.js';
import { makeRepo } from '../support/harness.js';
import { agentCallEnv, okCall, refusedCall } from '../support/mcp-in-memory.js';
import { FAILED_THRICE_THEN_FIXED, memoryJournal, queryRows, useStorePostgres } from '../support/store-postgres.js';

const tp = useStorePostgres();
const q = queryRows;
const GH_TOKEN = 'ghp_' + 'M1n2B3v4C5x6Z7l8K9j0H1g2F3d4S5a6P7o8';
const budgets = { indexTokens: 100, timelineTokens: 100, entriesTokens: 800 };

const lesson = {
  kind: 'anti_pattern',
  title: 'Do not mock the clock in the carry tests',
  body: 'The carry tests compare real timestamps; a mocked clock made them pass while the code was wrong.',
  keywords: ['carry', 'clock'],
};

/** The worker's side when the builder's call ends (activities/iteration.ts). */
const ingest = (url: string | null, repo: string, runId = 'vigil-prd-7', iteration = 2) =>
  ingestMemorySignals(url, {
    runId,
    iteration,
    repoPath: repo,
    logPath: path.join(runDirPath(repo, runId), `iteration-000${iteration}.log`),
  });

describe("an agent's pattern", () => {
  it('is stored when the call ends as its run and iteration, marked; search, the MCP search and the next prompt find it; consolidation keeps it', async () => {
    const url = await tp.freshDatabase('agent_pattern');
    const repo = makeRepo();
    const pending = McpMemoryStorePatternOutputSchema.parse(await okCall(agentCallEnv(repo), 'vigil_memory_store_pattern', lesson));
    expect(pending.state).toBe('pending');

    const got = await ingest(url, repo);
    expect(got).toMatchObject({ refused: [], consolidated: false, stored: [{ title: lesson.title, redactions: 0 }] });
    const [row] = await q<{ stored_by: unknown; importance: number; evidence: number; kind: string; repo: string }>(
      url,
      'select stored_by, importance, evidence, kind, repo from memory_patterns',
    );
    expect(row).toMatchObject({ kind: 'anti_pattern', repo, evidence: 1, stored_by: { via: 'agent', runId: 'vigil-prd-7', iteration: 2 } });
    expect(row?.importance).toBeCloseTo(0.3);

    const pool = new pg.Pool({ connectionString: url, max: 1 });
    try {
      const [hit] = await searchMemory(pool, 'mocked clock', { repo });
      expect(hit?.title).toBe(lesson.title);
      expect(hit?.body).toContain('[stored by an agent of run vigil-prd-7 (iteration 2); not checked by Vigil]');
    } finally {
      await pool.end();
    }
    const mcp = McpMemorySearchOutputSchema.parse(
      await okCall({ VIGIL_DATABASE_URL: url }, 'vigil_memory_search', { query: 'carry clock' }),
    );
    expect(mcp.hits.map((h) => h.title)).toEqual([lesson.title]);
    const prompt = await retrieveForPrompt(url, {
      workflowId: 'vigil-prd-8',
      iteration: 2,
      repoPath: repo,
      task: 'Fix the carry tests: they fail with the real clock',
      taskType: 'implementation',
      budgets,
    });
    expect(prompt.text, prompt.text).toContain(lesson.title);

    // Consolidating every run keeps what no episode made; the signal was consumed, so nothing is stored twice.
    await consolidateMemory(url, null);
    expect(await q(url, 'select id from memory_patterns')).toHaveLength(1);
    expect((await ingest(url, repo)).stored).toEqual([]);
  });

  it('adversarial: a signal written by hand (another run, a stale iteration, a secret, oversized, no JSON) is refused or cleaned, each said', async () => {
    const url = await tp.freshDatabase('agent_pattern_forged');
    const repo = makeRepo();
    const line = (o: Record<string, unknown>) => JSON.stringify({ ask: 'store_pattern', runId: 'vigil-prd-7', iteration: 2, ...o });
    const pattern = (title: string, body = 'what it says') => ({ pattern: { title, body } });
    mkdirSync(path.join(repo, '.vigil', 'signals'), { recursive: true });
    mkdirSync(runDirPath(repo, 'vigil-prd-7'), { recursive: true });
    writeFileSync(
      path.join(repo, '.vigil', 'signals', 'MEMORY'),
      [
        line({ ...pattern('from another run'), runId: 'vigil-prd-OTHER' }),
        line({ ...pattern('left over'), iteration: 1 }),
        line(pattern(`token is ${GH_TOKEN}`, `use GITHUB_TOKEN=${GH_TOKEN}`)),
        line(pattern('huge', 'x'.repeat(2001))),
        'not json',
      ].join('\n'),
    );
    const got = await ingest(url, repo);
    expect(got.stored).toHaveLength(1);
    expect(got.stored[0]?.redactions).toBe(2);
    expect(got.refused).toEqual([
      expect.stringMatching(/^line 1: it names run "vigil-prd-OTHER", but the call that left it is of run "vigil-prd-7"/),
      expect.stringMatching(/^line 2: it names iteration 1, but the call that left it is iteration 2/),
      expect.stringMatching(/^line 4: pattern.body: the body is longer than 2000 characters/),
      'line 5: not JSON',
    ]);
    const rows = await q<{ title: string; body: string; stored_by: { runId: string } }>(
      url,
      'select title, body, stored_by from memory_patterns',
    );
    expect(rows).toHaveLength(1);
    expect(JSON.stringify(rows)).not.toContain(GH_TOKEN);
    expect(rows[0]?.stored_by.runId).toBe('vigil-prd-7');
  });

  it('without a store on the worker the signal is consumed and nothing is stored, said so', async () => {
    const repo = makeRepo();
    await okCall(agentCallEnv(repo), 'vigil_memory_store_pattern', lesson);
    expect(await ingest(null, repo)).toEqual({ stored: [], refused: ['no event store on this worker: not stored'], consolidated: false });
    expect((await ingest(null, repo)).refused).toEqual([]);
  });
});

describe('consolidation asked for', () => {
  it("by the builder: its run so far, when the call ends, not marked as the run's consolidation", async () => {
    const url = await tp.freshDatabase('agent_consolidate');
    const repo = makeRepo();
    // The run so far: three failing iterations of the same test, no outcome yet.
    const events = memoryJournal('r-1', Date.parse('2026-03-01T10:00:00Z'), repo, FAILED_THRICE_THEN_FIXED.slice(0, 6));
    expect((await projectEventsTo(url, { workflowId: 'vigil-prd-7', events })).problem).toBeNull();
    expect(await q(url, 'select id from memory_episodes')).toHaveLength(0);

    await okCall(agentCallEnv(repo, 'vigil-prd-7', 3), 'vigil_memory_consolidate', {});
    expect((await ingest(url, repo, 'vigil-prd-7', 3)).consolidated).toBe(true);
    expect(await q(url, "select iteration from memory_episodes where workflow_id = 'vigil-prd-7' order by iteration")).toEqual([
      { iteration: 1 },
      { iteration: 2 },
      { iteration: 3 },
    ]);
    expect(await q(url, "select kind from memory_patterns where kind = 'anti_pattern'")).toHaveLength(1);
    // Its end still consolidates it whole (the memory judge checks this row).
    expect(await q(url, 'select workflow_id from memory_consolidations')).toEqual([]);
  });

  it('by a person: in the store, now, as `vigil memory consolidate`', async () => {
    const url = await tp.freshDatabase('person_consolidate');
    const events = memoryJournal('r-1', Date.parse('2026-03-01T10:00:00Z'), '/repos/calc', FAILED_THRICE_THEN_FIXED.slice(0, 6));
    expect((await projectEventsTo(url, { workflowId: 'wf-1', events })).problem).toBeNull();
    const out = McpMemoryConsolidateOutputSchema.parse(await okCall({ VIGIL_DATABASE_URL: url }, 'vigil_memory_consolidate', {}));
    expect(out).toMatchObject({ state: 'done', result: { runs: 1, episodes: 3, antiPatterns: 1 } });
    expect(await q(url, 'select workflow_id from memory_consolidations')).toEqual([{ workflow_id: 'wf-1' }]);
  });
});

describe("a person's pattern", () => {
  it('is stored now as theirs; the same lesson again counts evidence; a forgotten one is not stored again', async () => {
    const url = await tp.freshDatabase('person_pattern');
    const env = { VIGIL_DATABASE_URL: url };
    const first = McpMemoryStorePatternOutputSchema.parse(
      await okCall(env, 'vigil_memory_store_pattern', { ...lesson, repo: '/repos/calc' }),
    );
    expect(first).toMatchObject({ state: 'stored', storedBy: { via: 'operator' } });
    const again = McpMemoryStorePatternOutputSchema.parse(
      await okCall(env, 'vigil_memory_store_pattern', {
        ...lesson,
        title: '  do not MOCK the clock in the carry tests ',
        repo: '/repos/calc',
      }),
    );
    expect(again.id).toBe(first.id);
    expect(again.note).toContain('stored again');
    expect(await q(url, 'select evidence from memory_patterns')).toEqual([{ evidence: 2 }]);

    expect(await forgetMemory(url, 'pattern', first.id ?? 0)).toBeTruthy();
    expect(await refusedCall(env, 'vigil_memory_store_pattern', { ...lesson, repo: '/repos/calc' })).toMatch(
      /a person forgot this anti_pattern .* it is not stored again/,
    );
  });
});
