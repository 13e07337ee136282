/**
 * `vigil mcp` as an MCP client meets it: the official SDK's client spawns `node bin/vigil.js mcp`
 * (stdio) against the suite's dev server and a `vigil worker` process, and drives a run with the
 * product's default knobs end to end — start, status, a directive, pause, resume, report — while
 * the run's own agent (the scripted agent, then a small script) calls `vigil_task_complete` through
 * its own `vigil mcp` at iteration 3: the run judges that claim (code review, checklist, council)
 * and the council approves it. Refusals come back as tool errors in the CLI's words, a PRD outside
 * the repository among them. The same server over streamable HTTP: tests/e2e/mcp-http.test.ts.
 */
import { chmodSync, copyFileSync, existsSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CheckpointsJsonSchema, MessageJsonSchema, StartedJsonSchema } from '../../schemas/cli-output.js';
import {
  McpMemoryIndexSchema,
  McpMemorySearchOutputSchema,
  McpReportOutputSchema,
  McpRunTasksSchema,
  McpStatusOutputSchema,
  TaskCompleteClaimSchema,
} from '../../schemas/mcp.js';
import type { MemoryExport } from '../../schemas/lasting-memory.js';
import { importMemory } from '../../lib/memory-transfer.js';
import { runDirPath } from '../../schemas/paths.js';
import {
  assertBuilt,
  CLI,
  makeRepo,
  ROOT,
  SCRIPTED_AGENT,
  temporalAddress,
  uniqueId,
  writePrd,
  writeScenario,
} from '../support/harness.js';
import { startTestPostgres, type TestPostgres } from '../support/postgres.js';
import { CLI_CWD, cleanEnv, startWorkerProcess, waitUntil, type WorkerProcess } from './cli-helpers.js';
import { MCP_TOOLS } from '../support/mcp-tools.js';
import { patient } from '../support/patience.js';

let pg: TestPostgres;
const AGENT_DIR = mkdtempSync(path.join(os.tmpdir(), 'vigil-mcp-agent-'));
let worker: WorkerProcess;
let env: Record<string, string>;
let mcp: Client;
const TOOLS = MCP_TOOLS;

beforeAll(async () => {
  assertBuilt();
  pg = await startTestPostgres();
  // A store configured: runs are journalled into it (the default then), and vigil_report reads it.
  // The agent's scripts, the scripted agent they call and the vigil it claims through live outside
  // the repository: the worker's operator shows them to the agent's sandbox read-only, as
  // docs/security.md says for tools outside PATH.
  env = {
    TEMPORAL_ADDRESS: temporalAddress(),
    VIGIL_TASK_QUEUE: uniqueId('mcp'),
    VIGIL_DATABASE_URL: await pg.freshDatabase('vigil_mcp'),
    VIGIL_SANDBOX_READABLE: [AGENT_DIR, ROOT].join(':'),
  };
  worker = await startWorkerProcess(env);
  mcp = new Client({ name: 'vigil-e2e', version: '1.0.0' });
  await mcp.connect(
    new StdioClientTransport({ command: process.execPath, args: [CLI, 'mcp'], env: cleanEnv(env), cwd: CLI_CWD, stderr: 'pipe' }),
  );
}, patient(180_000));

afterAll(async () => {
  await mcp?.close();
  await worker?.stop();
  await pg?.cleanup();
});

const call = async (name: string, args: Record<string, unknown>): Promise<CallToolResult> =>
  (await mcp.callTool({ name, arguments: args })) as CallToolResult;
const text = (r: CallToolResult): string => r.content.map((c) => (c.type === 'text' ? c.text : '')).join('\n');
/** A tool's structured output, failing the test with the tool's error when it refused. */
async function ok(name: string, args: Record<string, unknown>): Promise<Record<string, unknown>> {
  const r = await call(name, args);
  expect(r.isError ?? false, text(r)).toBe(false);
  return r.structuredContent as Record<string, unknown>;
}
const status = async (id: string) => McpStatusOutputSchema.parse(await ok('vigil_status', { id })).run;
/** A resource's text (every resource here is text: JSON or Markdown). */
const resourceText = async (uri: string): Promise<string> => ((await mcp.readResource({ uri })).contents[0] as { text: string }).text;

const vote = { output: 'Read the evidence.\nVOTE: APPROVE\nREASON: the feature is there and documented\n' };

/**
 * The run's agent: the scripted agent for every call, then at iteration 3 a script that claims
 * completion through its own `vigil mcp` (the variables Vigil set for the call are all it has).
 */
function agentCommand(): string {
  const dir = AGENT_DIR;
  const scenario = writeScenario(dir, {
    version: 1,
    iterations: [
      // Long enough for a directive and a pause to arrive while it works.
      { writes: { 'src/feature.js': '/** The feature. */\nexport const feature = 1;\n' }, sleepMs: 6000 },
      { appends: { 'src/feature.js': '/** More of it. */\nexport const more = 2;\n' } },
      { appends: { 'README.md': '\n## feature\n\n`feature` is exported from src/feature.js.\n' } },
    ],
    default: { appends: { 'src/feature.js': '// more work\n' } },
    roles: {
      checklist: {
        default: {
          output:
            '```json\n[{"id": "REQ-1", "title": "The feature exists in src/feature.js", "priority": "critical", "verify": "read src/feature.js"}]\n```\n',
        },
      },
      'checklist-verifier': { default: { output: 'ITEM REQ-1: PASS - src/feature.js has it\n' } },
      reviewer: { default: { output: 'Reviewed the diff.\nVERDICT: PASS\n' } },
      'devils-advocate': { default: { output: 'VERDICT: PASS\nVOTE: APPROVE\nREASON: found nothing\n' } },
      council: { default: vote },
    },
  });
  // Beside the scripts, where the agent's sandbox shows it.
  const scenarioFile = path.join(dir, 'scenario.json');
  copyFileSync(scenario, scenarioFile);
  const sdk = (p: string): string => pathToFileURL(path.join(ROOT, 'node_modules/@modelcontextprotocol/sdk/dist/esm', p)).href;
  const claim = path.join(dir, 'claim.mjs');
  writeFileSync(
    claim,
    `import { Client } from ${JSON.stringify(sdk('client/index.js'))};
import { StdioClientTransport } from ${JSON.stringify(sdk('client/stdio.js'))};
const client = new Client({ name: 'builder', version: '1.0.0' });
await client.connect(new StdioClientTransport({ command: process.execPath, args: [${JSON.stringify(CLI)}, 'mcp'], env: process.env }));
const evidence = ['src/feature.js exports feature', 'README.md documents it'];
const r = await client.callTool({
  name: 'vigil_task_complete',
  arguments: { summary: 'The feature is exported and documented.', evidence, confidence: 0.85 },
});
process.stdout.write('vigil_task_complete: ' + JSON.stringify(r) + '\\n');
await client.close();
process.exit(r.isError ? 1 : 0);
`,
  );
  const agent = path.join(dir, 'agent.sh');
  writeFileSync(
    agent,
    `#!/bin/sh\n${JSON.stringify(SCRIPTED_AGENT)} --scenario ${JSON.stringify(scenarioFile)} || exit $?\n` +
      `if [ "$VIGIL_ROLE" = iteration ] && [ "$VIGIL_ITERATION" = 3 ]; then exec ${JSON.stringify(process.execPath)} ${JSON.stringify(claim)}; fi\n`,
  );
  chmodSync(agent, 0o755);
  return agent;
}

describe('vigil mcp over stdio', () => {
  let runId = '';

  it('lists the tools and the resource templates', async () => {
    const tools = (await mcp.listTools()).tools;
    expect(tools.map((t) => t.name).sort()).toEqual([...TOOLS].sort());
    for (const t of tools) expect(t.outputSchema?.type, t.name).toBe('object');
    const templates = (await mcp.listResourceTemplates()).resourceTemplates.map((t) => t.uriTemplate).sort();
    expect(templates).toEqual([
      'vigil://runs/{id}/continuity',
      'vigil://runs/{id}/handoff',
      'vigil://runs/{id}/report',
      'vigil://runs/{id}/status',
      'vigil://runs/{id}/tasks',
    ]);
    expect((await mcp.listResources()).resources.map((r) => r.uri)).toEqual(['vigil://memory/index']);
  });

  it("serves the lasting memory's index: its topics, with their count per kind", async () => {
    const index = async () => McpMemoryIndexSchema.parse(JSON.parse(await resourceText('vigil://memory/index')));
    const before = await index();
    const repo = `/srv/mcp-index-${uniqueId('repo')}`;
    const pattern = (kind: 'pattern' | 'anti_pattern', topic: string, n: number) => ({
      repo,
      kind,
      signature: `${topic}-${kind}-${n}`,
      topic,
      title: `${kind} ${n} about ${topic}`,
      body: `what ${n} says`,
      keywords: [topic],
      evidence: 1,
      runs: 1,
      firstSeen: null,
      lastSeen: null,
      importance: 0.5,
      from: [],
    });
    await importMemory(env.VIGIL_DATABASE_URL as string, {
      vigilMemory: 1,
      repo,
      exportedAt: new Date().toISOString(),
      episodes: [],
      patterns: [pattern('pattern', 'tests', 1), pattern('anti_pattern', 'tests', 2), pattern('pattern', 'council', 3)],
      skills: [
        { repo, taskKind: 'export', title: 'exporting', steps: ['write it'], keywords: ['export'], evidence: 1, importance: 0.5, from: [] },
      ],
      links: [],
    } satisfies MemoryExport);
    const after = await index();
    expect(after).toMatchObject({ repo: null, source: 'store', total: before.total + 4 });
    const count = (i: typeof after, topic: string) => i.topics.find((t) => t.topic === topic)?.kinds ?? {};
    const grew = (topic: string, kind: string): number => (count(after, topic)[kind] ?? 0) - (count(before, topic)[kind] ?? 0);
    expect([grew('tests', 'pattern'), grew('tests', 'anti_pattern'), grew('council', 'pattern'), grew('export', 'skill')]).toEqual([
      1, 1, 1, 1,
    ]);
    expect(after.topics.reduce((n, t) => n + t.count, 0)).toBe(after.total);
    expect(Object.values(after.kinds).reduce((n, k) => n + k, 0)).toBe(after.total);
  });

  it(
    'drives a run with the default knobs: start, status, a directive, pause, resume; the agent claims through ' +
      'vigil_task_complete and the council approves the claim; the report reads it',
    async () => {
      // The PRD in the repository: vigil_start reads no file outside the repository it is given.
      const repo = makeRepo({
        files: { 'README.md': '# sample\n', 'PRD.md': '# MCP PRD\n\nExport `feature` from src/feature.js and document it.\n' },
      });
      const prd = path.join(repo, 'PRD.md');
      const id = uniqueId('mcp-run');
      const started = StartedJsonSchema.parse(
        await ok('vigil_start', { prd, repo, provider: 'command', agentCommand: agentCommand(), set: ['baseWaitSeconds=1'], id }),
      );
      runId = id;
      expect(started).toMatchObject({
        kind: 'started',
        workflowId: id,
        repoPath: repo,
        prd: { title: 'MCP PRD' },
        hostWorkerMissing: false,
      });

      await waitUntil('iteration 1 to run', async () => (await status(id)).iteration === 1, 90_000, 300);
      const directive = `Keep feature a named export (${id})`;
      const input = MessageJsonSchema.parse(await ok('vigil_input', { id, directive }));
      expect(input).toMatchObject({ workflowId: id, message: 'input', by: os.userInfo().username, acknowledged: true });
      const pause = MessageJsonSchema.parse(await ok('vigil_pause', { id, reason: 'reviewing from MCP', by: 'mcp-tester' }));
      expect(pause).toMatchObject({ message: 'pause', by: 'mcp-tester', acknowledged: true, ack: { changed: true } });
      const paused = await waitUntil(
        'the run to pause',
        async () => {
          const s = await status(id);
          return s.workerAnswered && s.status === 'paused' ? s : null;
        },
        60_000,
        300,
      );
      expect(paused.pause).toMatchObject({ by: 'mcp-tester', reason: 'reviewing from MCP' });
      expect(paused.iteration).toBe(1);
      expect(MessageJsonSchema.parse(await ok('vigil_resume', { id }))).toMatchObject({
        message: 'resume',
        acknowledged: true,
        ack: { changed: true },
      });

      const done = await waitUntil(
        'the run to finish',
        async () => {
          const s = await status(id);
          return s.status === 'finished' && s.workerAnswered ? s : null;
        },
        240_000,
        500,
      );
      if (!done.workerAnswered) throw new Error('unreachable');
      expect(done.outcome, JSON.stringify(done.outcome)).toMatchObject({ status: 'council_approved', exitCode: 0 });
      // The claim of iteration 3 came only from vigil_task_complete (the scenario claims nothing): judged as a claim.
      expect(done.recentIterations.find((r) => r.iteration === 3)).toMatchObject({ claimed: true });
      expect(done.recentIterations.filter((r) => r.claimed).map((r) => r.iteration)).toEqual([3]);
      expect(done.checks?.last).toMatchObject({ iteration: 3, trigger: 'claim', approved: true });
      expect(done.council.verdicts.at(-1)).toMatchObject({ iteration: 3, trigger: 'claim', result: 'APPROVED' });
      // The claim's body is kept as the run's evidence: the agent's summary, evidence and confidence.
      const runDir = runDirPath(repo, id);
      const kept = TaskCompleteClaimSchema.parse(
        JSON.parse(readFileSync(path.join(runDir, 'iteration-0003.completion-requested'), 'utf8')),
      );
      expect(kept).toMatchObject({ runId: id, iteration: 3, summary: 'The feature is exported and documented.', confidence: 0.85 });
      expect(existsSync(path.join(repo, '.vigil', 'signals', 'COMPLETION_REQUESTED'))).toBe(false);
      // The directive reached the next prompt.
      const prompts = readdirSync(runDir)
        .filter((f) => /^iteration-\d+\.prompt\.md$/.test(f))
        .sort();
      expect(readFileSync(path.join(runDir, prompts[0] ?? ''), 'utf8')).not.toContain(directive);
      expect(readFileSync(path.join(runDir, 'iteration-0002.prompt.md'), 'utf8')).toContain(directive);

      // Its checkpoints: one per iteration that changed the tree.
      const cps = CheckpointsJsonSchema.parse(await ok('vigil_checkpoints', { id }));
      expect(cps.list.map((c) => c.iteration)).toEqual([1, 2, 3]);
      // It never asked a person for help: no handoff to read.
      await expect(mcp.readResource({ uri: `vigil://runs/${encodeURIComponent(id)}/handoff` })).rejects.toThrow(
        `run "${id}" has no handoff: it has not escalated to a person`,
      );

      // The report from the event store, as a tool and as a resource.
      const report = await waitUntil(
        'the report to have the outcome',
        async () => {
          const r = McpReportOutputSchema.parse(await ok('vigil_report', { id })).run;
          return r?.outcome ? r : null;
        },
        30_000,
        500,
      );
      expect(report).toMatchObject({
        workflowId: id,
        prdTitle: 'MCP PRD',
        outcome: { status: 'council_approved', exitCode: 0, iteration: 3 },
      });
      expect(report.timeline.find((t) => t.iteration === 3)?.text).toMatch(/claimed completion/);
      const resource = await mcp.readResource({ uri: `vigil://runs/${encodeURIComponent(id)}/report` });
      expect(JSON.parse(String((resource.contents[0] as { text: string }).text))).toMatchObject({
        workflowId: id,
        outcome: { status: 'council_approved' },
      });
      // The run's end left memory in the store (docs/memory.md): the skill of its kind of task, found by a search.
      const memory = McpMemorySearchOutputSchema.parse(await ok('vigil_memory_search', { query: 'MCP PRD' }));
      expect(memory.hits.map((h) => `${h.kind}: ${h.title}`)).toContain('skill: How "MCP PRD" got done here');
      const statusResource = await mcp.readResource({ uri: `vigil://runs/${encodeURIComponent(id)}/status` });
      expect(JSON.parse(String((statusResource.contents[0] as { text: string }).text))).toMatchObject({
        workflowId: id,
        status: 'finished',
      });
    },
    patient(420_000),
  );

  it(
    "starts a run from an issue: its task list is the run's checklist",
    async () => {
      const repo = makeRepo({
        files: {
          'README.md': '# sample\n',
          'ISSUE.md': '# Export the feature\n\n- [ ] Export `feature` from src/feature.js\n- [x] (critical) document it in the README\n',
        },
      });
      const id = uniqueId('mcp-issue');
      const issue = path.join(repo, 'ISSUE.md');
      const started = StartedJsonSchema.parse(
        await ok('vigil_start', { issue, repo, provider: 'command', agentCommand: agentCommand(), set: ['baseWaitSeconds=1'], id }),
      );
      expect(started).toMatchObject({ workflowId: id, prd: { title: 'Export the feature', path: issue } });
      // A run's status (not a finished run's summary) lists the checklist.
      const checklist = async () => {
        const run = await status(id);
        return 'quality' in run ? (run.quality?.checklist ?? null) : null;
      };
      const items = await waitUntil('the checklist in status', async () => ((await checklist())?.length ? checklist() : null), 60_000, 300);
      expect(items?.map((i) => [i.id, i.priority, i.title])).toEqual([
        ['REQ-1', 'medium', 'Export `feature` from src/feature.js'],
        ['REQ-2', 'critical', 'document it in the README'],
      ]);
      await ok('vigil_stop', { id, now: true, reason: 'the checklist was what this test looked at' });
      // Beside a PRD or a checklist, or for another host, an issue is refused in the tool's words.
      for (const [args, message] of [
        [{ issue, prd: issue }, /^give `prd` \(\S+ISSUE\.md\) or `issue` \S+ISSUE\.md, not both: the issue is the PRD$/],
        [{ issue, checklist: issue }, /^`issue` \S+ISSUE\.md takes the PRD checklist from the issue's task list: drop `checklist`/],
        [{ issue, host: 'elsewhere', repo: '/srv/app' }, /^`issue` is read on this machine, and the run's host is another/],
        [{}, /^missing the PRD: give `prd` \(a PRD file\), `issue` \(an issue file\) or `goal` \(what to build, as text\)$/],
        [
          { goal: 'Add a CSV export', issue },
          /^give `goal` or `issue` \S+ISSUE\.md, not both: with `goal` a discovery call writes the PRD$/,
        ],
        [{ goal: '   ' }, /^`goal` needs the goal as text: vigil_start with goal: "/],
      ] as const) {
        const r = await call('vigil_start', { repo, provider: 'command', agentCommand: SCRIPTED_AGENT, ...args });
        expect(r.isError).toBe(true);
        expect(text(r)).toMatch(message);
      }
    },
    patient(180_000),
  );

  it(
    'starts a run from a goal: the discovery call writes the PRD in the run folder, and the supervised run pauses to show it',
    async () => {
      const repo = makeRepo({ files: { 'README.md': '# sample\n' } });
      const id = uniqueId('mcp-goal');
      const prd = '# The feature\n\n## Requirements\n\n- [ ] src/feature.js exports `feature`\n';
      const scenario = writeScenario(repo, {
        version: 1,
        roles: { discovery: { default: { writes: { 'PRD.md': prd }, output: 'PRD written.\n' } } },
        iterations: [],
        default: { appends: { 'x.txt': 'x\n' } },
      });
      const r = await call('vigil_start', {
        goal: 'Add the feature to src/feature.js',
        repo,
        provider: 'command',
        agentCommand: `"${SCRIPTED_AGENT}" --scenario "${scenario}"`,
        id,
      });
      expect(r.isError ?? false, text(r)).toBe(false);
      const where = path.join(runDirPath(repo, id), 'PRD.md');
      expect(StartedJsonSchema.parse(r.structuredContent)).toMatchObject({
        workflowId: id,
        prd: { path: where, title: 'Add the feature to src/feature.js' },
      });
      expect(text(r)).toContain(
        `no PRD yet: a discovery call analyses the repository and writes it at ${where} first; the run then pauses`,
      );
      const paused = await waitUntil('the PRD shown', async () => ((await status(id)).pause ? status(id) : null), 90_000, 300);
      expect(paused.pause?.reason).toContain(`The discovery agent wrote the run's PRD from its goal: ${where}`);
      expect(readFileSync(where, 'utf8')).toBe(prd);

      // While it waits: its task queue (none: one stream) and its continuity notes, as resources.
      const tasks = McpRunTasksSchema.parse(JSON.parse(await resourceText(`vigil://runs/${id}/tasks`)));
      expect(tasks).toMatchObject({ workflowId: id, source: null, tasks: [] });
      expect(tasks.note).toMatch(/^this run has no task queue: it is one stream/);
      const notes = path.join(repo, '.vigil', 'CONTINUITY.md');
      expect(await resourceText(`vigil://runs/${id}/continuity`)).toBe(`No continuity notes yet: the agent has not written ${notes}.\n`);
      writeFileSync(notes, '# Where I am\n\nsrc/feature.js next.\n');
      expect(await resourceText(`vigil://runs/${id}/continuity`)).toBe('# Where I am\n\nsrc/feature.js next.\n');
      await ok('vigil_stop', { id, now: true, reason: 'the PRD from the goal was what this test looked at' });
    },
    patient(180_000),
  );

  it(
    "refuses what the CLI refuses, in the CLI's words",
    async () => {
      const empty = await call('vigil_input', { id: runId || 'any', directive: '   ' });
      expect(empty.isError).toBe(true);
      expect(text(empty)).toBe('no directive: pass TEXT or --file F');

      const missing = await call('vigil_status', { id: 'no-such-run-mcp' });
      expect(missing.isError).toBe(true);
      expect(text(missing)).toBe('no such run: "no-such-run-mcp" (list runs with `vigil list`)');

      const blank = await call('vigil_pause', { id: ' ' });
      expect(text(blank)).toBe('a run id is not empty; `vigil list` shows the runs');

      const inRepo = makeRepo({ files: { 'README.md': '# sample\n', 'PRD.md': '# Sample PRD\n\nBuild the thing.\n' } });
      const badId = await call('vigil_start', {
        prd: path.join(inRepo, 'PRD.md'),
        repo: inRepo,
        provider: 'command',
        agentCommand: SCRIPTED_AGENT,
        id: '../evil',
      });
      expect(badId.isError).toBe(true);
      expect(text(badId)).toMatch(/^--id "\.\.\/evil" is not allowed: use 1-200 letters/);

      const to = await call('vigil_rewind', { id: runId, to: 0 });
      expect(text(to)).toBe('--to must be an integer from 1 to 100000000, got 0');
      const forkId = await call('vigil_rewind', { id: runId, to: 1, forkId: 'other' });
      expect(text(forkId)).toBe('--id names the new run of --fork; without --fork the run keeps its id');

      // A finished run takes no message, and is not rewound (it is forked).
      const rewind = await call('vigil_rewind', { id: runId, to: 1 });
      expect(rewind.isError).toBe(true);
      expect(text(rewind)).toContain(
        `a finished run cannot be rewound. Start a new run from its checkpoint 1 instead: \`vigil rewind ${runId} --to 1 --fork\``,
      );
      // A finished run takes no message.
      const late = await call('vigil_pause', { id: runId });
      expect(late.isError).toBe(true);
      expect(text(late)).toMatch(new RegExp(`^run "${runId}" has finished \\(council_approved: .*\\); there is nothing to change$`));

      // A PRD outside the repository is not read: its first line never comes back as a title.
      const secret = writePrd('# the first line of a file of the operator\n');
      const outsidePrd = await call('vigil_start', { prd: secret, repo: inRepo, provider: 'command', agentCommand: SCRIPTED_AGENT });
      expect(outsidePrd.isError).toBe(true);
      expect(text(outsidePrd)).toBe(
        `the PRD ${secret} is outside the repository ${inRepo}: vigil_start reads only files inside the repository it is given ` +
          `(\`repo\`): put the file there, or pass its path inside it`,
      );
      const shadow = await call('vigil_start', { prd: '/etc/shadow', repo: inRepo, provider: 'command', agentCommand: SCRIPTED_AGENT });
      expect(text(shadow)).toMatch(/^the PRD \/etc\/shadow is outside the repository/);

      // A finished run's id: refused as `vigil start` refuses it (one rule, cli/run-id.ts), nothing started.
      const runIdOf = async (id: string): Promise<string | null> => {
        const s = await status(id);
        return 'runId' in s ? s.runId : null;
      };
      const before = await runIdOf(runId);
      expect(before).not.toBeNull();
      const reused = await call('vigil_start', {
        prd: path.join(inRepo, 'PRD.md'),
        repo: inRepo,
        provider: 'command',
        agentCommand: SCRIPTED_AGENT,
        id: runId,
      });
      expect(reused.isError).toBe(true);
      expect(text(reused)).toMatch(new RegExp(`^run "${runId}" already ran \\(it ended completed at [^)]+\\); nothing was started`));
      expect(text(reused)).toContain('"replace": true');
      expect(await runIdOf(runId)).toBe(before);

      // Outside a run there is no claim to make.
      const outside = await call('vigil_task_complete', { summary: 'done', evidence: ['trust me'], confidence: 1 });
      expect(outside.isError).toBe(true);
      expect(text(outside)).toMatch(/VIGIL_RUN_ID is not set/);
    },
    patient(60_000),
  );
});
