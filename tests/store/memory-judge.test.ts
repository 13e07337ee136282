/**
 * The memory judge's store side against a real Postgres (activities/memory-judge.ts): a run whose
 * test failed for a reason close to an earlier run's is shown both anti-patterns as near-duplicates;
 * a merge and a lesson are applied (a judged `supersedes` link, `merged_into`, the lesson), survive
 * the next consolidation, and the merged item is no longer retrieved or found; an answer that does
 * not parse applies nothing.
 */
import pg from 'pg';
import { afterAll, expect, it } from 'vitest';
import { projectEventsTo } from '../../lib/event-store.js';
import { recordTrace, retrieveForPrompt } from '../../lib/lasting-memory.js';
import { consolidateMemory } from '../../lib/memory-consolidation.js';
import { searchMemory } from '../../lib/memory-reads.js';
import { applyJudgement, selectForJudgement } from '../../activities/memory-judge.js';
import { parseJudgeAnswer } from '../../rules/memory-judge.js';
import { FAILED_THRICE_THEN_FIXED, memoryJournal, queryRows, useStorePostgres } from '../support/store-postgres.js';
import { patient } from '../support/patience.js';

const tp = useStorePostgres();

const REPO = '/srv/calc';
/** A run whose test "adds two numbers" fails three times with `failure`, then passes. */
async function storeRun(url: string, workflowId: string, t0: number, failure: string): Promise<void> {
  for (const n of [1, 2, 3, 4])
    await recordTrace(url, {
      workflowId,
      iteration: n,
      files: ['src/add.js'],
      errors: [],
      testFailure: n < 4 ? failure : null,
      summary: n === 4 ? 'Returned a + b.' : null,
    });
  const events = memoryJournal(`${workflowId}-r`, t0, REPO, FAILED_THRICE_THEN_FIXED);
  expect((await projectEventsTo(url, { workflowId, events })).problem).toBeNull();
}

const q = queryRows;

it(
  'near-duplicates are shown together; a merge and a lesson apply, outlive consolidation, and the merged item is no longer retrieved',
  async () => {
    const url = await tp.freshDatabase('memory_judge_store');
    await storeRun(url, 'wf-one', Date.UTC(2026, 10, 1), 'Expected values to be strictly equal: 3 !== 4');
    await storeRun(url, 'wf-two', Date.UTC(2026, 10, 2), 'AssertionError: expected values to be strictly equal, got 5');
    await consolidateMemory(url, null);
    const antis = await q<{ id: string; title: string }>(
      url,
      "select id, title from memory_patterns where kind = 'anti_pattern' and repo = $1 order by id",
      [REPO],
    );
    expect(antis).toHaveLength(2);
    const [first, second] = antis.map((a) => Number(a.id)) as [number, number];

    // The second run's judgement is shown its own items and the first run's near-duplicate.
    const sel = await selectForJudgement(url, 'wf-two', REPO);
    expect(sel.items.map((i) => i.id)).toContain(first);
    expect(sel.pairs).toContainEqual([second, first]);
    expect(sel.worthACall).toBe(true);

    // A malformed answer is no plan: nothing to apply.
    expect(parseJudgeAnswer('{"merges": [{"keep": 1}]}', sel.items).ok).toBe(false);

    const plan = parseJudgeAnswer(
      JSON.stringify({
        lessons: [{ id: first, lesson: 'add() returns a + b: check it with strictEqual before claiming.' }],
        merges: [{ keep: first, merge: [second], reason: 'the same failure' }],
      }),
      sel.items,
    );
    expect(plan.ok).toBe(true);
    if (!plan.ok) return;
    expect(await applyJudgement(url, plan, 'wf-two')).toEqual({ lessons: 1, merges: 1 });

    // A later consolidation (of every run) keeps the judge's work.
    await consolidateMemory(url, null);
    expect(
      await q(url, 'select id, lesson, lesson_by, merged_into from memory_patterns where id = any($1) order by id', [[first, second]]),
    ).toEqual([
      {
        id: String(first),
        lesson: 'add() returns a + b: check it with strictEqual before claiming.',
        lesson_by: 'wf-two',
        merged_into: null,
      },
      { id: String(second), lesson: null, lesson_by: null, merged_into: String(first) },
    ]);
    expect(
      await q(url, "select relation, judged from memory_links where from_id = $1 and to_id = $2 and to_kind = 'pattern'", [first, second]),
    ).toEqual([{ relation: 'supersedes', judged: true }]);
    expect(
      await q(url, "select relation, judged from memory_links where from_id = $1 and to_id = $2 and to_kind = 'pattern' and judged", [
        second,
        first,
      ]),
    ).toEqual([{ relation: 'superseded_by', judged: true }]);

    // The merged item is neither found nor retrieved; the kept one leads with its lesson.
    const hits = await searchMemory(await pool(url), 'strictly equal values', { repo: REPO });
    expect(hits.map((h) => h.id)).not.toContain(second);
    expect(hits.find((h) => h.id === first)?.body).toMatch(/^Lesson: add\(\) returns a \+ b/);
    const got = await retrieveForPrompt(url, {
      workflowId: 'wf-three',
      iteration: 1,
      repoPath: REPO,
      task: 'add two numbers strictly equal',
      budgets: { indexTokens: 0, timelineTokens: 0, entriesTokens: 2000 },
    });
    expect(got.refs).toContainEqual({ kind: 'pattern', id: first });
    expect(got.refs).not.toContainEqual({ kind: 'pattern', id: second });
  },
  patient(120_000),
);

const pools: pg.Pool[] = [];
async function pool(url: string): Promise<pg.Pool> {
  const p = new pg.Pool({ connectionString: url, max: 1 });
  // An idle connection the server closes must not be an unhandled 'error' (the pool has no other listener).
  p.on('error', () => undefined);
  pools.push(p);
  return p;
}
afterAll(async () => {
  await Promise.all(pools.map((p) => p.end()));
});
