/**
 * `vigil mcp`: Vigil as an MCP server (the official TypeScript SDK, @modelcontextprotocol/sdk), over
 * stdio or, with `--http`, streamable HTTP on loopback. Its tools are the CLI's verbs and run the
 * CLI's code: the same payloads (cli/steer-commands.ts PAYLOADS), the same update through the same
 * function (cli/steer.ts sendMessage), the same start sequence and validators as `vigil start`
 * (cli/main.ts hands over its knob resolution and id check), `rewindRun`, `checkpointsCommand`,
 * `handoffCommand` and `reportCommand` themselves; `by` defaults to the OS user as in the CLI. What
 * the CLI refuses comes back as a tool error with the CLI's message; what it prints with `--json`
 * comes back as the tool's structured output, typed by the same schemas (schemas/mcp.ts).
 *
 * `vigil_task_complete` is for an agent inside a run: it writes the run's completion claim
 * (cli/mcp-claim.ts). `vigil_memory_search` searches the memory that outlives a run (docs/memory.md)
 * as `vigil memory search --json` does.
 *
 * Over stdio, stdout carries the protocol alone: anything else the CLI's code would print there
 * goes to stderr. Temporal is connected on the first call that needs it (an agent's server inside
 * a run has no Temporal settings, and needs none for its claim).
 */
import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { Writable } from 'node:stream';
import type { Client, Connection } from '@temporalio/client';
import { McpServer, ResourceTemplate } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { isInitializeRequest, type CallToolResult, type ReadResourceResult } from '@modelcontextprotocol/sdk/types.js';
import { RunReportSchema, AcrossRunsReportSchema } from '../schemas/cli-output-reports.js';
import {
  CheckpointsJsonSchema,
  MessageJsonSchema,
  StartedJsonSchema,
  type CheckpointsJson,
  type MessageJson,
  type StartedJson,
  type StatusJson,
} from '../schemas/cli-output.js';
import {
  McpInputInput,
  McpMemorySearchInput,
  McpMemorySearchOutputSchema,
  McpPauseInput,
  McpReportInput,
  McpReportOutputSchema,
  McpResumeInput,
  McpRewindInput,
  McpRewindOutputSchema,
  McpRunInput,
  McpStartInput,
  McpStatusOutputSchema,
  McpStopInput,
  McpTaskCompleteInput,
  McpTaskCompleteOutputSchema,
  McpWaiveInput,
  type McpMemorySearchOutput,
  type McpReportOutput,
} from '../schemas/mcp.js';
import { packageRoot } from '../workers/paths.js';
import type { ResolvedKnobs } from './config.js';
import { connect, runUrl, type Endpoint } from './connection.js';
import { CliError, EXIT } from './errors.js';
import { HandoffOutputSchema, type HandoffOutput } from './handoff.js';
import { claimTarget, writeClaim } from './mcp-claim.js';
import { sdkRunApi } from './sdk-run-api.js';
import { by, defaultActor, PAYLOADS } from './steer-commands.js';
import type { MessageKind } from './steer.js';

export interface McpDeps {
  endpoint: () => Endpoint;
  /** `vigil start`'s knob resolution (flags, --set, --config, VIGIL_*, the store's default), from cli/main.ts. */
  resolve: (opts: Record<string, unknown>) => Promise<ResolvedKnobs>;
  /** `vigil start --id`'s check, from cli/main.ts. */
  validateId: (id: string) => string;
  env?: NodeJS.ProcessEnv;
}

export const MCP_SERVER_NAME = 'vigil';
/** The default port of `vigil mcp --http` (the console's is 8237). */
export const DEFAULT_MCP_PORT = 8238;

/** The Temporal client, connected once on first use and kept (a failed connect is tried again next call). */
export class Temporal {
  private conn: Promise<{ client: Client; connection: Connection }> | null = null;

  constructor(private readonly endpoint: () => Endpoint) {}

  get(): Promise<{ client: Client; connection: Connection; ep: Endpoint }> {
    const ep = this.endpoint();
    if (!this.conn) {
      this.conn = connect(ep);
      this.conn.catch(() => (this.conn = null));
    }
    return this.conn.then((c) => ({ ...c, ep }));
  }

  async close(): Promise<void> {
    const c = await this.conn?.catch(() => null);
    await c?.connection.close();
  }
}

/** `vigil <verb> <id>` refuses an empty run id before connecting (cli/main.ts runIdArg); so does every tool. */
function runId(id: string): string {
  if (id.trim() === '') throw new CliError('a run id is not empty; `vigil list` shows the runs', EXIT.usage);
  return id;
}

/** A tool's answer: the CLI's `--json` document as structured output, and as text for clients that read only text. */
function answer<T extends Record<string, unknown>>(value: T, notes: string[] = []): CallToolResult & { structuredContent: T } {
  return {
    structuredContent: value,
    content: [{ type: 'text', text: JSON.stringify(value, null, 2) }, ...notes.map((text) => ({ type: 'text' as const, text }))],
  };
}

/** Collects what a CLI command writes, to parse its `--json` output. */
function collector(): { write: (text: string) => Promise<void>; out: (line?: string) => void; text: () => string } {
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

/** The MCP server with Vigil's tools and resources; one per connection (stdio, or each HTTP session). */
export function buildMcpServer(deps: McpDeps, temporal: Temporal): McpServer {
  const env = deps.env ?? process.env;
  const server = new McpServer({ name: MCP_SERVER_NAME, version: packageVersion() }, { capabilities: { tools: {}, resources: {} } });

  /** One message, as `vigil <verb>` sends it (cli/steer-commands.ts messageCommand), answered as its `--json`. */
  const message = async (kind: MessageKind, id: string, body: Record<string, unknown>, asSignal: boolean): Promise<MessageJson> => {
    const { sendMessage } = await import('./steer.js');
    const { client, ep } = await temporal.get();
    const ack = await sendMessage(sdkRunApi(client), ep, id, kind, body, asSignal);
    return MessageJsonSchema.parse({
      workflowId: id,
      message: kind,
      by: typeof body.by === 'string' ? body.by : defaultActor(),
      acknowledged: ack !== null,
      ack: ack ? { changed: ack.changed, message: ack.message, status: ack.status, iteration: ack.iteration, paused: ack.paused } : null,
    } satisfies MessageJson);
  };
  const flags = (o: { reason?: string | undefined; by?: string | undefined; now?: boolean | undefined }): Record<string, unknown> => ({
    ...(o.reason !== undefined ? { reason: o.reason } : {}),
    ...(o.by !== undefined ? { by: o.by } : {}),
    ...(o.now ? { now: true } : {}),
  });

  server.registerTool(
    'vigil_start',
    {
      title: 'Start a run',
      description: 'Start a Vigil run of the agent on a repository until the PRD is done (`vigil start --json`).',
      inputSchema: McpStartInput,
      outputSchema: StartedJsonSchema,
    },
    async (o) => {
      const { started, notes } = await startRun(deps, temporal, o);
      return answer(started, notes);
    },
  );

  server.registerTool(
    'vigil_status',
    {
      title: 'Run status',
      description: "A run's status: iteration, phase, pause, council, gates, outcome (`vigil status --json`, under `run`).",
      inputSchema: McpRunInput,
      outputSchema: McpStatusOutputSchema,
      annotations: { readOnlyHint: true },
    },
    async ({ id }) => answer({ run: await runStatus(temporal, runId(id)) }),
  );

  server.registerTool(
    'vigil_pause',
    {
      title: 'Pause a run',
      description: 'Pause a run at the next iteration boundary (`vigil pause`).',
      inputSchema: McpPauseInput,
      outputSchema: MessageJsonSchema,
    },
    async (o) => answer(await message('pause', runId(o.id), PAYLOADS.pause(flags(o)), Boolean(o.signal))),
  );

  server.registerTool(
    'vigil_resume',
    {
      title: 'Resume a run',
      description: 'Resume a paused run (`vigil resume`).',
      inputSchema: McpResumeInput,
      outputSchema: MessageJsonSchema,
    },
    async (o) => answer(await message('resume', runId(o.id), PAYLOADS.resume(flags(o)), Boolean(o.signal))),
  );

  server.registerTool(
    'vigil_stop',
    {
      title: 'Stop a run',
      description: 'Stop a run at the next boundary, or at once with `now` (`vigil stop`).',
      inputSchema: McpStopInput,
      outputSchema: MessageJsonSchema,
      annotations: { destructiveHint: true },
    },
    async (o) => answer(await message('stop', runId(o.id), PAYLOADS.stop(flags(o)), Boolean(o.signal))),
  );

  server.registerTool(
    'vigil_input',
    {
      title: 'Send a directive',
      description: "Give the run's agent a one-shot directive, injected into the next prompt (`vigil input`).",
      inputSchema: McpInputInput,
      outputSchema: MessageJsonSchema,
    },
    async (o) => {
      const id = runId(o.id);
      return answer(await message('input', id, PAYLOADS.input(flags(o), o.directive), Boolean(o.signal)));
    },
  );

  server.registerTool(
    'vigil_waive',
    {
      title: 'Waive a checklist item',
      description: 'Waive a PRD checklist item: its failure no longer blocks completion (`vigil waive`).',
      inputSchema: McpWaiveInput,
      outputSchema: MessageJsonSchema,
    },
    async (o) =>
      answer(
        await message(
          'waive',
          runId(o.id),
          { item: o.item, ...(o.reason !== undefined ? { reason: o.reason } : {}), ...by(flags(o)) },
          Boolean(o.signal),
        ),
      ),
  );

  server.registerTool(
    'vigil_rewind',
    {
      title: 'Rewind a run',
      description:
        'Take a running run back to just after iteration `to` (tree and state), or with `fork` start a new run from that checkpoint of a finished run (`vigil rewind --json`, under `rewind`).',
      inputSchema: McpRewindInput,
      outputSchema: McpRewindOutputSchema,
      annotations: { destructiveHint: true },
    },
    async (o) => {
      const id = runId(o.id);
      // `--to` as commander reads it (cli/main.ts intArg), before anything connects.
      if (!Number.isInteger(o.to) || o.to < 1 || o.to > 100_000_000)
        throw new CliError(`--to must be an integer from 1 to 100000000, got ${o.to}`, EXIT.usage);
      if (o.forkId !== undefined && !o.fork)
        throw new CliError('--id names the new run of --fork; without --fork the run keeps its id', EXIT.usage);
      const forkId = o.forkId !== undefined ? deps.validateId(o.forkId) : undefined;
      const { rewindRun } = await import('./checkpoints.js');
      const { client, connection, ep } = await temporal.get();
      const done = await rewindRun(client, connection, ep, id, {
        to: o.to,
        ...(o.reason !== undefined ? { reason: o.reason } : {}),
        ...(o.input !== undefined ? { directive: o.input } : {}),
        force: Boolean(o.force),
        fork: Boolean(o.fork),
        ...(forkId ? { forkId } : {}),
        by: by(flags(o)).by ?? defaultActor(),
      });
      return answer({ rewind: done.json });
    },
  );

  server.registerTool(
    'vigil_checkpoints',
    {
      title: 'List checkpoints',
      description:
        "A run's checkpoints (iteration, time, commit, files, exit, tests, council verdict) and rewinds (`vigil checkpoints --json`).",
      inputSchema: McpRunInput,
      outputSchema: CheckpointsJsonSchema,
      annotations: { readOnlyHint: true },
    },
    async ({ id }) => answer(await checkpoints(temporal, runId(id))),
  );

  server.registerTool(
    'vigil_report',
    {
      title: 'Read a report',
      description:
        "From the event store: one run's summary and timeline (with `id`, under `run`), or the report across runs (under `acrossRuns`) (`vigil report --json`).",
      inputSchema: McpReportInput,
      outputSchema: McpReportOutputSchema,
      annotations: { readOnlyHint: true },
    },
    async (o) => answer(await report(env, o)),
  );

  server.registerTool(
    'vigil_memory_search',
    {
      title: 'Search the memory',
      description:
        'The memory of earlier runs in the event store: patterns, anti-patterns (a test that kept failing for the same reason, and what fixed it) and skills whose words match the query, best first (`vigil memory search --json`).',
      inputSchema: McpMemorySearchInput,
      outputSchema: McpMemorySearchOutputSchema,
      annotations: { readOnlyHint: true },
    },
    async (o) => answer(await memorySearch(env, o)),
  );

  server.registerTool(
    'vigil_task_complete',
    {
      title: 'Claim the task complete',
      description:
        "For the agent inside a Vigil run: claim that the run's task is complete, with a summary, the evidence and a confidence from 0 to 1. It is a claim, not a verdict: Vigil reads it when this agent call ends and judges it with its own checks (quality gates, code review, the PRD checklist, the completion council).",
      inputSchema: McpTaskCompleteInput,
      outputSchema: McpTaskCompleteOutputSchema,
    },
    (o) => answer(writeClaim(claimTarget(env), o)),
  );

  const template = (what: string) => new ResourceTemplate(`vigil://runs/{id}/${what}`, { list: undefined });
  const one = (v: string | string[] | undefined): string => runId(decodeURIComponent(Array.isArray(v) ? (v[0] ?? '') : (v ?? '')));
  server.registerResource(
    'run-status',
    template('status'),
    { title: "A run's status", description: '`vigil status --json` of the run', mimeType: 'application/json' },
    async (uri, { id }) => json(uri, await runStatus(temporal, one(id))),
  );
  server.registerResource(
    'run-handoff',
    template('handoff'),
    {
      title: "A run's latest handoff",
      description: 'the document Vigil wrote when it asked a person for help (`vigil handoff`)',
      mimeType: 'text/markdown',
    },
    async (uri, { id }) => {
      const doc = await handoff(temporal, one(id));
      return { contents: [{ uri: uri.href, mimeType: 'text/markdown', text: doc.markdown }] };
    },
  );
  server.registerResource(
    'run-report',
    template('report'),
    {
      title: "A run's report",
      description: '`vigil report <id> --json`: its summary and timeline from the event store',
      mimeType: 'application/json',
    },
    async (uri, { id }) => json(uri, (await report(env, { id: one(id) })).run ?? null),
  );
  return server;
}

const json = (uri: URL, value: unknown): ReadResourceResult => ({
  contents: [{ uri: uri.href, mimeType: 'application/json', text: JSON.stringify(value, null, 2) }],
});

/** `vigil status --json` (cli/steer-commands.ts statusCommand, without the printing). */
async function runStatus(temporal: Temporal, id: string): Promise<StatusJson> {
  const [{ viewRun }, { statusJson }] = await Promise.all([import('./steer.js'), import('./status.js')]);
  const { client, ep } = await temporal.get();
  const api = sdkRunApi(client);
  const view = await viewRun(api, id);
  const host = view.kind === 'running' ? (view.snapshot?.host ?? null) : null;
  const pollers = host ? await (await import('./hosts.js')).hostPollers(api, ep.taskQueue, host) : null;
  return { ...statusJson(view), ...(pollers ? { hostPollers: pollers } : {}) } as StatusJson;
}

async function checkpoints(temporal: Temporal, id: string): Promise<CheckpointsJson> {
  const { checkpointsCommand } = await import('./checkpoints.js');
  const { client, ep } = await temporal.get();
  const c = collector();
  await checkpointsCommand(client, ep, id, true, c.out);
  return CheckpointsJsonSchema.parse(JSON.parse(c.text()));
}

async function handoff(temporal: Temporal, id: string): Promise<HandoffOutput> {
  const { handoffCommand } = await import('./handoff.js');
  const { client } = await temporal.get();
  const c = collector();
  await handoffCommand(client, id, { json: true, answerSeconds: 15, write: c.write });
  return HandoffOutputSchema.parse(JSON.parse(c.text()));
}

async function report(
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
async function memorySearch(
  env: NodeJS.ProcessEnv,
  o: { query: string; repo?: string | undefined; limit?: number | undefined },
): Promise<McpMemorySearchOutput> {
  const [{ withEventStore }, { readMemorySnapshot, searchItems, searchMemory }, { configuredStoreUrl }] = await Promise.all([
    import('./report.js'),
    import('../activities/lasting-memory.js'),
    import('../workers/store-location.js'),
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

type StartArgs = {
  prd: string;
  repo?: string | undefined;
  provider?: string | undefined;
  agentCommand?: string | undefined;
  config?: string | undefined;
  set?: string[] | undefined;
  id?: string | undefined;
  checklist?: string | undefined;
  host?: string | undefined;
  noStore?: boolean | undefined;
};

/** `vigil start --json`: the same checks in the same order as cli/main.ts's start action, and the same hints (as notes). */
async function startRun(deps: McpDeps, temporal: Temporal, o: StartArgs): Promise<{ started: StartedJson; notes: string[] }> {
  const [
    { readPrd, readChecklist, prdOnHost },
    runs,
    { checkPromptTemplate, requireAgentCommand },
    { searchAttributeHint },
    { hostPollers, noHostWorkerHint, pathOnHost, resolveHost, thisHost },
    { hostTaskQueue },
  ] = await Promise.all([
    import('./prd.js'),
    import('./runs.js'),
    import('./config.js'),
    import('./connection.js'),
    import('./hosts.js'),
    import('../schemas/host-names.js'),
  ]);
  const flags: Record<string, unknown> = {
    repo: o.repo ?? '.',
    ...(o.provider !== undefined ? { provider: o.provider } : {}),
    ...(o.agentCommand !== undefined ? { agentCommand: o.agentCommand } : {}),
    ...(o.config !== undefined ? { config: o.config } : {}),
    set: o.set ?? [],
    store: !o.noStore,
  };
  const host = resolveHost(o.host);
  const remote = host !== thisHost();
  const prd = remote ? prdOnHost(pathOnHost('the PRD', o.prd, host)) : readPrd(o.prd);
  const repoPath = remote ? pathOnHost('--repo', String(flags.repo), host) : runs.checkRepo(String(flags.repo));
  const resolvedKnobs = checkPromptTemplate(await deps.resolve(flags), process.cwd());
  requireAgentCommand(resolvedKnobs);
  const checklist = o.checklist !== undefined ? readChecklist(o.checklist) : undefined;
  const workflowId = o.id !== undefined ? deps.validateId(o.id) : runs.defaultRunId(prd);
  const { client, connection, ep } = await temporal.get();
  const { searchAttributes } = await runs.startRun(client, connection, ep, {
    prd,
    repoPath,
    knobs: resolvedKnobs.knobs,
    workflowId,
    host,
    ...(checklist ? { checklist } : {}),
  });
  const notes: string[] = [];
  if (searchAttributes.missing.length) notes.push(searchAttributeHint(searchAttributes.missing, ep, searchAttributes.refusal));
  const pollers = await hostPollers(sdkRunApi(client), ep.taskQueue, host);
  if (pollers?.length === 0) notes.push(noHostWorkerHint(ep.taskQueue, host, repoPath));
  const started: StartedJson = {
    kind: 'started',
    workflowId,
    prd: { path: prd.path, title: prd.title },
    repoPath,
    host,
    hostTaskQueue: hostTaskQueue(ep.taskQueue, host),
    remote,
    historyUrl: runUrl(ep, workflowId),
    missingSearchAttributes: [...searchAttributes.missing],
    hostWorkerMissing: pollers === null ? null : pollers.length === 0,
  };
  return { started: StartedJsonSchema.parse(started), notes };
}

function packageVersion(): string {
  return (JSON.parse(readFileSync(path.join(packageRoot(), 'package.json'), 'utf8')) as { version: string }).version;
}

export interface McpFlags {
  http?: boolean;
  port?: number;
}

/** `vigil mcp [--http [--port P]]`: serves until stdin closes (stdio) or SIGINT/SIGTERM. */
export async function mcpCommand(deps: McpDeps, flags: McpFlags): Promise<number> {
  const temporal = new Temporal(deps.endpoint);
  const stopped = new Promise<void>((resolve) => {
    process.once('SIGINT', () => resolve());
    process.once('SIGTERM', () => resolve());
  });
  if (!flags.http) {
    // stdout is the protocol's: whatever else would print there (a log line) goes to stderr.
    const realWrite = process.stdout.write.bind(process.stdout) as (
      chunk: string | Uint8Array,
      cb: (err?: Error | null) => void,
    ) => boolean;
    const protocolOut = new Writable({ write: (chunk: Buffer, _enc, cb) => void realWrite(chunk, (err) => cb(err ?? null)) });
    process.stdout.write = process.stderr.write.bind(process.stderr) as typeof process.stdout.write;
    const server = buildMcpServer(deps, temporal);
    const closed = new Promise<void>((resolve) => {
      process.stdin.once('end', () => resolve());
      process.stdin.once('close', () => resolve());
    });
    await server.connect(new StdioServerTransport(process.stdin, protocolOut));
    await Promise.race([closed, stopped]);
    await server.close().catch(() => undefined);
    await temporal.close();
    return 0;
  }

  const sessions = new Map<string, { transport: StreamableHTTPServerTransport; server: McpServer }>();
  let allowedHosts: string[] = [];
  const http = createServer((req, res) => void handle(req, res));
  const refuse = (res: ServerResponse, status: number, message: string): void => {
    res
      .writeHead(status, { 'content-type': 'application/json' })
      .end(JSON.stringify({ jsonrpc: '2.0', error: { code: -32000, message }, id: null }));
  };
  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    try {
      if (new URL(req.url ?? '/', 'http://localhost').pathname !== '/mcp') return refuse(res, 404, 'not found: the MCP endpoint is /mcp');
      const sessionId = req.headers['mcp-session-id'];
      const existing = typeof sessionId === 'string' ? sessions.get(sessionId) : undefined;
      if (existing) return await existing.transport.handleRequest(req, res);
      if (req.method !== 'POST')
        return refuse(
          res,
          typeof sessionId === 'string' ? 404 : 400,
          typeof sessionId === 'string' ? 'no such session' : 'no session: initialize first',
        );
      const body = await readJson(req);
      if (typeof sessionId === 'string') return refuse(res, 404, 'no such session');
      if (!isInitializeRequest(body)) return refuse(res, 400, 'no session: initialize first');
      const transport = new StreamableHTTPServerTransport({
        sessionIdGenerator: () => randomUUID(),
        // A web page elsewhere must not reach this server by DNS rebinding: only loopback Host headers.
        enableDnsRebindingProtection: true,
        allowedHosts,
        onsessioninitialized: (id) => void sessions.set(id, { transport, server }),
      });
      transport.onclose = () => {
        if (transport.sessionId) sessions.delete(transport.sessionId);
      };
      const server = buildMcpServer(deps, temporal);
      await server.connect(transport);
      await transport.handleRequest(req, res, body);
    } catch (err) {
      if (!res.headersSent) refuse(res, 400, err instanceof Error ? err.message : String(err));
    }
  }
  const port = flags.port ?? DEFAULT_MCP_PORT;
  await new Promise<void>((resolve, reject) => {
    http.once('error', (err: NodeJS.ErrnoException) =>
      reject(
        err.code === 'EADDRINUSE'
          ? new CliError(`vigil mcp: port ${port} on 127.0.0.1 is in use; choose another with --port (0: any free one)`, EXIT.usage)
          : err,
      ),
    );
    http.listen(port, '127.0.0.1', () => resolve());
  });
  const bound = (http.address() as AddressInfo).port;
  allowedHosts = [`127.0.0.1:${bound}`, `localhost:${bound}`];
  process.stderr.write(`vigil mcp: streamable HTTP at http://127.0.0.1:${bound}/mcp (loopback only)\n`);
  await stopped;
  for (const { transport, server } of sessions.values()) {
    await server.close().catch(() => undefined);
    await transport.close().catch(() => undefined);
  }
  await new Promise<void>((resolve) => http.close(() => resolve()));
  await temporal.close();
  return 0;
}

/** A request's JSON body (at most 4 MiB: a directive is at most 1 MiB). */
async function readJson(req: IncomingMessage): Promise<unknown> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    size += (chunk as Buffer).length;
    if (size > 4 * 1024 * 1024) throw new Error('request body too large');
    chunks.push(chunk as Buffer);
  }
  const text = Buffer.concat(chunks).toString('utf8');
  try {
    return text ? (JSON.parse(text) as unknown) : undefined;
  } catch {
    throw new Error('the body is not JSON');
  }
}
