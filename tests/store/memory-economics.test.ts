/**
 * Token economics per agent call against a real Postgres (the embedded one): the retrieval
 * records what the prompt read from memory, the trace what the call added (its texts and its
 * agent's stored patterns), and `memory_traces.economics` holds both with the thresholds crossed;
 * the run's next retrieval compresses its entries when the last call's discovery/read ratio passed
 * 0.15, and says it did. The honest control: a call that added little leaves the next prompt
 * whole. Seed row: token economics (§5.4).
 */
import { describe, expect, it } from 'vitest';
import { poolFor } from '../../lib/event-store.js';
import { recordTrace, retrieveForPrompt } from '../../lib/lasting-memory.js';
import { memoryEconomics } from '../../lib/memory-economics-report.js';
import { storeAgentPattern } from '../../lib/memory-agent.js';
import { inTransaction } from '../../lib/memory-store.js';
import type { CallEconomics, ReadSide } from '../../rules/memory-economics.js';
import { queryRows, useStorePostgres } from '../support/store-postgres.js';

const tp = useStorePostgres();
const REPO = '/repos/economy';
const budgets = { indexTokens: 100, timelineTokens: 100, entriesTokens: 800 };
const TASK = 'Fix the carry: add(a, b) must carry the one when two digits pass nine';

async function memoryOf(url: string): Promise<void> {
  const by = { via: 'operator' as const, by: 'test', at: new Date().toISOString() };
  const long = (what: string) => `${what}. ${'Keep the reasoning short and the tests honest about it. '.repeat(20)}`;
  await inTransaction(url, async (db) => {
    await storeAgentPattern(
      db,
      { kind: 'pattern', topic: 'carry', title: 'Carry the one in add', body: long('add must carry'), keywords: ['carry'] },
      by,
      REPO,
    );
    for (const t of ['deploy', 'docs', 'lint', 'release', 'ui'])
      await storeAgentPattern(db, { kind: 'pattern', topic: t, title: `About ${t}`, body: long(`the ${t} step`), keywords: [t] }, by, REPO);
  });
}

type Economics = Partial<CallEconomics> & { read?: ReadSide; acted?: string[] };
const economicsOf = async (url: string, wf: string, iteration: number): Promise<Economics> =>
  (
    await queryRows<{ economics: Economics }>(url, 'select economics from memory_traces where workflow_id = $1 and iteration = $2', [
      wf,
      iteration,
    ])
  )[0]?.economics ?? {};

describe('token economics per agent call', () => {
  it('a call that added much against what it read: recorded, and the next prompt’s entries are compressed', async () => {
    const url = await tp.freshDatabase('economy_compress');
    await memoryOf(url);
    const first = await retrieveForPrompt(url, {
      workflowId: 'wf-1',
      iteration: 1,
      repoPath: REPO,
      task: TASK,
      taskType: 'implementation',
      budgets,
    });
    expect(first.text).toContain('Carry the one in add');
    expect(first.text).not.toContain('compressed');
    await recordTrace(url, {
      workflowId: 'wf-1',
      iteration: 1,
      files: ['src/add.js', 'test/add.test.js'],
      errors: [],
      testFailure: null,
      summary: 'Carried the one.',
      storedChars: 2_000,
    });
    const e1 = await economicsOf(url, 'wf-1', 1);
    expect(e1.read?.entriesLoaded).toBe(1);
    expect(e1.read?.availableChars).toBeGreaterThan(e1.read?.chars.entries ?? 0);
    expect(e1.discoveryTokens).toBeGreaterThan(500);
    expect(e1.ratio).toBeGreaterThan(0.15);
    expect(e1.savingsPercent).toBeGreaterThanOrEqual(50);
    expect(e1.actions).toEqual(['compress_layer3', 'reorganize_topic_index']);

    const second = await retrieveForPrompt(url, {
      workflowId: 'wf-1',
      iteration: 2,
      repoPath: REPO,
      task: TASK,
      taskType: 'implementation',
      budgets,
    });
    expect(second.text).toContain('weighed for implementation; compressed):');
    expect(second.chars.entries).toBeLessThan(first.chars.entries);
    expect((await economicsOf(url, 'wf-1', 2)).acted).toEqual(['compress_layer3']);

    // What `vigil memory economics --run wf-1` shows: each call, oldest first, and the totals.
    await recordTrace(url, { workflowId: 'wf-1', iteration: 2, files: ['src/add.js'], errors: [], testFailure: null, summary: 'ok' });
    const shown = await memoryEconomics(poolFor(url), { run: 'wf-1', limit: 50 });
    expect(shown.calls.map((c) => [c.iteration, c.actions, c.acted])).toEqual([
      [1, ['compress_layer3', 'reorganize_topic_index'], []],
      [2, [], ['compress_layer3']],
    ]);
    expect(shown.totals).toMatchObject({ calls: 2, crossed: { compress_layer3: 1, reorganize_topic_index: 1 } });
    expect(shown.totals.readTokens).toBe(shown.calls[0]!.readTokens + shown.calls[1]!.readTokens);
    expect((await memoryEconomics(poolFor(url), { run: 'wf-other', limit: 50 })).calls).toEqual([]);
  });

  it('honest control: a call that added little leaves the next prompt whole', async () => {
    const url = await tp.freshDatabase('economy_control');
    await memoryOf(url);
    const first = await retrieveForPrompt(url, {
      workflowId: 'wf-2',
      iteration: 1,
      repoPath: REPO,
      task: TASK,
      taskType: 'implementation',
      budgets,
    });
    await recordTrace(url, { workflowId: 'wf-2', iteration: 1, files: ['src/add.js'], errors: [], testFailure: null, summary: 'ok' });
    const e1 = await economicsOf(url, 'wf-2', 1);
    expect(e1.actions).toEqual([]);
    expect(e1.ratio).toBeLessThanOrEqual(0.15);
    const second = await retrieveForPrompt(url, {
      workflowId: 'wf-2',
      iteration: 2,
      repoPath: REPO,
      task: TASK,
      taskType: 'implementation',
      budgets,
    });
    expect(second.text).not.toContain('compressed');
    expect(second.chars.entries).toBe(first.chars.entries);
    expect((await economicsOf(url, 'wf-2', 2)).acted).toEqual([]);
  });
});
