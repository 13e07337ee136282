/**
 * The memory that outlives a run, end to end on the real dev server and a real Postgres: run 1 on
 * a repository fails its test three times for the same reason, then fixes it and is approved; its
 * end consolidates the anti-pattern; run 2's first prompt carries it within the layer budgets
 * (and the episode records that it did); `vigil memory forget` removes it, and run 3's first
 * prompt no longer has it; a secret the agent printed and wrote in its summary never reaches a
 * table of the store. The memory judge (knob memoryJudge, on by default): a malformed answer leaves
 * the deterministic consolidation as it was and says why; a valid one puts its lesson on the item,
 * which the next run's prompt carries; what each call cost is stored and reported. A run's
 * builder, in the agent sandbox (which refuses the store), runs its own `vigil mcp` and finds the
 * memory in the snapshot its call was handed.
 *
 * Knobs: the product's defaults, with the event store on — what `vigil start` sets wherever a
 * store is configured (here: DATABASE_URL, a fresh database of the embedded Postgres).
 */
import { execFile } from 'node:child_process';
import { chmodSync, mkdtempSync, readFileSync, realpathSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import { pathToFileURL } from 'node:url';
import path from 'node:path';
import { promisify } from 'node:util';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import pg from 'pg';
import { afterAll, beforeAll, expect, it, vi } from 'vitest';
import { defaultKnobs } from '../../schemas/knobs.js';
import { EARLIER_RUNS_HEADING } from '../../rules/prompt.js';
import { stopUpdate } from '../../workflows/messages.js';
import {
  CLI,
  fileWorker,
  makeRepo,
  ROOT,
  runInput,
  SCRIPTED_AGENT,
  startRun,
  uniqueId,
  waitForStatus,
  writePrd,
  writeScenario,
  type ScenarioInput,
} from '../support/harness.js';
import { queryRows } from '../support/store-postgres.js';
import { startTestPostgres, type TestPostgres } from '../support/postgres.js';
import { patient } from '../support/patience.js';

const run = promisify(execFile);
// An agent that, in its sandbox, asks its own `vigil mcp` for the memory: its scripts, and Vigil's install, are readable there.
const AGENT_DIR = mkdtempSync(path.join(os.tmpdir(), 'vigil-memory-agent-'));
process.env.VIGIL_SANDBOX_READABLE = [process.env.VIGIL_SANDBOX_READABLE, AGENT_DIR, ROOT].filter(Boolean).join(':');
let store: TestPostgres;
let url = '';
const w = fileWorker('lasting-memory', () => {
  // The worker projects into (and reads memory from) the store DATABASE_URL names; set before it starts.
  process.env.DATABASE_URL = url;
});
beforeAll(async () => {
  store = await startTestPostgres();
  url = await store.freshDatabase('lasting_memory');
  process.env.DATABASE_URL = url;
}, patient(120_000));
afterAll(async () => {
  delete process.env.DATABASE_URL;
  await store?.cleanup();
});

const GH_TOKEN = 'ghp_' + 'Q1w2E3r4T5y6U7i8O9p0A1s2D3f4G5h6J7k8';

const FILES = {
  'README.md': '# calc\n\nAdds numbers.\n',
  'package.json': '{"name":"calc","type":"module","private":true,"scripts":{"test":"node --test"}}\n',
  'src/add.js': '/** Adds two numbers. */\nexport const add = (a, b) => 0;\n',
  'test/add.test.js':
    "import { test } from 'node:test';\nimport assert from 'node:assert/strict';\nimport { add } from " +
    "'../src/add.js';\ntest('adds two numbers', () => assert.strictEqual(add(1, 2), 3));\n",
};
const wrong = (n: number) => ({
  writes: {
    'src/add.js': `/** Adds two numbers. */\nexport const add = (a, b) => a + b + ${n};\n`,
    '.vigil/signals/SUMMARY': `Tried an offset of ${n}.`,
  },
});
const ROLES: NonNullable<ScenarioInput['roles']> = {
  checklist: {
    default: {
      output:
        '```json\n[{"id": "REQ-1", "title": "add(a, b) adds two numbers in src/add.js", "priority": "critical", "verify": "read src/add.js"}]\n```\n',
    },
  },
  'checklist-verifier': { default: { output: 'ITEM REQ-1: PASS - src/add.js adds\n' } },
  reviewer: { default: { output: 'Reviewed the diff.\nVERDICT: PASS\n' } },
  'devils-advocate': { default: { output: 'VERDICT: PASS\nVOTE: APPROVE\nREASON: found nothing\n' } },
  council: { default: { output: 'VOTE: APPROVE\nREASON: the test passes\n' } },
};
const PRD = '# Calc\n\nadd(a, b) in src/add.js adds two numbers; the test "adds two numbers" passes.\n';

const q = <T extends pg.QueryResultRow>(sql: string, args: unknown[] = []): Promise<T[]> => queryRows<T>(url, sql, args);

const STORE_ON = { eventStore: true };
const knobs = { ...defaultKnobs(), ...STORE_ON };
const firstPrompt = (repo: string, id: string): string =>
  readFileSync(path.join(repo, '.vigil/runs', id, 'iteration-0001.prompt.md'), 'utf8');
/** The memory section of a prompt: from its heading to the next blank line. */
function memorySection(prompt: string): string | null {
  const at = prompt.indexOf(`${EARLIER_RUNS_HEADING}\n`);
  if (at < 0) return null;
  const rest = prompt.slice(at + EARLIER_RUNS_HEADING.length + 1);
  const end = rest.indexOf('\n\n');
  return end < 0 ? rest : rest.slice(0, end);
}

/** A short run whose first prompt is all we look at: started, its first iteration done, stopped. */
async function briefRun(repo: string): Promise<string> {
  const id = uniqueId('memory-run');
  const scenario = writeScenario(repo, {
    version: 1,
    roles: ROLES,
    iterations: [],
    default: { appends: { 'notes.txt': 'looked\n' }, sleepMs: 300 },
  });
  const input = runInput(repo, scenario, STORE_ON);
  const h = await startRun(w.env, w.taskQueue, { ...input, prdPath: writePrd(PRD) }, id);
  // Iteration 2 has started: the first one's prompt is written and its trace recorded.
  await waitForStatus(h, (s) => s.iteration >= 2, 120_000);
  await h.executeUpdate(stopUpdate, { args: [{ now: true, by: 'test', reason: 'the first prompt is all this run is for' }] });
  await h.result();
  return id;
}

it(
  'run 2 starts with the anti-pattern run 1 consolidated, within the layer budgets; forget removes it; no secret is stored',
  async () => {
    const repo = makeRepo({ files: FILES });
    const scenario = writeScenario(repo, {
      version: 1,
      roles: ROLES,
      iterations: [
        // The agent fails once, printing a secret; then the test fails three times for the same reason.
        { stderr: `deploy failed: GITHUB_TOKEN=${GH_TOKEN}\n`, exitCode: 1 },
        {
          ...wrong(1),
          output: `export GITHUB_TOKEN=${GH_TOKEN}\n`,
          writes: { ...wrong(1).writes, '.vigil/signals/SUMMARY': `Tried an offset; pushed with ${GH_TOKEN}.` },
        },
        wrong(2),
        wrong(3),
        {
          writes: {
            'src/add.js': '/** Adds two numbers. */\nexport const add = (a, b) => a + b;\n',
            '.vigil/signals/SUMMARY': 'Removed the offset: add returns a + b.',
          },
          claim: 'file',
        },
      ],
    });
    const first = uniqueId('memory-run');
    const h1 = await startRun(w.env, w.taskQueue, { ...runInput(repo, scenario, STORE_ON), prdPath: writePrd(PRD) }, first);
    const o1 = await h1.result();
    expect(o1.status, o1.reason).toBe('council_approved');

    // Run 1's end consolidated: episodes, and the anti-pattern naming the test and the reason.
    const episodes = await q<{ iteration: number; outcome: string }>(
      'select iteration, outcome from memory_episodes where workflow_id = $1 order by iteration',
      [first],
    );
    expect(episodes.map((e) => e.outcome)).toEqual(['failure', 'failure', 'failure', 'failure', 'success']);
    const anti = await q<{ id: string; title: string }>("select id, title from memory_patterns where kind = 'anti_pattern'");
    expect(anti).toHaveLength(1);
    expect(anti[0]?.title).toMatch(
      /^Test "adds two numbers" failed 3 times for the same reason: (AssertionError \[ERR_ASSERTION\]: )?Expected values to be strictly equal: N !== N$/,
    );
    const antiId = Number(anti[0]?.id);

    // Run 2: its first prompt carries it, each layer within its budget.
    const second = await briefRun(repo);
    const section = memorySection(firstPrompt(repo, second));
    expect(section).not.toBeNull();
    expect(section).toContain(`[anti-pattern #${antiId}, tests] Test "adds two numbers" failed 3 times`);
    expect(section).toContain('What fixed it: iteration 5 changed src/add.js ("Removed the offset: add returns a + b.")');
    const trace = (
      await q<{ retrieved: { kind: string; id: number }[]; retrieved_chars: { index: number; timeline: number; entries: number } }>(
        'select retrieved, retrieved_chars from memory_traces where workflow_id = $1 and iteration = 1',
        [second],
      )
    )[0];
    expect(trace?.retrieved).toContainEqual({ kind: 'pattern', id: antiId });
    expect(trace?.retrieved_chars.index).toBeGreaterThan(0);
    expect(trace?.retrieved_chars.index).toBeLessThanOrEqual(knobs.memoryIndexTokens * 4);
    expect(trace?.retrieved_chars.timeline).toBeLessThanOrEqual(knobs.memoryTimelineTokens * 4);
    expect(trace?.retrieved_chars.entries).toBeLessThanOrEqual(knobs.memoryEntriesTokens * 4);
    expect(section?.length).toBeLessThanOrEqual((knobs.memoryIndexTokens + knobs.memoryTimelineTokens + knobs.memoryEntriesTokens) * 4 + 2);
    // Retrieval counted as reuse, and the episode of run 2's iteration says what it carried.
    expect(
      (await q<{ access_count: number }>('select access_count from memory_patterns where id = $1', [antiId]))[0]?.access_count,
    ).toBeGreaterThanOrEqual(1);
    // Run 2 stopped with --now: it closed before its consolidation, which follows in the worker (workflows/run/ending.ts).
    await vi.waitFor(
      async () =>
        expect(
          (await q<{ retrieved: unknown[] }>('select retrieved from memory_episodes where workflow_id = $1 and iteration = 1', [second]))[0]
            ?.retrieved ?? [],
        ).toContainEqual({ kind: 'pattern', id: antiId }),
      { timeout: patient(30_000), interval: 200 },
    );

    // `vigil memory forget`: gone, and run 3's first prompt no longer has it.
    const forgot = await run('node', [CLI, 'memory', 'forget', 'anti-pattern', String(antiId)], {
      env: { ...process.env, DATABASE_URL: url },
    });
    expect(forgot.stdout).toContain(`forgot anti_pattern ${antiId}: Test "adds two numbers" failed 3 times`);
    const third = await briefRun(repo);
    const later = memorySection(firstPrompt(repo, third)) ?? '';
    expect(later).not.toContain('failed 3 times');
    expect(await q("select id from memory_patterns where kind = 'anti_pattern'")).toEqual([]);

    // The secret the agent printed and wrote never reached the store.
    for (const t of ['run_events', 'memory_traces', 'memory_episodes', 'memory_patterns', 'memory_skills', 'memory_links']) {
      const dump = (await q<{ t: string | null }>(`select string_agg(x::text, ' ') as t from ${t} x`))[0]?.t ?? '';
      expect(dump, t).not.toContain(GH_TOKEN);
    }
    // What was redacted is there as redacted: the failed call's error line and the summary.
    const traces =
      (await q<{ t: string }>("select string_agg(x::text, ' ') as t from memory_traces x where workflow_id = $1", [first]))[0]?.t ?? '';
    expect(traces).toContain('deploy failed: GITHUB_TOKEN=[REDACTED');
    expect(traces).toContain('Tried an offset; pushed with [REDACTED');
  },
  patient(300_000),
);

const usage = (costUsd: number) => ({ '.vigil/signals/USAGE': JSON.stringify({ costUsd, inputTokens: 900, outputTokens: 120 }) });
const FIX = {
  writes: {
    'src/add.js': '/** Adds two numbers. */\nexport const add = (a, b) => a + b;\n',
    '.vigil/signals/SUMMARY': 'Removed the offset: add returns a + b.',
  },
  claim: 'file' as const,
};

it(
  'the memory judge: a malformed answer changes nothing and says why; a valid one puts its lesson on the item, the next prompt ' +
    'carries it, and the cost is reported',
  async () => {
    const repo = makeRepo({ files: FILES });
    const key = realpathSync(repo);
    // Run A: the same failure three times, then the fix; the memory judge answers without JSON.
    const malformed = writeScenario(repo, {
      version: 1,
      roles: { ...ROLES, memory: { default: { output: 'These look fine to me.\n', writes: usage(0.004) } } },
      iterations: [wrong(1), wrong(2), wrong(3), FIX],
    });
    const a = uniqueId('memory-judge');
    const oa = await (await startRun(w.env, w.taskQueue, { ...runInput(repo, malformed, STORE_ON), prdPath: writePrd(PRD) }, a)).result();
    expect(oa.status, oa.reason).toBe('council_approved');
    const items = await q<{ id: string; kind: string; title: string; lesson: string | null; merged_into: string | null }>(
      'select id, kind, title, lesson, merged_into from memory_patterns where repo = $1 order by kind',
      [key],
    );
    // The deterministic result, intact: the anti-pattern and the fix, no lesson, nothing merged.
    expect(items.map((i) => [i.kind, i.lesson, i.merged_into])).toEqual([
      ['anti_pattern', null, null],
      ['pattern', null, null],
    ]);
    expect(items[0]?.title).toMatch(/^Test "adds two numbers" failed 3 times for the same reason/);
    const ja = (
      await q<{ calls: number; usd: number; items: number; lessons: number; problem: string | null; log_path: string }>(
        'select calls, usd, items, lessons, problem, log_path from memory_judgements where workflow_id = $1',
        [a],
      )
    )[0];
    // Shown: the two items and, when an earlier test's repository failed the same way, the installation-wide one.
    expect(ja).toMatchObject({ calls: 1, usd: 0.004, lessons: 0 });
    expect(ja?.items).toBeGreaterThanOrEqual(2);
    expect(ja?.problem).toMatch(/no JSON object in the answer/);
    // The call was a hidden reviewing role: its prompt is outside the repository, and names the items.
    expect(path.basename(ja?.log_path ?? '')).toBe('memory-0004.log');
    expect(ja?.log_path.startsWith(repo)).toBe(false);
    const prompt = readFileSync((ja?.log_path ?? '').replace(/\.log$/, '.prompt.md'), 'utf8');
    expect(prompt).toContain(`### #${items[0]?.id} anti-pattern (this repository)`);

    // Run B fails the same way once, then fixes it: its items changed, and the judge answers as documented.
    const [anti, fix] = items.map((i) => Number(i.id));
    const answer = {
      lessons: [
        { id: anti, lesson: 'add() must return a + b exactly: an offset fails "adds two numbers".' },
        { id: fix, lesson: 'Return a + b from src/add.js.' },
      ],
      merges: [],
    };
    // Its fix says which files it read (the FILES_READ signal, as any agent may write it).
    const fixRead = { ...FIX, writes: { ...FIX.writes, '.vigil/signals/FILES_READ': 'src/add.js\ntest/add.test.js\n' } };
    const valid = writeScenario(repo, {
      version: 1,
      roles: {
        ...ROLES,
        memory: { default: { output: `Judged.\n\`\`\`json\n${JSON.stringify(answer)}\n\`\`\`\n`, writes: usage(0.006) } },
      },
      iterations: [wrong(4), fixRead],
    });
    const b = uniqueId('memory-judge');
    const ob = await (await startRun(w.env, w.taskQueue, { ...runInput(repo, valid, STORE_ON), prdPath: writePrd(PRD) }, b)).result();
    expect(ob.status, ob.reason).toBe('council_approved');
    const judged = await q<{ id: string; lesson: string | null; lesson_by: string | null }>(
      'select id, lesson, lesson_by from memory_patterns where id = any($1) order by id',
      [[anti, fix]],
    );
    expect(judged).toEqual([
      { id: String(anti), lesson: answer.lessons[0]?.lesson, lesson_by: b },
      { id: String(fix), lesson: answer.lessons[1]?.lesson, lesson_by: b },
    ]);
    expect((await q('select problem, lessons, usd from memory_judgements where workflow_id = $1', [b]))[0]).toEqual({
      problem: null,
      lessons: 2,
      usd: 0.006,
    });

    const env = { ...process.env, DATABASE_URL: url };
    // The fix's episode lists the files it read; vigil memory show prints them.
    const episode = (
      await q<{ id: string; files_read: string[] }>('select id, files_read from memory_episodes where workflow_id = $1 and iteration = 2', [
        b,
      ])
    )[0];
    expect(episode?.files_read).toEqual(['src/add.js', 'test/add.test.js']);
    expect(
      (await q<{ files_read: string[] }>('select files_read from memory_episodes where workflow_id = $1 and iteration = 1', [b]))[0]
        ?.files_read,
    ).toEqual([]);
    expect((await run('node', [CLI, 'memory', 'show', 'episode', String(episode?.id)], { env })).stdout).toContain(
      'files_read: ["src/add.js","test/add.test.js"]',
    );

    // The report says what judgement cost, apart from the run's spend; vigil memory list the total.
    const report = await run('node', [CLI, 'report', b], { env });
    expect(report.stdout).toContain('memory judgement (after the run, not in its spend): 1 call(s), 0.006 USD — 2 lesson(s), 0 merge(s)');
    const reportA = await run('node', [CLI, 'report', a], { env });
    expect(reportA.stdout).toMatch(
      /memory judgement \(after the run, not in its spend\): 1 call\(s\), 0\.004 USD — changed nothing: no JSON object/,
    );
    const list = await run('node', [CLI, 'memory', 'list', '--json'], { env });
    // The installation's total: these two calls (and the first test's run, whose judge had no script: no cost, no change).
    const total = (JSON.parse(list.stdout) as { judgement: { calls: number; usd: number; lessons: number; refused: number } }).judgement;
    expect(total).toMatchObject({ usd: 0.01, lessons: 2 });
    expect(total.calls).toBeGreaterThanOrEqual(2);
    expect(total.refused).toBe(total.calls - 1);
    expect((await run('node', [CLI, 'memory', 'list'], { env })).stdout).toMatch(
      /memory judgement: \d+ call\(s\) over \d+ run\(s\), 0\.01 USD; 2 lesson\(s\), 0 merge\(s\); \d+ answer\(s\) changed nothing/,
    );

    // The next run's first prompt carries the lesson with the item.
    const c = await briefRun(repo);
    expect(memorySection(firstPrompt(repo, c))).toContain(`[anti-pattern #${anti}, tests] Lesson: ${answer.lessons[0]?.lesson}`);

    // Its iterations were handed the memory as a snapshot, in the run's private folder (beside the judge's log of run A's).
    const snapshotFile = path.join(path.dirname(path.dirname(ja?.log_path ?? '')), c, 'memory-snapshot.json');
    const snapshot = JSON.parse(readFileSync(snapshotFile, 'utf8')) as { runId: string; items: { ref: { id: number }; body: string }[] };
    expect(snapshot.runId).toBe(c);
    expect(snapshot.items.find((i) => i.ref.id === anti)?.body).toContain(`Lesson: ${answer.lessons[0]?.lesson}`);
    // vigil_memory_search as the agent's own MCP server runs it inside the run's sandbox: the store out of reach, the snapshot searched.
    const inRun = { VIGIL_RUN_ID: c, VIGIL_MEMORY_SNAPSHOT: snapshotFile };
    const storeEnvs: Record<string, string>[] = [{}, { DATABASE_URL: 'postgres://vigil@127.0.0.1:1/refused' }];
    for (const storeEnv of storeEnvs) {
      const mcp = new Client({ name: 'agent-in-sandbox', version: '1.0.0' });
      const bare = Object.fromEntries(
        Object.entries(process.env).filter(
          (e): e is [string, string] => e[1] !== undefined && !e[0].startsWith('VIGIL_') && e[0] !== 'DATABASE_URL',
        ),
      );
      await mcp.connect(
        new StdioClientTransport({
          command: process.execPath,
          args: [CLI, 'mcp'],
          env: { ...bare, VIGIL_HOME: path.dirname(snapshotFile), ...inRun, ...storeEnv },
          stderr: 'ignore',
        }),
      );
      try {
        const got = await mcp.callTool({ name: 'vigil_memory_search', arguments: { query: 'add a number strictly' } });
        const out = got.structuredContent as { source: string; hits: { id: number; kind: string; body: string }[] };
        expect(out.source, JSON.stringify(storeEnv)).toBe('snapshot');
        expect(out.hits[0]).toMatchObject({ id: anti, kind: 'anti_pattern' });
        expect(out.hits[0]?.body).toContain('Lesson: ');
      } finally {
        await mcp.close();
      }
    }

    // And from inside the sandbox: the builder of a run runs vigil mcp itself and asks it (the store is refused there).
    const sdk = (p: string): string => pathToFileURL(path.join(ROOT, 'node_modules/@modelcontextprotocol/sdk/dist/esm', p)).href;
    const search = path.join(AGENT_DIR, 'search.mjs');
    writeFileSync(
      search,
      `import { Client } from ${JSON.stringify(sdk('client/index.js'))};
import { StdioClientTransport } from ${JSON.stringify(sdk('client/stdio.js'))};
const client = new Client({ name: 'builder', version: '1.0.0' });
await client.connect(new StdioClientTransport({ command: process.execPath, args: [${JSON.stringify(CLI)}, 'mcp'], env: process.env }));
const r = await client.callTool({ name: 'vigil_memory_search', arguments: { query: 'add a number strictly' } });
process.stdout.write(JSON.stringify({ env: { run: process.env.VIGIL_RUN_ID ?? null, snapshot: process.env.VIGIL_MEMORY_SNAPSHOT ?? null }, result: r }));
await client.close();
`,
    );
    const agent = path.join(AGENT_DIR, 'agent.sh');
    writeFileSync(
      agent,
      `#!/bin/sh\n${JSON.stringify(SCRIPTED_AGENT)} --scenario "$1" || exit $?\n` +
        `if [ "$VIGIL_ROLE" = iteration ] && [ "$VIGIL_ITERATION" = 1 ]; then ` +
        `${JSON.stringify(process.execPath)} ${JSON.stringify(search)} > .vigil/memory-search.json 2> ` +
        `.vigil/memory-search.err; fi\n`,
    );
    chmodSync(agent, 0o755);
    const d = uniqueId('memory-run');
    const brief = writeScenario(repo, {
      version: 1,
      roles: ROLES,
      iterations: [],
      default: { appends: { 'notes.txt': 'looked\n' }, sleepMs: 300 },
    });
    const hd = await startRun(
      w.env,
      w.taskQueue,
      { ...runInput(repo, brief, { ...STORE_ON, agentCommand: [agent, brief] }), prdPath: writePrd(PRD) },
      d,
    );
    await waitForStatus(hd, (s) => s.iteration >= 2, 120_000);
    await hd.executeUpdate(stopUpdate, { args: [{ now: true, by: 'test', reason: 'the first call is all this run is for' }] });
    const od = await hd.result();
    const inside = readFileSync(path.join(repo, '.vigil/memory-search.json'), 'utf8');
    const asked = JSON.parse(inside || '{}') as {
      env?: { run: string; snapshot: string };
      result?: { structuredContent?: { source: string; hits: { id: number; body: string }[] } };
    };
    // The sandbox shows the snapshot at a path of its own (the call's readable files), and names that one.
    expect(asked.env?.run, `${inside} ${readFileSync(path.join(repo, '.vigil/memory-search.err'), 'utf8')} ${JSON.stringify(od)}`).toBe(d);
    expect(asked.env?.snapshot).toMatch(/memory-snapshot\.json$/);
    expect(asked.result?.structuredContent?.source).toBe('snapshot');
    expect(asked.result?.structuredContent?.hits[0]).toMatchObject({ id: anti });
    expect(asked.result?.structuredContent?.hits[0]?.body).toContain(`Lesson: ${answer.lessons[0]?.lesson}`);
  },
  patient(300_000),
);
