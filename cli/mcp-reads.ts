/**
 * What `vigil mcp`'s reading tools and resources answer (cli/mcp.ts): a run's status, its
 * checkpoints and handoff, the reports and the memory search, each by the CLI command's own code
 * with its `--json` output parsed by the same schemas.
 */
import type { ReadResourceResult } from '@modelcontextprotocol/sdk/types.js';
import { AcrossRunsReportSchema, RunReportSchema } from '../schemas/cli-output-reports.js';
import { CheckpointsJsonSchema, type CheckpointsJson, type StatusJson } from '../schemas/cli-output.js';
import {
  McpMemoryIndexSchema,
  McpMemorySearchOutputSchema,
  McpRunTasksSchema,
  type McpMemoryIndex,
  type McpMemorySearchOutput,
  type McpReportOutput,
  type McpRunTasks,
} from '../schemas/mcp.js';
import { HandoffOutputSchema, type HandoffOutput } from './handoff.js';
import type { Temporal } from './mcp-deps.js';
import { CliError, EXIT } from './errors.js';
import { sdkRunApi } from './sdk-run-api.js';

/** `vigil <verb> <id>` refuses an empty run id before connecting (cli/commands/shared.ts runIdArg); so does every tool. */
export function runId(id: string): string {
  if (id.trim() === '') throw new CliError('a run id is not empty; `vigil list` shows the runs', EXIT.usage);
  return id;
}

/** Collects what a CLI command writes, to parse its `--json` output. */
export function collector(): { write: (text: string) => Promise<void>; out: (line?: string) => void; text: () => string } {
  let buf = '';
  return {
    write: (text) => {
      buf += text;
      return Promise.resolve();
    },
    out: (line = '') => {
      buf += `${line}\n`;
    },
    text: () => buf,
  };
}

export const json = (uri: URL, value: unknown): ReadResourceResult => ({
  contents: [{ uri: uri.href, mimeType: 'application/json', text: JSON.stringify(value, null, 2) }],
});

/** `vigil status --json` (cli/steer-commands.ts statusCommand, without the printing). */
export async function runStatus(temporal: Temporal, id: string): Promise<StatusJson> {
  const [{ viewRun }, { statusJson }] = await Promise.all([import('./steer.js'), import('./status.js')]);
  const { client, ep } = await temporal.get();
  const api = sdkRunApi(client);
  const view = await viewRun(api, id);
  const host = view.kind === 'running' ? (view.snapshot?.host ?? null) : null;
  const pollers = host ? await (await import('./hosts.js')).hostPollers(api, ep.taskQueue, host) : null;
  return { ...statusJson(view), ...(pollers ? { hostPollers: pollers } : {}) } as StatusJson;
}

export async function checkpoints(temporal: Temporal, id: string): Promise<CheckpointsJson> {
  const { checkpointsCommand } = await import('./checkpoints.js');
  const { client, ep } = await temporal.get();
  const c = collector();
  await checkpointsCommand(client, ep, id, true, c.out);
  return CheckpointsJsonSchema.parse(JSON.parse(c.text()));
}

export async function handoff(temporal: Temporal, id: string): Promise<HandoffOutput> {
  const { handoffCommand } = await import('./handoff.js');
  const { client } = await temporal.get();
  const c = collector();
  await handoffCommand(client, id, { json: true, answerSeconds: 15, write: c.write });
  return HandoffOutputSchema.parse(JSON.parse(c.text()));
}

export async function report(
  env: NodeJS.ProcessEnv,
  o: { id?: string | undefined; since?: string | undefined; repo?: string | undefined },
): Promise<McpReportOutput> {
  const { reportCommand } = await import('./report.js');
  const c = collector();
  if (o.id !== undefined) {
    await reportCommand({ id: runId(o.id), json: true }, { out: c.write, env });
    return { run: RunReportSchema.parse(JSON.parse(c.text())) };
  }
  await reportCommand(
    { ...(o.since !== undefined ? { since: o.since } : {}), ...(o.repo !== undefined ? { repo: o.repo } : {}), json: true },
    { out: c.write, env },
  );
  return { acrossRuns: AcrossRunsReportSchema.parse(JSON.parse(c.text())) };
}

/**
 * The store's memory, or — inside a run (VIGIL_RUN_ID) whose call was handed a snapshot
 * (VIGIL_MEMORY_SNAPSHOT: the agent sandbox refuses connections to the store) — the snapshot's,
 * when no store is configured for this process or the store does not answer.
 */
export async function memorySearch(
  env: NodeJS.ProcessEnv,
  o: { query: string; repo?: string | undefined; limit?: number | undefined },
): Promise<McpMemorySearchOutput> {
  const [{ withEventStore }, { readMemorySnapshot, searchItems, searchMemory }, { configuredStoreUrl }] = await Promise.all([
    import('./event-store-client.js'),
    import('../lib/memory-reads.js'),
    import('../lib/store-location.js'),
  ]);
  const file = env.VIGIL_RUN_ID && env.VIGIL_MEMORY_SNAPSHOT ? env.VIGIL_MEMORY_SNAPSHOT : null;
  const fromSnapshot = (): McpMemorySearchOutput | null => {
    const s = file ? readMemorySnapshot(file) : null;
    return s
      ? McpMemorySearchOutputSchema.parse({
          query: o.query,
          hits: searchItems(s.items, o.query, o.limit ?? 20),
          source: 'snapshot',
          snapshotAt: s.takenAt,
        })
      : null;
  };
  if (file && !configuredStoreUrl(env)) {
    const got = fromSnapshot();
    if (got) return got;
  }
  try {
    const hits = await withEventStore(env, (db) => searchMemory(db, o.query, { repo: o.repo ?? null, limit: o.limit ?? 20 }));
    return McpMemorySearchOutputSchema.parse({ query: o.query, hits, source: 'store' });
  } catch (err) {
    const got = fromSnapshot();
    if (got) return got;
    throw err;
  }
}

/** What a status holds when its worker answered (the running run's snapshot), else null. */
const answered = (s: StatusJson): Extract<StatusJson, { workerAnswered: true }> | null => (s.workerAnswered ? s : null);

/** The resource `vigil://runs/{id}/tasks`: the run's streams' tasks as status lists them, or why there are none. */
export async function runTasks(temporal: Temporal, id: string): Promise<McpRunTasks> {
  const s = answered(await runStatus(temporal, id));
  const none = (note: string): McpRunTasks => McpRunTasksSchema.parse({ workflowId: id, source: null, note, tasks: [] });
  if (!s) return none('no worker answered for this run: its task queue cannot be read now (`vigil status` says why)');
  if (!s.streams)
    return none(s.tasks?.note ?? 'this run has no task queue: it is one stream (start it with --tasks FILE and parallelStreams > 1)');
  return McpRunTasksSchema.parse({ workflowId: id, source: s.tasks?.source ?? null, note: s.tasks?.note ?? null, tasks: s.streams });
}

/** The largest continuity file the resource reads (the agent's notes are far smaller). */
const MAX_CONTINUITY_BYTES = 256 * 1024;

/**
 * The resource `vigil://runs/{id}/continuity`: the agent's working notes, `.vigil/CONTINUITY.md` in
 * the run's repository (docs/memory.md), read here when the run's repository is on this machine.
 */
export async function runContinuity(temporal: Temporal, id: string): Promise<string> {
  const [{ readRegularFile }, { VIGIL_DIR }, { thisHost }, path] = await Promise.all([
    import('../lib/safe-files.js'),
    import('../schemas/paths.js'),
    import('./hosts.js'),
    import('node:path'),
  ]);
  const s = answered(await runStatus(temporal, id));
  if (!s) return `No worker answered for run ${id}: its repository cannot be named now (\`vigil status ${id}\` says why).\n`;
  if (s.host && s.host !== thisHost())
    return `Run ${id} works on host "${s.host}": its notes are ${s.repoPath}/${VIGIL_DIR}/CONTINUITY.md there, not on this machine.\n`;
  const file = path.join(s.repoPath, VIGIL_DIR, 'CONTINUITY.md');
  const r = readRegularFile(file, MAX_CONTINUITY_BYTES);
  if (r === null) return `No continuity notes yet: the agent has not written ${file}.\n`;
  if (!r.ok) return `The continuity notes at ${file} are not read: ${r.problem}.\n`;
  return r.text;
}

/**
 * The resource `vigil://memory/index`: the topics of the lasting memory and how many items of each
 * kind each holds — of the repository of the run the server serves an agent of (from its snapshot
 * when its sandbox refuses the store), else of the whole store.
 */
export async function memoryIndex(env: NodeJS.ProcessEnv): Promise<McpMemoryIndex> {
  const [{ withEventStore }, { readMemorySnapshot, listMemory }, { configuredStoreUrl }, { memoryTopics }] = await Promise.all([
    import('./event-store-client.js'),
    import('../lib/memory-reads.js'),
    import('../lib/store-location.js'),
    import('../rules/memory-retrieval.js'),
  ]);
  const of = (repo: string | null, items: { kind: string; topic: string }[], extra: Partial<McpMemoryIndex>): McpMemoryIndex => {
    const kinds: Record<string, number> = {};
    for (const i of items) kinds[i.kind] = (kinds[i.kind] ?? 0) + 1;
    return McpMemoryIndexSchema.parse({ repo, source: 'store', total: items.length, kinds, topics: memoryTopics(items), ...extra });
  };
  const file = env.VIGIL_RUN_ID && env.VIGIL_MEMORY_SNAPSHOT ? env.VIGIL_MEMORY_SNAPSHOT : null;
  const snap = file ? readMemorySnapshot(file) : null;
  if (snap && !configuredStoreUrl(env)) return of(snap.repo, snap.items, { source: 'snapshot', snapshotAt: snap.takenAt });
  const items = await withEventStore(env, (db) => listMemory(db, { limit: 10_000 }));
  return of(null, items, {});
}
