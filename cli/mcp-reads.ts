/**
 * What `vigil mcp`'s reading tools and resources answer (cli/mcp.ts): a run's status, its
 * checkpoints and handoff, the reports and the memory search, each by the CLI command's own code
 * with its `--json` output parsed by the same schemas.
 */
import type { ReadResourceResult } from '@modelcontextprotocol/sdk/types.js';
import { AcrossRunsReportSchema, RunReportSchema } from '../schemas/cli-output-reports.js';
import { CheckpointsJsonSchema, type CheckpointsJson, type StatusJson } from '../schemas/cli-output.js';
import { McpMemorySearchOutputSchema, type McpMemorySearchOutput, type McpReportOutput } from '../schemas/mcp.js';
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
