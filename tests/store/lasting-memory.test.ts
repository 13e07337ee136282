/**
 * The memory that outlives a run against a real Postgres (the embedded one): the journal writer
 * consolidates a run once its outcome is stored (episodes, an anti-pattern with its derived_from
 * links, a fix that supersedes it, a skill); retrieval records what it retrieved once per
 * iteration and counts the access; forget deletes for good (a later consolidation does not bring
 * it back); export and import carry a repository's memory to another store; a secret in a trace
 * never reaches a table.
 */
import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { projectEventsTo } from '../../lib/event-store.js';
import { recordTrace, retrieveForPrompt } from '../../lib/lasting-memory.js';
import { consolidateMemory } from '../../lib/memory-consolidation.js';
import { listMemory, searchMemory, showMemory } from '../../lib/memory-reads.js';
import { exportMemory, forgetMemory, importMemory } from '../../lib/memory-transfer.js';
import { FAILED_THRICE_THEN_FIXED, memoryJournal, queryRows, useStorePostgres } from '../support/store-postgres.js';

const tp = useStorePostgres();

const GH_TOKEN = 'ghp_' + 'Z9y8X7w6V5u4T3s2R1q0P9o8N7m6L5k4J3i2';

/** A run whose test fails three times for one reason, then passes; its traces (one with a secret) first. */
async function storeRun(url: string, workflowId: string, repo: string, t0: number): Promise<void> {
  for (const n of [1, 2, 3, 4]) {
    await recordTrace(url, {
      workflowId,
      iteration: n,
      files: n === 4 ? ['src/add.js'] : ['src/add.js', 'test/add.test.js'],
      errors: n === 1 ? [`deploy failed: GITHUB_TOKEN=${GH_TOKEN}`] : [],
      testFailure: n < 4 ? 'Expected values to be strictly equal: 3 !== 4' : null,
      summary: n === 4 ? 'Carried the one.' : `Tried again with ${GH_TOKEN}`,
    });
  }
  const events = memoryJournal('r-1', t0, repo, FAILED_THRICE_THEN_FIXED);
  // Two batches, as the workflow sends them: the second holds the outcome, and consolidates.
  expect((await projectEventsTo(url, { workflowId, events: events.slice(0, 4) })).problem).toBeNull();
  expect((await projectEventsTo(url, { workflowId, events: events.slice(4) })).problem).toBeNull();
}

const q = queryRows;

describe('the memory in the event store', () => {
  it('the run-ending batch consolidates: episodes, an anti-pattern derived from them, its fix, a skill; secrets never stored', async () => {
    const url = await tp.freshDatabase('memory_consolidate');
    await storeRun(url, 'wf-1', '/repos/calc', Date.parse('2026-03-01T10:00:00Z'));
    const episodes = await q<{ iteration: number; outcome: string }>(
      url,
      'select iteration, outcome from memory_episodes order by iteration',
    );
    expect(episodes).toEqual([
      { iteration: 1, outcome: 'failure' },
      { iteration: 2, outcome: 'failure' },
      { iteration: 3, outcome: 'failure' },
      { iteration: 4, outcome: 'success' },
    ]);
    const pats = await q<{ id: string; kind: string; title: string; repo: string }>(
      url,
      'select id, kind, title, repo from memory_patterns order by kind',
    );
    expect(pats.map((p) => p.kind)).toEqual(['anti_pattern', 'pattern']);
    expect(pats[0]?.title).toBe(
      'Test "adds two numbers" failed 3 times for the same reason: Expected values to be strictly equal: N !== N',
    );
    expect(pats[0]?.repo).toBe('/repos/calc');
    const links = await q<{ relation: string; from_id: string; to_kind: string }>(
      url,
      'select relation, from_id, to_kind from memory_links order by relation, to_kind',
    );
    expect(links.filter((l) => l.relation === 'derived_from' && l.from_id === pats[0]?.id && l.to_kind === 'episode')).toHaveLength(3);
    expect(links.filter((l) => l.relation === 'supersedes')).toHaveLength(1);
    // Its other side, in the store (migration 8 lets every relation of the original in); the fix supports the skill.
    expect(links.filter((l) => l.relation === 'superseded_by' && l.from_id === pats[0]?.id)).toHaveLength(1);
    expect(links.filter((l) => l.relation === 'supports' && l.to_kind === 'skill')).toHaveLength(1);
    expect(await q(url, 'select task_kind from memory_skills')).toEqual([{ task_kind: 'add numbers' }]);
    // Consolidating again changes nothing.
    await consolidateMemory(url, null);
    expect((await q(url, 'select count(*)::int as n from memory_patterns'))[0]).toEqual({ n: 2 });
    for (const t of ['memory_traces', 'memory_episodes', 'memory_patterns', 'memory_skills']) {
      const dump = await q<{ t: string }>(url, `select string_agg(x::text, ' ') as t from ${t} x`);
      expect(dump[0]?.t, t).not.toContain(GH_TOKEN);
    }
    expect((await q<{ t: string }>(url, "select string_agg(x::text, ' ') as t from memory_traces x"))[0]?.t).toContain('[REDACTED');
  });

  it('retrieval is recorded once per iteration and counts the access; forget is for good', async () => {
    const url = await tp.freshDatabase('memory_retrieve');
    await storeRun(url, 'wf-1', '/repos/calc', Date.parse('2026-03-01T10:00:00Z'));
    const budgets = { indexTokens: 100, timelineTokens: 100, entriesTokens: 400 };
    // The first iteration explores: the whole timeline budget (docs/memory.md, the kind of task).
    const req = {
      workflowId: 'wf-2',
      iteration: 1,
      repoPath: '/repos/calc',
      task: 'Add numbers: adds two numbers with carry',
      taskType: 'exploration' as const,
      budgets,
    };
    const got = await retrieveForPrompt(url, req);
    expect(got.text).toContain('Test "adds two numbers" failed 3 times');
    expect(got.text).toContain('Timeline (earlier runs on this repository, newest first):');
    expect(got.chars.entries).toBeLessThanOrEqual(400 * 4);
    await retrieveForPrompt(url, req); // a retried call: nothing counted twice
    const anti = (
      await q<{ id: string; access_count: number }>(url, "select id, access_count from memory_patterns where kind = 'anti_pattern'")
    )[0];
    expect(anti?.access_count).toBe(1);
    expect(
      (await q<{ retrieved: unknown }>(url, "select retrieved from memory_traces where workflow_id = 'wf-2'"))[0]?.retrieved,
    ).toContainEqual({ kind: 'pattern', id: Number(anti?.id) });

    const pool = new pg.Pool({ connectionString: url, max: 1 });
    try {
      expect((await listMemory(pool, { repo: '/repos/calc' })).map((i) => i.kind)).toEqual(['anti_pattern', 'pattern', 'skill']);
      expect((await searchMemory(pool, 'strictly equal carry')).map((i) => i.id)).toContain(Number(anti?.id));
      const shown = await showMemory(pool, 'pattern', Number(anti?.id));
      expect(shown?.links).toEqual(expect.arrayContaining([expect.objectContaining({ relation: 'derived_from' })]));
    } finally {
      await pool.end();
    }
    expect(await forgetMemory(url, 'pattern', Number(anti?.id))).toMatchObject({ kind: 'anti_pattern' });
    expect(await forgetMemory(url, 'pattern', Number(anti?.id))).toBeNull();
    await consolidateMemory(url, null);
    expect(await q(url, "select id from memory_patterns where kind = 'anti_pattern'")).toEqual([]);
    const after = await retrieveForPrompt(url, { ...req, workflowId: 'wf-3' });
    expect(after.text).not.toContain('failed 3 times');
  });

  it('a repository exported from one store imports into another, under another checkout', async () => {
    const from = await tp.freshDatabase('memory_export');
    await storeRun(from, 'wf-1', '/repos/calc', Date.parse('2026-03-01T10:00:00Z'));
    await storeRun(from, 'wf-9', '/repos/other', Date.parse('2026-03-02T10:00:00Z'));
    const pool = new pg.Pool({ connectionString: from, max: 1 });
    let file: unknown;
    try {
      file = JSON.parse(JSON.stringify(await exportMemory(pool, '/repos/calc')));
    } finally {
      await pool.end();
    }
    const data = file as { episodes: unknown[]; patterns: { repo: string | null; from: unknown[] }[]; links: unknown[] };
    expect(data.episodes).toHaveLength(4);
    expect(data.patterns.filter((p) => p.repo === '/repos/calc')).toHaveLength(2);
    expect(data.patterns.find((p) => p.repo === '/repos/calc')?.from).toHaveLength(3);
    expect(JSON.stringify(file)).not.toContain(GH_TOKEN);

    const to = await tp.freshDatabase('memory_import');
    expect(await importMemory(to, file, '/work/calc')).toMatchObject({ episodes: 4, patterns: 2, skills: 1 });
    expect(await q(to, 'select distinct repo from memory_episodes')).toEqual([{ repo: '/work/calc' }]);
    // Consolidation there keeps what came in (its episodes are there too).
    await consolidateMemory(to, null);
    expect(
      (await q<{ kind: string }>(to, "select kind from memory_patterns where repo = '/work/calc' order by kind")).map((r) => r.kind),
    ).toEqual(['anti_pattern', 'pattern']);
  });
});
