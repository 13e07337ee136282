/**
 * `vigil mcp`: Vigil as an MCP server (the official TypeScript SDK, @modelcontextprotocol/sdk), over
 * stdio or, with `--http`, streamable HTTP on loopback. Its tools are the CLI's verbs and run the
 * CLI's code: a tool per row of the message table (schemas/message-verbs.ts) with the same payloads
 * (cli/steer-commands.ts PAYLOADS), the same update through the same function (cli/steer.ts
 * sendMessage), the same start path as `vigil start` (cli/start-run.ts; the knob resolution and id
 * check handed over by cli/commands/serve.ts), `rewindRun`, `checkpointsCommand`,
 * `handoffCommand` and `reportCommand` themselves; `by` defaults to the OS user as in the CLI. What
 * the CLI refuses comes back as a tool error with the CLI's message; what it prints with `--json`
 * comes back as the tool's structured output, typed by the same schemas (schemas/mcp.ts).
 *
 * `vigil_task_complete` is for an agent inside a run: it writes the run's completion claim
 * (cli/mcp-claim.ts). `vigil_memory_search` searches the memory that outlives a run (docs/memory.md)
 * as `vigil memory search --json` does; `vigil_memory_store_pattern` and `vigil_memory_consolidate`
 * write to it (cli/mcp-memory-write.ts says how a sandboxed agent's write reaches it), and
 * `vigil_code_search` searches a repository's code (cli/mcp-code-search.ts).
 *
 * Over HTTP (cli/mcp-http.ts) every request needs the operator's token; the tools that start a run
 * (signed with the operator's run secret) also refuse a call that did not come with it. vigil_start
 * reads no file outside the repository it is given (cli/mcp-start.ts). The reading tools are in
 * cli/mcp-reads.ts; what they share (the deps, the Temporal client): cli/mcp-deps.ts.
 *
 * Over stdio, stdout carries the protocol alone: anything else the CLI's code would print there
 * goes to stderr. Temporal is connected on the first call that needs it (an agent's server inside
 * a run has no Temporal settings, and needs none for its claim).
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { Writable } from 'node:stream';
import { McpServer, ResourceTemplate } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import type { AuthInfo } from '@modelcontextprotocol/sdk/server/auth/types.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { MESSAGE_VERBS, SENT_MESSAGES, type MessageVerb } from '../schemas/message-verbs.js';
import { CheckpointsJsonSchema, MessageJsonSchema, StartedJsonSchema, type MessageJson } from '../schemas/cli-output.js';
import {
  mcpMessageInput,
  McpCodeSearchInput,
  McpCodeSearchOutputSchema,
  McpMemorySearchInput,
  McpMemorySearchOutputSchema,
  McpReportInput,
  McpReportOutputSchema,
  McpRewindInput,
  McpRewindOutputSchema,
  McpRunInput,
  McpStartInput,
  McpStatusOutputSchema,
  McpTaskCompleteInput,
  McpTaskCompleteOutputSchema,
} from '../schemas/mcp.js';
import {
  McpMemoryConsolidateInput,
  McpMemoryConsolidateOutputSchema,
  McpMemoryStorePatternInput,
  McpMemoryStorePatternOutputSchema,
} from '../schemas/memory-agent.js';
import { packageRoot } from '../lib/paths.js';
import { CliError, EXIT } from './errors.js';
import { claimTarget, writeClaim } from './mcp-claim.js';
import { codeSearch } from './mcp-code-search.js';
import { askConsolidation, storePattern } from './mcp-memory-write.js';
import { Temporal, type McpDeps } from './mcp-deps.js';
import { isOperator } from './mcp-http.js';
import { checkpoints, handoff, json, memoryIndex, memorySearch, report, runContinuity, runId, runStatus, runTasks } from './mcp-reads.js';
import { startRun } from './mcp-start.js';
import { sdkRunApi } from './sdk-run-api.js';
import { by, defaultActor, PAYLOADS } from './steer-commands.js';
import type { MessageKind } from './steer.js';

export { Temporal, type McpDeps } from './mcp-deps.js';

export const MCP_SERVER_NAME = 'vigil';
/** The default port of `vigil mcp --http` (the console's is 8237). */
export const DEFAULT_MCP_PORT = 8238;

/** A tool's answer: the CLI's `--json` document as structured output, and as text for clients that read only text. */
function answer<T extends Record<string, unknown>>(value: T, notes: string[] = []): CallToolResult & { structuredContent: T } {
  return {
    structuredContent: value,
    content: [{ type: 'text', text: JSON.stringify(value, null, 2) }, ...notes.map((text) => ({ type: 'text' as const, text }))],
  };
}

/**
 * How the server is reached: over stdio it is the operator's own process (the client that started
 * it acts as the operator, as with the CLI); over HTTP a call acts as the operator only when it came
 * with the token (cli/mcp-http.ts sets its `authInfo`).
 */
export type McpTransportKind = 'stdio' | 'http';

/**
 * A tool that starts a run signs it with the operator's run secret (cli/runs.ts runInputFor), so it
 * acts for the operator only: over HTTP a call without the token's `authInfo` is refused (the front
 * door already refused it; this holds even if a transport without it is ever added).
 */
function requireOperator(kind: McpTransportKind, auth: AuthInfo | undefined, tool: string): void {
  if (kind === 'http' && !isOperator(auth))
    throw new CliError(
      `${tool} starts a run signed with the operator's run secret, and this call did not come with the token of \`vigil mcp --http\` (docs/mcp.md#access)`,
      EXIT.usage,
    );
}

/** The MCP server with Vigil's tools and resources; one per connection (stdio, or each HTTP session). */
export function buildMcpServer(deps: McpDeps, temporal: Temporal, kind: McpTransportKind = 'stdio'): McpServer {
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
    async (o, extra) => {
      requireOperator(kind, extra.authInfo, 'vigil_start');
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

  // The messages sent as they are, one tool each, from the message table (schemas/message-verbs.ts).
  for (const name of SENT_MESSAGES) {
    const row: MessageVerb = MESSAGE_VERBS[name];
    server.registerTool(
      row.mcp.tool,
      {
        title: row.mcp.title,
        description: row.mcp.description,
        inputSchema: mcpMessageInput(name),
        outputSchema: MessageJsonSchema,
        ...(row.mcp.destructive ? { annotations: { destructiveHint: true } } : {}),
      },
      async (input: Record<string, unknown>) => {
        const { id, signal, ...o } = input;
        const args = row.args.map((a) => (typeof o[a.key] === 'string' ? (o[a.key] as string) : undefined));
        const given = Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined && v !== false));
        return answer(await message(name, runId(String(id)), PAYLOADS[name](given, ...args), Boolean(signal)));
      },
    );
  }

  server.registerTool(
    MESSAGE_VERBS.rewind.mcp.tool,
    {
      title: MESSAGE_VERBS.rewind.mcp.title,
      description: MESSAGE_VERBS.rewind.mcp.description,
      inputSchema: McpRewindInput,
      outputSchema: McpRewindOutputSchema,
      annotations: { destructiveHint: true },
    },
    async (o, extra) => {
      // A fork starts a new run, signed as vigil_start's are.
      if (o.fork) requireOperator(kind, extra.authInfo, 'vigil_rewind with fork');
      const id = runId(o.id);
      // `--to` as commander reads it (cli/int-arg.ts), before anything connects.
      if (!Number.isInteger(o.to) || o.to < 1 || o.to > 100_000_000)
        throw new CliError(`--to must be an integer from 1 to 100000000, got ${o.to}`, EXIT.usage);
      if (o.forkId !== undefined && !o.fork)
        throw new CliError('--id names the new run of --fork; without --fork the run keeps its id', EXIT.usage);
      if (o.replace && o.forkId === undefined)
        throw new CliError('replace takes the forkId given with fork; a fork without forkId gets a fresh one', EXIT.usage);
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
        ...(o.replace ? { replace: true } : {}),
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
        "From the event store: one run's summary and timeline (with `id`, under `run`), or the report across " +
        'runs (under `acrossRuns`) (`vigil report --json`).',
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
        'The memory of earlier runs in the event store: patterns, anti-patterns (a test that kept failing ' +
        'for the same reason, and what fixed it) and skills whose words match the query, best first (`vigil ' +
        'memory search --json`).',
      inputSchema: McpMemorySearchInput,
      outputSchema: McpMemorySearchOutputSchema,
      annotations: { readOnlyHint: true },
    },
    async (o) => answer(await memorySearch(env, o)),
  );

  server.registerTool(
    'vigil_memory_store_pattern',
    {
      title: 'Store a pattern in the memory',
      description:
        'Keep a lesson for later runs: a pattern (what works) or an anti-pattern (what to avoid), with a title, ' +
        "a body and keywords. From a run's builder it is stored when its agent call ends, as that run's, marked as an " +
        "agent's word (found by vigil_memory_search and later prompts, ranked below what evidence made); secrets are " +
        'redacted, oversized input is refused.',
      inputSchema: McpMemoryStorePatternInput,
      outputSchema: McpMemoryStorePatternOutputSchema,
    },
    async (o) => answer(await storePattern(env, o)),
  );

  server.registerTool(
    'vigil_memory_consolidate',
    {
      title: 'Consolidate the memory',
      description:
        "Turn episodes into patterns, anti-patterns and skills now. From a run's builder: its run so far, when its " +
        'agent call ends; from a person: the runs named, or all (`vigil memory consolidate --json`).',
      inputSchema: McpMemoryConsolidateInput,
      outputSchema: McpMemoryConsolidateOutputSchema,
    },
    async (o) => answer(await askConsolidation(env, o)),
  );

  server.registerTool(
    'vigil_code_search',
    {
      title: 'Search the code',
      description:
        "Find a string or a regular expression in a repository's files (git's index, untracked files included, " +
        "`.vigil/` and binaries left out): path, line and the line, at most `limit` hits. An agent's call searches its run's repository.",
      inputSchema: McpCodeSearchInput,
      outputSchema: McpCodeSearchOutputSchema,
      annotations: { readOnlyHint: true },
    },
    async (o) => answer(await codeSearch(env, o)),
  );

  server.registerTool(
    'vigil_task_complete',
    {
      title: 'Claim the task complete',
      description:
        "For the agent inside a Vigil run: claim that the run's task is complete, with a summary, the " +
        'evidence and a confidence from 0 to 1. It is a claim, not a verdict: Vigil reads it when this agent ' +
        'call ends and judges it with its own checks (quality gates, code review, the PRD checklist, the ' +
        'completion council).',
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
  server.registerResource(
    'run-tasks',
    template('tasks'),
    {
      title: "A run's task queue",
      description: "its streams' tasks: state, dependencies, attempts, branch, dead letter (`vigil status --json`, `streams`)",
      mimeType: 'application/json',
    },
    async (uri, { id }) => json(uri, await runTasks(temporal, one(id))),
  );
  server.registerResource(
    'run-continuity',
    template('continuity'),
    {
      title: "A run's continuity notes",
      description: "the agent's working notes, .vigil/CONTINUITY.md in the run's repository (docs/memory.md)",
      mimeType: 'text/markdown',
    },
    async (uri, { id }) => ({ contents: [{ uri: uri.href, mimeType: 'text/markdown', text: await runContinuity(temporal, one(id)) }] }),
  );
  server.registerResource(
    'memory-index',
    'vigil://memory/index',
    {
      title: 'The lasting memory: its index',
      description: "its topics and how many patterns, anti-patterns and skills each holds (an agent's run: its repository's snapshot)",
      mimeType: 'application/json',
    },
    async (uri) => json(uri, await memoryIndex(env)),
  );
  return server;
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

  const { startMcpHttp } = await import('./mcp-http.js');
  const { vigilHome } = await import('../lib/paths.js');
  const http = await startMcpHttp({
    port: flags.port ?? DEFAULT_MCP_PORT,
    home: vigilHome(deps.env ?? process.env),
    newServer: () => buildMcpServer(deps, temporal, 'http'),
  });
  process.stderr.write(
    `vigil mcp: streamable HTTP at ${http.url} (loopback only); clients send "Authorization: Bearer <token>", the token in ${http.tokenFile}` +
      `${http.tokenCreated ? ' (made now, readable by this account only)' : ''}\n`,
  );
  await stopped;
  await http.close();
  await temporal.close();
  return 0;
}
