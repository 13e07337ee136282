/**
 * An agent's own writes to the lasting memory and its code search, end to end on the real dev
 * server, a real Postgres and the agent sandbox: the builder of iteration 1 runs its own
 * `vigil mcp` (the store out of its reach) and stores a pattern with a secret in it, tries to store
 * one as another run's, asks for a consolidation, searches the code and tries `../../etc/passwd`.
 * When its call ends the worker stores the pattern as that call's (run and iteration from the
 * worker, the secret gone), and iteration 2's prompt carries it, marked as the agent's word.
 * Seed rows: loki_memory_store_pattern, loki_consolidate_memory, loki_code_search.
 *
 * Knobs: the product's defaults, with the event store on — what `vigil start` sets wherever a
 * store is configured (here: DATABASE_URL, a fresh database of the embedded Postgres).
 */
import { chmodSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, beforeAll, expect, it } from 'vitest';
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
} from '../support/harness.js';
import { queryRows } from '../support/store-postgres.js';
import { startTestPostgres, type TestPostgres } from '../support/postgres.js';
import { patient } from '../support/patience.js';

// The agent's scripts, and Vigil's install, are readable in its sandbox.
const AGENT_DIR = mkdtempSync(path.join(os.tmpdir(), 'vigil-agent-memory-'));
process.env.VIGIL_SANDBOX_READABLE = [process.env.VIGIL_SANDBOX_READABLE, AGENT_DIR, ROOT].filter(Boolean).join(':');
let store: TestPostgres;
let url = '';
const w = fileWorker('agent-memory', () => {
  process.env.DATABASE_URL = url;
});
beforeAll(async () => {
  store = await startTestPostgres();
  url = await store.freshDatabase('agent_memory');
  process.env.DATABASE_URL = url;
}, patient(120_000));
afterAll(async () => {
  delete process.env.DATABASE_URL;
  await store?.cleanup();
});

const GH_TOKEN = 'ghp_' + 'Z1x2C3v4B5n6M7a8S9d0F1g2H3j4K5l6Q7w8';
const TITLE = 'adds two numbers: return a + b, never an offset';
const PRD = '# Calc\n\nadd(a, b) in src/add.js adds two numbers; the test "adds two numbers" passes.\n';
const FILES = {
  'README.md': '# calc\n',
  'src/add.js': '/** Adds two numbers. */\nexport const add = (a, b) => 0;\n',
};
const ROLES = {
  reviewer: { default: { output: 'Reviewed the diff.\nVERDICT: PASS\n' } },
  council: { default: { output: 'VOTE: REJECT\nREASON: not yet\n' } },
};

/** What the builder asks its own `vigil mcp`, each answer kept in `.vigil/agent-asked.json`. */
function builderScript(): string {
  const sdk = (p: string): string => pathToFileURL(path.join(ROOT, 'node_modules/@modelcontextprotocol/sdk/dist/esm', p)).href;
  const file = path.join(AGENT_DIR, 'ask.mjs');
  const calls = [
    [
      'vigil_memory_store_pattern',
      { title: TITLE, body: `add returned a + b + n; publish with GITHUB_TOKEN=${GH_TOKEN}`, keywords: ['add'] },
    ],
    ['vigil_memory_store_pattern', { title: 'stolen', body: 'as another run', runId: 'vigil-someone-else' }],
    ['vigil_memory_consolidate', {}],
    ['vigil_code_search', { query: 'export const add' }],
    ['vigil_code_search', { query: 'root', path: '../../etc/passwd' }],
  ];
  writeFileSync(
    file,
    `import { Client } from ${JSON.stringify(sdk('client/index.js'))};
import { StdioClientTransport } from ${JSON.stringify(sdk('client/stdio.js'))};
const client = new Client({ name: 'builder', version: '1.0.0' });
await client.connect(new StdioClientTransport({ command: process.execPath, args: [${JSON.stringify(CLI)}, 'mcp'], env: process.env }));
const out = [];
for (const [name, args] of ${JSON.stringify(calls)}) out.push(await client.callTool({ name, arguments: args }));
process.stdout.write(JSON.stringify(out));
await client.close();
`,
  );
  const agent = path.join(AGENT_DIR, 'agent.sh');
  writeFileSync(
    agent,
    `#!/bin/sh\n${JSON.stringify(SCRIPTED_AGENT)} --scenario "$1" || exit $?\n` +
      `if [ "$VIGIL_ROLE" = iteration ] && [ "$VIGIL_ITERATION" = 1 ]; then ` +
      `${JSON.stringify(process.execPath)} ${JSON.stringify(file)} > .vigil/agent-asked.json 2> .vigil/agent-asked.err; fi\n`,
  );
  chmodSync(agent, 0o755);
  return agent;
}

interface Answer {
  isError?: boolean;
  content: { type: string; text?: string }[];
  structuredContent?: Record<string, unknown>;
}

it(
  "a builder's pattern from its sandbox reaches the store as its call's, secret gone, and the next prompt; " +
    "another run's provenance and a path out of the repository are refused",
  async () => {
    const repo = makeRepo({ files: FILES });
    const id = uniqueId('agent-memory');
    const scenario = writeScenario(repo, {
      version: 1,
      roles: ROLES,
      iterations: [],
      default: { appends: { 'notes.txt': 'looked\n' }, sleepMs: 300 },
    });
    const agent = builderScript();
    const h = await startRun(
      w.env,
      w.taskQueue,
      { ...runInput(repo, scenario, { eventStore: true, agentCommand: [agent, scenario] }), prdPath: writePrd(PRD) },
      id,
    );
    // Iteration 3 has started: iteration 2's prompt was written after iteration 1's call was ingested.
    await waitForStatus(h, (s) => s.iteration >= 3, 120_000);
    await h.executeUpdate(stopUpdate, { args: [{ now: true, by: 'test', reason: 'two prompts are all this run is for' }] });
    await h.result();

    const raw = readFileSync(path.join(repo, '.vigil/agent-asked.json'), 'utf8');
    const why = `${raw} ${readFileSync(path.join(repo, '.vigil/agent-asked.err'), 'utf8')}`;
    const [stored, stolen, consolidate, search, passwd] = JSON.parse(raw || '[]') as Answer[];
    const text = (a: Answer | undefined): string => (a?.content ?? []).map((c) => c.text ?? '').join('\n');
    expect(stored?.isError ?? false, why).toBe(false);
    expect(stored?.structuredContent).toMatchObject({ state: 'pending', storedBy: { via: 'agent', runId: id, iteration: 1 } });
    expect(stored?.structuredContent?.redactions).toBeGreaterThanOrEqual(1);
    expect(stolen?.isError).toBe(true);
    expect(text(stolen)).toContain(`claims run "vigil-someone-else", but this server serves an agent call of run "${id}"`);
    expect(consolidate?.structuredContent).toMatchObject({ state: 'requested' });
    expect(search?.isError ?? false, text(search)).toBe(false);
    expect(search?.structuredContent?.hits).toEqual([
      { path: 'src/add.js', line: 2, snippet: expect.stringContaining('export const add') },
    ]);
    expect(passwd?.isError).toBe(true);
    expect(text(passwd)).toMatch(/\.\.\/\.\.\/etc\/passwd is outside the repository/);

    const rows = await queryRows<{ title: string; body: string; stored_by: Record<string, unknown>; importance: number }>(
      url,
      'select title, body, stored_by, importance from memory_patterns where stored_by is not null',
    );
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({ title: TITLE, stored_by: { via: 'agent', runId: id, iteration: 1 } });
    expect(JSON.stringify(rows)).not.toContain(GH_TOKEN);

    const second = readFileSync(path.join(repo, '.vigil/runs', id, 'iteration-0002.prompt.md'), 'utf8');
    const memory = second.slice(second.indexOf(EARLIER_RUNS_HEADING));
    expect(second).toContain(EARLIER_RUNS_HEADING);
    expect(memory).toContain(`${TITLE}: add returned a + b + n`);
    expect(memory).toContain(`[stored by an agent of run ${id} (iteration 1); not checked by Vigil]`);
    expect(second).not.toContain(GH_TOKEN);
  },
  patient(300_000),
);
