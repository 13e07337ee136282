/**
 * The `vigil` command line: server and worker processes, the demo, and the client verbs that
 * start, inspect and steer runs. Exit codes: a run's outcome code (0 done or stopped, 1 failed,
 * 20 terminal without success) where a command follows a run; otherwise 0 ok, 2 bad input,
 * 3 no such run, 4 Temporal or worker unreachable, 5 the run finished before the awaited state,
 * 124 timed out.
 *
 * `vigil status`, `pause`, `resume`, `stop` and `input` with a plainly well-formed command line
 * never reach this file: the bin entry runs them through cli/fast.ts (the same actions, in
 * cli/steer-commands.ts), without commander. Every other command line comes here.
 *
 * Startup is kept light all the same: this file imports only
 * commander and modules without dependencies (node built-ins; errors.ts, connection.ts for the
 * endpoint, schemas/provider-names.ts; operations.ts, workers/logging.ts and
 * workers/store-location.ts for the long-running commands' settings). Everything else — the Temporal client, the worker, zod
 * schemas, the workflow code — is loaded by the action that needs it:
 *
 *     .action(async (id: string) => {
 *       const { checkpointsCommand } = await import('./checkpoints.js');
 *       ...
 *     });
 *
 * New verbs follow the same pattern; tests/unit/cli-startup.test.ts checks that `status` loads
 * neither commander nor Temporal's client library, the worker, the workflow code or zod.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { Argument, Command, CommanderError, InvalidArgumentError, Option } from 'commander';
import { attemptFlags } from './attempt-flags.js';
import type { KnobName } from '../schemas/knobs.js';
import { PROVIDERS } from '../schemas/provider-names.js';
import { packageRoot } from '../workers/paths.js';
import { describeEndpoint, endpointFromEnv, runUrl, withClient, type Endpoint } from './connection.js';
import { CliError, EXIT } from './errors.js';
import type { ServerFlags } from './processes.js';
import type { MessageKind } from './steer.js';
import { addMemoryCommand } from './memory-command.js';
import { addReportCommands } from './report-commands.js';
import { addPrCommands } from './pr-commands.js';
import { intArg } from './int-arg.js';
import { addScheduleCommand } from './schedule.js';
import { logFormatOption, resolveOperations, workerOperationsOptions, type OperationsFlags } from './operations.js';
import type { StoreFlags } from './store.js';
import { eventStoreDefault } from '../workers/store-location.js';
import { logLine, setLogFormat } from '../workers/logging.js';
import { by, defaultActor, messageCommand, out, PAYLOADS, reportFailure, statusCommand } from './steer-commands.js';
import type { ListRow, WaitJson } from '../schemas/cli-output.js';

/** One JSON line of a streaming command's `--json` output (`watch`, `start --wait`, `logs`). */
const jsonLine = (value: unknown): void => out(JSON.stringify(value));

const HOST_WORKER_HELP =
  "this machine's name for runs: poll its task queue <queue>@<name> for the activities of runs started with --host <name>, besides the shared queue (default: VIGIL_HOST, else this machine's name)";

/** A run's workflow id, as commander reads it: not empty (the server would refuse it with a bare gRPC error). */
function runIdArg(raw: string): string {
  if (raw.trim() === '') throw new InvalidArgumentError('a run id is not empty; `vigil list` shows the runs');
  return raw;
}

const collect = (value: string, previous: string[]): string[] => [...previous, value];

function serverOptions(cmd: Command): Command {
  return cmd
    .option(
      '--port <port>',
      'gRPC port of the local dev server, used even when TEMPORAL_ADDRESS or the profile point elsewhere (default: their port, else 7233)',
      intArg('--port', 1, 65535),
    )
    .option('--ui-port <port>', 'Web UI port (default: gRPC port + 1000)', intArg('--ui-port', 1, 65535))
    .option('--headless', 'no Web UI')
    .option('--db <file>', 'SQLite database file (default: $VIGIL_HOME/temporal.db)');
}

/** `--no-store`: the long-running commands start no event store; `vigil start` journals nothing. */
function storeOption(cmd: Command): Command {
  return cmd.option('--no-store', 'no event store: do not start or use the embedded Postgres (also VIGIL_EVENT_STORE=0)');
}

/** Knob flags given on the command line, keyed by knob (raw strings; resolved later). */
function knobFlags(opts: Record<string, unknown>): Partial<Record<KnobName, string>> {
  const flags: Partial<Record<KnobName, string>> = {};
  if (typeof opts.provider === 'string') flags.provider = opts.provider;
  if (typeof opts.agentCommand === 'string') flags.agentCommand = opts.agentCommand;
  if (opts.store === false) flags.eventStore = 'false';
  if (opts.deliverToCurrent === true) flags.deliverToCurrent = 'true';
  if (opts.acceptanceFromPrd === true) flags.acceptanceFromPrd = 'true';
  return flags;
}

async function resolve(opts: Record<string, unknown>) {
  const { knobProfileOf, resolveKnobs } = await import('./config.js');
  const storeDefault = eventStoreDefault(process.env);
  const resolved = resolveKnobs({
    flags: knobFlags(opts),
    sets: (opts.set as string[] | undefined) ?? [],
    env: process.env,
    ...(typeof opts.config === 'string' ? { configFile: opts.config } : {}),
    cwd: process.cwd(),
    // eventStore is on by default where a store is configured or the local one exists.
    ...(storeDefault ? { defaults: { eventStore: storeDefault } } : {}),
    ...knobProfileOf(opts),
  });
  // loki-mode aliases (LOKI_*): one line each, on stderr, naming the knob.
  for (const note of resolved.notes ?? []) process.stderr.write(`vigil: ${note}\n`);
  return resolved;
}

export function buildProgram(): Command {
  const program = new Command('vigil')
    .description('Durable, unattended autonomous coding runs on Temporal.')
    .version(packageVersion())
    .option('--profile <name>', 'the temporal.toml profile to connect with (beats TEMPORAL_PROFILE), as for the temporal CLI')
    .showHelpAfterError('(run with --help for usage)')
    // Every command's help lists --profile too.
    .configureHelp({ showGlobalOptions: true })
    .exitOverride();
  program.configureOutput({ writeErr: (s) => process.stderr.write(s) });

  // Resolved when a command needs it, after parsing: `--profile` may come after the verb, and a
  // broken temporal.toml must not stop commands that never connect.
  let resolved: Endpoint | undefined;
  const endpoint = (): Endpoint => {
    if (!resolved) {
      const profile = (program.opts() as { profile?: string }).profile;
      resolved = endpointFromEnv(process.env, profile ? { profile } : {});
    }
    return resolved;
  };
  program.addHelpText('after', () => {
    let now = '';
    try {
      const ep = endpoint();
      now = `${describeEndpoint(ep)}, namespace ${ep.namespace}, task queue ${ep.taskQueue}`;
    } catch (err) {
      now = err instanceof Error ? err.message : String(err);
    }
    return (
      '\nConnection, as for the temporal CLI: a temporal.toml profile (--profile, TEMPORAL_PROFILE, TEMPORAL_CONFIG_FILE),\n' +
      'overridden by TEMPORAL_ADDRESS, TEMPORAL_NAMESPACE, TEMPORAL_API_KEY, TEMPORAL_TLS_*; VIGIL_TASK_QUEUE, VIGIL_HOME.\n' +
      `Now: ${now}.\n` +
      'Exit codes: 0 done or stopped, 1 failed, 20 terminal without success, 2 bad input, 3 no such run,\n' +
      '4 Temporal or worker unreachable, 5 run finished before the awaited state, 124 timed out.'
    );
  });

  program
    .command('setup')
    .description(
      "install what Vigil needs on this machine (the pinned temporal CLI; the sandbox's network bridge, with the Go on PATH) and print where it is; with --search-attributes, register Vigil's search attributes in the namespace instead",
    )
    .option(
      '--search-attributes',
      "register Vigil's search attributes (VigilStatus, ...) in the namespace: once per namespace, by someone allowed to change it",
    )
    .action(async (o: { searchAttributes?: boolean }) => {
      if (o.searchAttributes) {
        const { ensureSearchAttributes } = await import('./connection.js');
        const ep = endpoint();
        await withClient(ep, async (_client, connection) => {
          const added = await ensureSearchAttributes(connection, ep.namespace, ep);
          out(
            added.length
              ? `registered ${added.join(', ')} in namespace "${ep.namespace}" at ${describeEndpoint(ep)}`
              : `namespace "${ep.namespace}" has Vigil's search attributes already`,
          );
        });
        return;
      }
      const { resolveTemporalCli } = await import('../workers/temporal-cli.js');
      const cli = await resolveTemporalCli({ log: out });
      out(`temporal CLI: ${cli.path} (${cli.source}) — ${cli.version.split('\n')[0]}`);
      const { setupSandboxBridge } = await import('../workers/sandbox-bridge-setup.js');
      out(setupSandboxBridge().line);
    });

  storeOption(
    logFormatOption(
      serverOptions(
        program
          .command('server')
          .description('start the embedded Temporal dev server (persistent SQLite under VIGIL_HOME, Web UI) and the embedded event store'),
      ),
    ),
  ).action(async (o: ServerFlags & StoreFlags & OperationsFlags) => {
    const ops = resolveOperations(o, process.env);
    const { serverCommand } = await import('./processes.js');
    process.exitCode = await serverCommand(endpoint(), o, ops);
  });

  storeOption(
    workerOperationsOptions(
      program.command('worker').description('run a Vigil worker: the run workflow and its activities (agent calls, git, tests)'),
    ),
  )
    .option(
      '--require-signed-runs',
      "execute only runs signed with this installation's run secret (created now if missing); see docs/security.md",
    )
    .option('--host <name>', HOST_WORKER_HELP)
    .action(async (o: { requireSignedRuns?: boolean; host?: string } & StoreFlags & OperationsFlags) => {
      const ops = resolveOperations(o, process.env);
      setLogFormat(ops.logFormat);
      const [{ workerCommand }, { resolveHost }] = await Promise.all([import('./processes.js'), import('./hosts.js')]);
      const host = resolveHost(o.host);
      if (o.requireSignedRuns) {
        const { runSecret, runSecretPath } = await import('../activities/run-authorization.js');
        process.env.VIGIL_REQUIRE_SIGNED_RUNS = '1';
        runSecret(process.env, true);
        logLine('INFO', `vigil worker: executing only runs signed with ${runSecretPath()}`);
      }
      process.exitCode = await workerCommand(endpoint(), host, ops, o);
    });

  storeOption(
    workerOperationsOptions(
      serverOptions(
        program.command('up').description('start the dev server (unless one answers already), the event store and a worker in one process'),
      ),
    ),
  )
    .option('--host <name>', HOST_WORKER_HELP)
    .action(async (o: ServerFlags & StoreFlags & OperationsFlags & { host?: string }) => {
      const ops = resolveOperations(o, process.env);
      const [{ devServerTarget, upCommand }, { resolveHost }] = await Promise.all([import('./processes.js'), import('./hosts.js')]);
      const { host: hostFlag, ...flags } = o;
      const host = resolveHost(hostFlag);
      // What another terminal needs to reach this server (the address it starts at, or the one answering there).
      const ep = endpoint();
      setLogFormat(ops.logFormat);
      logLine(
        'INFO',
        `other terminals: export TEMPORAL_ADDRESS=${devServerTarget(ep, flags).address}${ep.namespace !== 'default' ? ` TEMPORAL_NAMESPACE=${ep.namespace}` : ''}`,
      );
      process.exitCode = await upCommand(ep, flags, host, ops);
    });

  storeOption(
    serverOptions(
      program
        .command('demo')
        .description('run the scripted demo end to end: server, event store, worker and a real run over a sample repository'),
    ),
  )
    .option('--keep-server', 'keep the server and worker running after the run finishes')
    .action(async (o: ServerFlags & StoreFlags & { keepServer?: boolean }) => {
      const { demoCommand } = await import('./demo.js');
      process.exitCode = await demoCommand(endpoint(), o);
    });

  storeOption(
    serverOptions(
      program
        .command('try')
        .description(
          'a first run on your own repository without an LLM: the scripted agent, with the knobs `start` would use, in a scratch worktree of your HEAD; then what to change for a real agent',
        )
        .argument('[prd]', 'your PRD, checked and named (default: a sample PRD, marked as such)')
        .option('--repo <dir>', 'the git repository to rehearse on', '.')
        .option('--config <file>', 'JSON config file of knobs (default: ./vigil.config.json if present)')
        .option('--set <key=value>', 'set a knob (repeatable); see `vigil config --explain`', collect, []),
    ),
  ).action(async (prd: string | undefined, o: ServerFlags & StoreFlags & { repo: string; config?: string; set: string[] }) => {
    const { tryCommand } = await import('./try.js');
    process.exitCode = await tryCommand(endpoint(), prd, o, await resolve({ ...o }));
  });

  attemptFlags(program.command('start'))
    .description('start a run of the agent on a repository until the PRD is done')
    .argument('[prd]', 'the PRD (product requirements) file (or --issue FILE)')
    .option('--issue <file>', "an issue's text (Markdown) as the PRD, its task list (- [ ] ...) as the PRD checklist")
    .option('--repo <dir>', 'git repository the agent works in', '.')
    .addOption(new Option('--provider <name>', 'agent CLI (see docs/agents-and-providers.md)').choices([...PROVIDERS]))
    .option('--agent-command <cmd>', 'the agent command line (no shell; the prompt arrives on stdin)')
    .option('--config <file>', 'JSON config file of knobs (default: ./vigil.config.json if present)')
    .option('--set <key=value>', 'set a knob (repeatable); see `vigil config --explain`', collect, [])
    .option('--id <id>', "workflow id of the run (default: vigil-<prd name>-<time>); a finished run's id is refused without --replace")
    .option('--replace', 'with --id of a run that ended: start a new run under that id on purpose (a running one is never replaced)')
    .option('--checklist <file>', 'the PRD checklist to verify (JSON or Markdown) instead of one extracted from the PRD')
    .option(
      '--acceptance <dir>',
      'acceptance tests a person wrote from the PRD (outside the repository): sealed at the start, never shown to the agents, run on every claim',
    )
    .option(
      '--acceptance-from-prd',
      'an acceptance agent writes the acceptance tests from the PRD before the first iteration: sealed, never shown to the builder; a supervised run shows them to you first',
    )
    .option(
      '--tasks <file>',
      'split the run into tasks (JSON or Markdown: id, title, checklist items, dependencies), each a stream of its own: needs --set parallelStreams=N (2-8)',
    )
    .option(
      '--host <name>',
      "the machine that holds the repository: the workers started there run the agent, git and tests (default: VIGIL_HOST, else this machine's name)",
    )
    .option('--no-store', 'do not journal the run into the event store (on by default when one is configured or the local one exists)')
    .option(
      '--deliver-to-current',
      'deliver a done run on the current branch (committed there, the index set to it) instead of vigil/<run id>',
    )
    .option('--wait', 'follow the run until it finishes; exit with its outcome code')
    .option('--json', 'print the started run as a JSON line; with --wait, then a JSON line per event as `watch --json`')
    .action(async (prdFile: string | undefined, o: Record<string, unknown>) => {
      const { startCommand } = await import('./start-command.js');
      await startCommand(prdFile, o, { resolve, endpoint, validateId });
    });

  program
    .command('status')
    .description('show a run: status, iteration, pause, outcome')
    .argument('<id>', 'workflow id of the run', runIdArg)
    .option('--json', 'machine-readable output')
    .action(async (id: string, o: { json?: boolean }) => {
      await statusCommand(endpoint(), id, Boolean(o.json));
    });

  const message =
    (kind: MessageKind, payload: (o: Record<string, unknown>, extra?: string) => Record<string, unknown>) =>
    async (id: string, ...rest: unknown[]) => {
      const hasText = kind === 'input';
      const text = hasText ? (rest[0] as string | undefined) : undefined;
      const o = (hasText ? rest[1] : rest[0]) as Record<string, unknown>;
      // Bad input is exit 2 whether or not Temporal answers: build the payload before connecting.
      const body = payload(o, text);
      await messageCommand(endpoint(), kind, id, body, Boolean(o.signal), Boolean(o.json));
    };
  const MESSAGE_JSON = 'print the acknowledgement (or, with --signal, that the signal was recorded) as JSON';

  program
    .command('pause')
    .description('pause a run at the next iteration boundary (the running agent call finishes first)')
    .argument('<id>', 'workflow id of the run', runIdArg)
    .option('--reason <text>', 'why (shown in status and the UI)')
    .option('--by <name>', 'who is pausing (default: your OS user name)')
    .option('--signal', 'send as a signal: recorded even when no worker is running, but not acknowledged')
    .option('--json', MESSAGE_JSON)
    .action(message('pause', PAYLOADS.pause));

  program
    .command('resume')
    .description('resume a paused run')
    .argument('<id>', 'workflow id of the run', runIdArg)
    .option('--by <name>', 'who is resuming (default: your OS user name)')
    .option('--signal', 'send as a signal (see pause --signal)')
    .option('--json', MESSAGE_JSON)
    .action(message('resume', PAYLOADS.resume));

  program
    .command('stop')
    .description('stop a run: at the next boundary, or at once with --now (kills the running agent)')
    .argument('<id>', 'workflow id of the run', runIdArg)
    .option('--now', 'cancel the running agent call and kill its process tree')
    .option('--reason <text>', 'why')
    .option('--by <name>', 'who is stopping (default: your OS user name)')
    .option('--signal', 'send as a signal (see pause --signal)')
    .option('--json', MESSAGE_JSON)
    .action(message('stop', PAYLOADS.stop));

  program
    .command('input')
    .description('give the agent a one-shot directive, injected into the next prompt')
    .argument('<id>', 'workflow id of the run', runIdArg)
    .argument('[text]', 'the directive (or use --file)')
    .option('--file <file>', 'read the directive from a file')
    .option('--by <name>', 'who is speaking (default: your OS user name)')
    .option('--id <id>', "the directive's id, to resend one (the run takes a directive with an id it has seen once; default: a new one)")
    .option('--signal', 'send as a signal (see pause --signal)')
    .option('--json', MESSAGE_JSON)
    .action(message('input', PAYLOADS.input));

  program
    .command('review')
    .description('convene the completion council at the next iteration boundary, whatever the cadence')
    .argument('<id>', 'workflow id of the run', runIdArg)
    .option('--reason <text>', 'why')
    .option('--by <name>', 'who is asking (default: your OS user name)')
    .option('--signal', 'send as a signal (see pause --signal)')
    .option('--json', MESSAGE_JSON)
    .action(message('forceReview', (o) => ({ ...(typeof o.reason === 'string' ? { reason: o.reason } : {}), ...by(o) })));

  program
    .command('budget')
    .description("set the run's spend limit in USD (a run paused on its budget continues once resumed under it)")
    .argument('<id>', 'workflow id of the run', runIdArg)
    .requiredOption('--usd <amount>', 'the new limit for the whole run; 0 removes it', (raw: string) => {
      if (!/^\d+(\.\d+)?$/.test(raw.trim()))
        throw new InvalidArgumentError(`--usd must be a number of dollars, e.g. 25 or 12.50, got "${raw}"`);
      return Number(raw);
    })
    .option('--by <name>', 'who is changing it (default: your OS user name)')
    .option('--signal', 'send as a signal (see pause --signal)')
    .option('--json', MESSAGE_JSON)
    .action(message('budget', (o) => ({ usd: o.usd as number, ...by(o) })));

  program
    .command('waive')
    .description(
      'waive a PRD checklist item, or a finding of the integrity gates: it no longer blocks completion (held-out items by their status label, e.g. held-out-1; findings by their id, e.g. assertion_changed-1a2b3c4d)',
    )
    .argument('<id>', 'workflow id of the run', runIdArg)
    .argument('<item>', 'the checklist item id or the finding id, as `vigil status` shows it')
    .option('--reason <text>', 'why (kept with the waiver)')
    .option('--by <name>', 'who is waiving it (default: your OS user name)')
    .option('--signal', 'send as a signal (see pause --signal)')
    .option('--json', MESSAGE_JSON)
    .action(async (id: string, item: string, o: Record<string, unknown>) =>
      message('waive', () => ({ item, ...(typeof o.reason === 'string' ? { reason: o.reason } : {}), ...by(o) }))(id, o),
    );

  program
    .command('checkpoints')
    .description("list a run's checkpoints (iteration, time, commit, files changed, exit, tests, council verdict) and its rewinds")
    .argument('<id>', 'workflow id of the run', runIdArg)
    .option('--json', 'machine-readable output')
    .action(async (id: string, o: { json?: boolean }) => {
      const { checkpointsCommand } = await import('./checkpoints.js');
      await withClient(endpoint(), async (client) => checkpointsCommand(client, endpoint(), id, Boolean(o.json), out));
    });

  program
    .command('rewind')
    .description(
      'take a run back to just after iteration N: the tree restored to its checkpoint (the current tree kept first), the state as it was then; --fork starts a new run from checkpoint N of a finished run',
    )
    .argument('<id>', 'workflow id of the run', runIdArg)
    .requiredOption(
      '--to <n>',
      'the iteration to go back to (one with a checkpoint: `vigil checkpoints <id>`)',
      intArg('--to', 1, 100_000_000),
    )
    .option('--reason <text>', 'why (shown in status and the UI)')
    .option('--input <text>', 'a directive for the next prompt ("try it without the ORM")')
    .option('--force', 'keep changes a person made to the tree since the run last looked in a checkpoint, instead of refusing')
    .option('--fork', 'a finished run: start a new run (same PRD and knobs) from checkpoint N instead')
    .option(
      '--id <id>',
      "with --fork: workflow id of the new run (default: <id>-fork-<N>-<time>); a finished run's id is refused without --replace",
    )
    .option('--replace', 'with --fork --id of a run that ended: start the fork under that id on purpose (a running one is never replaced)')
    .option('--by <name>', 'who is rewinding (default: your OS user name)')
    .option('--json', 'what was done (the acknowledgement, or the forked run), as JSON')
    .action(async (id: string, o: Record<string, unknown>) => {
      const { rewindRun } = await import('./checkpoints.js');
      if (o.id !== undefined && !o.fork)
        throw new CliError('--id names the new run of --fork; without --fork the run keeps its id', EXIT.usage);
      if (o.replace && o.id === undefined)
        throw new CliError('--replace takes the id given with --fork --id; a fork without --id gets a fresh one', EXIT.usage);
      const ep = endpoint();
      await withClient(ep, async (client, connection) => {
        const done = await rewindRun(client, connection, ep, id, {
          to: o.to as number,
          ...(typeof o.reason === 'string' ? { reason: o.reason } : {}),
          ...(typeof o.input === 'string' ? { directive: o.input } : {}),
          force: Boolean(o.force),
          fork: Boolean(o.fork),
          ...(typeof o.id === 'string' ? { forkId: validateId(o.id) } : {}),
          ...(o.replace ? { replace: true } : {}),
          by: by(o).by ?? defaultActor(),
        });
        if (o.json) out(JSON.stringify(done.json, null, 2));
        else for (const l of done.lines) out(l);
      });
    });

  // vigil report, history and rejudge: the event store's readers (cli/report-commands.ts).
  addReportCommands(program, { runIdArg, collect, endpoint });
  // vigil pr-event: the events of a followed pull request (cli/pr-commands.ts).
  addPrCommands(program, { runIdArg, endpoint });

  // vigil memory list|show|search|forget|export|import|consolidate (cli/memory-command.ts).
  addMemoryCommand(program);

  program
    .command('list')
    .description('list runs, newest first: id, status, iteration, started, repository')
    .option('--json', 'machine-readable output')
    .option('--limit <n>', 'at most this many', intArg('--limit', 1, 10000), 50)
    .option(
      '--status <status>',
      'only runs whose VigilStatus is this: running, paused, backing_off, ... or an outcome (council_approved, stopped, failed, ...)',
    )
    .option('--repo <dir>', 'only runs on this repository (its VigilRepo: the absolute path)')
    .action(async (o: { json?: boolean; limit: number; status?: string; repo?: string }) => {
      const [{ SA_ITERATION, SA_REPO, SA_STATUS }, { listQuery }] = await Promise.all([
        import('../schemas/search-attributes.js'),
        import('./runs.js'),
      ]);
      const query = listQuery({
        ...(o.status !== undefined ? { status: o.status } : {}),
        ...(o.repo !== undefined ? { repo: o.repo } : {}),
      });
      await withClient(endpoint(), async (client) => {
        const rows: ListRow[] = [];
        for await (const wf of client.workflow.list({ query })) {
          const sa = wf.typedSearchAttributes;
          rows.push({
            workflowId: wf.workflowId,
            runId: wf.runId,
            temporalStatus: wf.status.name,
            status: sa.get(SA_STATUS) ?? null,
            iteration: sa.get(SA_ITERATION) ?? null,
            repo: sa.get(SA_REPO) ?? null,
            startTime: wf.startTime.toISOString(),
            closeTime: wf.closeTime?.toISOString() ?? null,
          });
          if (rows.length >= o.limit) break;
        }
        const filtered = o.status !== undefined || o.repo !== undefined;
        if (o.json) out(JSON.stringify(rows, null, 2));
        else if (rows.length === 0)
          out(
            filtered
              ? 'no run matches (runs started without search attributes are found by neither filter)'
              : 'no runs yet (start one with `vigil start PRD.md --repo DIR`)',
          );
        else {
          const row = (id: string, status: string, iteration: string, started: string, repo: string): string =>
            `${id.padEnd(40)} ${status.padEnd(30)} ${iteration.padStart(4)}  ${started.padEnd(24)}  ${repo}`;
          out(row('RUN', 'STATUS', 'ITER', 'STARTED', 'REPOSITORY'));
          for (const r of rows)
            out(row(r.workflowId, r.status ?? r.temporalStatus.toLowerCase(), String(r.iteration ?? '-'), r.startTime, r.repo ?? ''));
        }
      });
    });

  program
    .command('watch')
    .description('follow a run live: one line per iteration and every status change, until it finishes')
    .argument('<id>', 'workflow id of the run', runIdArg)
    .option(
      '--json',
      'a JSON line per event (an iteration, a gate pass, a council round with its votes, a status change, the end) instead of text',
    )
    .action(async (id: string, o: { json?: boolean }) => {
      const ep = endpoint();
      const [{ followRun }, { steerOnCtrlC }, { sdkRunApi }] = await Promise.all([
        import('./follow.js'),
        import('./ctrl-c.js'),
        import('./sdk-run-api.js'),
      ]);
      await withClient(ep, async (client) => {
        const text = `watching ${id} — ${runUrl(ep, id)}`;
        if (o.json) jsonLine({ kind: 'watching', workflowId: id, historyUrl: runUrl(ep, id), text });
        else out(text);
        // Ctrl+C pauses the run, a second stops it (cli/ctrl-c.ts); the lines that follow show it.
        const release = steerOnCtrlC(sdkRunApi(client), ep, id);
        try {
          const r = await followRun(client, id, { until: 'terminal', ...(o.json ? { onEvent: jsonLine } : { onLine: out }) });
          process.exitCode = r.exitCode;
        } finally {
          release();
        }
      });
    });

  program
    .command('wait')
    .description('block until a run finishes (exit with its outcome code) or, with --for paused, until it pauses (exit 0)')
    .argument('<id>', 'workflow id of the run', runIdArg)
    .addOption(new Option('--for <state>', 'what to wait for').choices(['terminal', 'paused']).default('terminal'))
    .option('--timeout <seconds>', 'give up after this many seconds (exit 124)', intArg('--timeout', 1, 31_536_000))
    .option('--json', 'what was awaited and what came of it (pause or outcome, exit code), as JSON')
    .action(async (id: string, o: { for: 'terminal' | 'paused'; timeout?: number; json?: boolean }) => {
      const { followRun } = await import('./follow.js');
      await withClient(endpoint(), async (client) => {
        const r = await followRun(client, id, { until: o.for, ...(o.timeout ? { timeoutMs: o.timeout * 1000 } : {}), pollMs: 500 });
        const notReached = o.for === 'paused' && !r.reached;
        if (o.json) {
          const outcome = r.view.kind === 'finished' ? r.view.outcome : null;
          const answer: WaitJson = {
            workflowId: id,
            for: o.for,
            reached: !notReached,
            status: r.view.kind === 'finished' ? 'finished' : 'paused',
            pause: r.view.snapshot?.pause ?? null,
            outcome: outcome ? { status: outcome.status, reason: outcome.reason, exitCode: outcome.exitCode, notes: outcome.notes } : null,
            exitCode: notReached ? EXIT.notReached : r.exitCode,
          };
          out(JSON.stringify(answer, null, 2));
          if (notReached) process.stderr.write(`run "${id}" finished without pausing\n`);
          process.exitCode = answer.exitCode;
        } else if (notReached) {
          process.stderr.write(`run "${id}" finished without pausing\n`);
          process.exitCode = EXIT.notReached;
        } else {
          const snap = r.view.snapshot;
          if (o.for === 'paused')
            out(`${id}: paused${snap?.pause ? ` by ${snap.pause.by}${snap.pause.reason ? `: ${snap.pause.reason}` : ''}` : ''}`);
          else {
            const outcome = r.view.kind === 'finished' ? r.view.outcome : null;
            out(`${id}: finished${outcome ? `: ${outcome.status} (exit ${outcome.exitCode})` : ''}`);
            for (const note of outcome?.notes ?? []) out(`  note: ${note}`);
          }
          process.exitCode = r.exitCode;
        }
      });
    });

  program
    .command('logs')
    .description(
      "show an iteration's agent log, from any machine (read on the run's host by its worker, no workflow per read); -f follows the run from iteration to iteration until it finishes",
    )
    .argument('<id>', 'workflow id of the run', runIdArg)
    .option('--iteration <n>', 'which iteration (default: the current or last one)', intArg('--iteration', 1, 1_000_000))
    .option('-f, --follow', 'keep printing what the agent writes until its call ends (Ctrl+C stops, exit 0)')
    .option('--timeout <seconds>', "how long the run's host has to answer a read (exit 4 past it)", intArg('--timeout', 1, 300), 15)
    .option('--json', 'JSON lines: the iteration read, its text as chunks, notes, and (with -f) the end of the run')
    .action(async (id: string, o: { iteration?: number; follow?: boolean; timeout: number; json?: boolean }) => {
      const { logsCommand } = await import('./logs.js');
      await withClient(endpoint(), async (client) => {
        process.exitCode = await logsCommand(client, id, {
          ...(o.iteration !== undefined ? { iteration: o.iteration } : {}),
          follow: Boolean(o.follow),
          answerSeconds: o.timeout,
          write: (text) => new Promise<void>((resolve) => process.stdout.write(text, () => resolve())),
          note: (line) => process.stderr.write(`${line}\n`),
          ...(o.json
            ? { event: (e: unknown) => new Promise<void>((resolve) => process.stdout.write(`${JSON.stringify(e)}\n`, () => resolve())) }
            : {}),
          // Only following ends on Ctrl+C with exit 0; a plain read is interrupted as any command.
          ...(o.follow ? { interrupted: new Promise<void>((resolve) => process.once('SIGINT', () => resolve())) } : {}),
        });
      });
    });

  program
    .command('handoff')
    .description("print a run's latest handoff (the document Vigil wrote when it asked a person for help), from any machine")
    .argument('<id>', 'workflow id of the run', runIdArg)
    .option('--json', 'the document with its run, iteration, path and summary, as JSON')
    .option('--timeout <seconds>', "how long the run's host has to answer the read (exit 4 past it)", intArg('--timeout', 1, 300), 15)
    .action(async (id: string, o: { json?: boolean; timeout: number }) => {
      const { handoffCommand } = await import('./handoff.js');
      await withClient(endpoint(), async (client) => {
        process.exitCode = await handoffCommand(client, id, {
          json: Boolean(o.json),
          answerSeconds: o.timeout,
          write: (text) => new Promise<void>((resolve) => process.stdout.write(text, () => resolve())),
        });
      });
    });

  program
    .command('console')
    .description(
      'serve the operator console: every run waiting for a person with its handoff and the actions that answer it, every run with its timeline, charts and live log, and the reports (see docs/console.md)',
    )
    .option(
      '--host <host>',
      'address to listen on; any but a loopback address needs the console token (made once, printed once, kept in VIGIL_HOME)',
      '127.0.0.1',
    )
    .option('--port <port>', 'port to listen on, 0 for any free one (default: 8237)', intArg('--port', 0, 65_535))
    .option('--by <name>', 'who the actions are sent by (default: your OS user name); a person can set another name in the page')
    .action(async (o: { host: string; port?: number; by?: string }) => {
      const { consoleCommand, DEFAULT_CONSOLE_PORT } = await import('./console/command.js');
      process.exitCode = await consoleCommand(
        endpoint(),
        { host: o.host, port: o.port ?? DEFAULT_CONSOLE_PORT, by: o.by ?? defaultActor() },
        out,
      );
    });

  program
    .command('mcp')
    .description(
      "serve Vigil's tools and resources to an MCP client (Claude Code, Cursor, an agent inside a run) over stdio, or with --http over streamable HTTP on loopback (see docs/mcp.md)",
    )
    .option(
      '--http',
      'streamable HTTP at http://127.0.0.1:<port>/mcp instead of stdio, for clients that send the token in VIGIL_HOME/mcp-token',
    )
    .option('--port <port>', 'with --http: the port, 0 for any free one (default: 8238)', intArg('--port', 0, 65_535))
    .action(async (o: { http?: boolean; port?: number }) => {
      if (o.port !== undefined && !o.http) throw new CliError('--port is for --http; over stdio there is no port', EXIT.usage);
      const { mcpCommand } = await import('./mcp.js');
      process.exitCode = await mcpCommand(
        { endpoint, resolve, validateId },
        { http: Boolean(o.http), ...(o.port !== undefined ? { port: o.port } : {}) },
      );
    });

  program
    .command('codec-server')
    .description('serve /encode and /decode for the Temporal Web UI and CLI with the payload key (VIGIL_CODEC_KEY_FILE or VIGIL_CODEC_KEY)')
    .option('--host <host>', 'address to listen on (keep it private: whoever reaches it can decrypt)', '127.0.0.1')
    .option('--port <port>', 'port to listen on', intArg('--port', 1, 65_535), 8081)
    .option(
      '--cors-origin <url>',
      'a Web UI origin allowed to call it (repeatable; default the UI of TEMPORAL_ADDRESS)',
      collect,
      [] as string[],
    )
    .action(async (o: { host: string; port: number; corsOrigin: string[] }) => {
      const [{ codecFromEnv }, { startCodecServer }] = await Promise.all([
        import('../workers/codec.js'),
        import('../workers/codec-server.js'),
      ]);
      const codec = codecFromEnv();
      if (!codec)
        throw new CliError(
          'no payload key: set VIGIL_CODEC_KEY_FILE (a file with a base64 or hex 32-byte key: `openssl rand -base64 32 > key`) or VIGIL_CODEC_KEY',
          EXIT.usage,
        );
      const origins = o.corsOrigin.length ? o.corsOrigin : [endpoint().uiUrl];
      const server = await startCodecServer({ codec, host: o.host, port: o.port, corsOrigins: origins });
      out(`vigil codec-server: ${server.url} (key id ${codec.keyId}); allowed UI origins: ${origins.join(', ')}`);
      out(`In the Web UI: Settings → Data Encoder → ${server.url}; with the temporal CLI: --codec-endpoint ${server.url}`);
      await new Promise<void>((resolve) => {
        const stop = (): void => resolve();
        process.once('SIGINT', stop);
        process.once('SIGTERM', stop);
      });
      await server.close();
    });

  program
    .command('doctor')
    .description('check this machine: agent CLIs (versions, flags, credentials), Temporal, a polling worker')
    .addOption(new Option('--provider <name>', 'check only this provider').choices([...PROVIDERS]))
    .option(
      '--agent-command <cmd>',
      'drive every role of the agent contract once with this command (in a scratch repository) and say which answers are wrong',
    )
    .option('--contract', 'with --provider: drive every role of the agent contract once through that CLI')
    .option(
      '--config <file>',
      'JSON config file of knobs whose provider and agentCommand are checked (default: ./vigil.config.json if present)',
    )
    .option(
      '--deep',
      "also send each provider's endpoint a one-token request with its key (reachable? key accepted?); without it nothing is sent",
    )
    .option('--repo <dir>', "also run the repository's test command outside and inside the sandbox: is every command it runs found inside?")
    .option('--json', 'machine-readable output')
    .action(
      async (o: {
        provider?: string;
        json?: boolean;
        agentCommand?: string;
        contract?: boolean;
        config?: string;
        deep?: boolean;
        repo?: string;
      }) => {
        if (o.agentCommand !== undefined || o.contract) {
          const provider = o.agentCommand !== undefined ? 'command' : o.provider;
          if (!provider || (o.agentCommand !== undefined && o.provider && o.provider !== 'command')) {
            process.stderr.write('vigil: doctor --contract needs --provider P; --agent-command CMD is the command provider\n');
            process.exitCode = 2;
            return;
          }
          const { splitCommandLine } = await import('../schemas/knobs.js');
          const argv = o.agentCommand !== undefined ? splitCommandLine(o.agentCommand) : [];
          if (o.agentCommand !== undefined && argv.length === 0) {
            process.stderr.write('vigil: --agent-command is empty\n');
            process.exitCode = 2;
            return;
          }
          const { checkContract, contractLines, contractOk } = await import('./doctor-contract.js');
          const checks = await checkContract({
            provider: provider as (typeof PROVIDERS)[number],
            argv,
            ...(o.json ? {} : { progress: (l: string) => void process.stderr.write(`${l}\n`) }),
          });
          if (o.json) process.stdout.write(`${JSON.stringify({ ok: contractOk(checks), checks }, null, 2)}\n`);
          else
            for (const l of [`Agent contract (${provider === 'command' ? argv.join(' ') : provider})`, ...contractLines(checks)])
              process.stdout.write(`${l}\n`);
          process.exitCode = contractOk(checks) ? 0 : 1;
          return;
        }
        const { doctorCommand, temporalCheck } = await import('./doctor.js');
        // The provider and agent command a start here would use (vigil.config.json, VIGIL_*): a
        // configured command provider is checked as such, not the vendor CLIs.
        const { knobs, sources } = await resolve({ ...(o.config ? { config: o.config } : {}) });
        const configured = sources.provider.source !== 'default' || sources.agentCommand.source !== 'default' ? knobs.provider : undefined;
        const provider = o.provider ?? configured;
        process.exitCode = await doctorCommand({
          ...(provider ? { provider } : {}),
          agentCommand: knobs.agentCommand,
          deliver: knobs.deliver,
          notify: knobs,
          ...(o.repo !== undefined ? { tests: { repo: (await import('./runs.js')).checkRepo(o.repo), command: knobs.testCommand } } : {}),
          json: Boolean(o.json),
          deep: Boolean(o.deep),
          // A broken profile is a failed check, not a crash.
          connect: async () => temporalCheck(endpoint()),
        });
      },
    );

  program
    .command('providers')
    .description('the provider circuit breakers shared by every run (state, failures in window, open until); --reset P closes one')
    .option('--json', 'machine-readable output')
    .option('--reset <provider>', "close this provider's breaker now (operator override)")
    .option('--by <name>', 'who is resetting (default: your OS user name)')
    .action(async (o: { json?: boolean; reset?: string; by?: string }) => {
      const { providersCommand } = await import('./providers.js');
      await withClient(endpoint(), async (client) => {
        process.exitCode = await providersCommand(client, {
          json: Boolean(o.json),
          ...(o.reset ? { reset: o.reset } : {}),
          by: o.by ?? defaultActor(),
        });
      });
    });

  program
    .command('completion')
    .description(
      'print a shell completion script made from this command tree: `source <(vigil completion bash)` (or zsh); fish: `vigil completion fish > ~/.config/fish/completions/vigil.fish`',
    )
    .addArgument(new Argument('<shell>', 'the shell').choices(['bash', 'zsh', 'fish']))
    .action(async (shell: string) => {
      const { completionScript } = await import('./completion.js');
      process.stdout.write(completionScript(program, shell));
    });

  // vigil schedule create|list|describe|pause|unpause|trigger|delete (cli/schedule.ts).
  addScheduleCommand(program, { endpoint, resolve, out });

  program
    .command('config')
    .description('show the knobs a `vigil start` here would use')
    .option('--json', 'machine-readable output')
    .option('--config <file>', 'JSON config file of knobs')
    .option('--set <key=value>', 'set a knob (repeatable)', collect, [])
    .option('--agent-command <cmd>', 'the agent command line')
    .action(async (o: Record<string, unknown>) => {
      const { checkPromptTemplate, explainKnobs, explainKnobsJson } = await import('./config.js');
      const resolved = checkPromptTemplate(await resolve(o), process.cwd());
      if (o.json) out(JSON.stringify(explainKnobsJson(resolved), null, 2));
      else if (o.explain) out(explainKnobs(resolved, { all: o.all === true }));
      else out(JSON.stringify(resolved.knobs, null, 2));
    });

  return program;
}

function packageVersion(): string {
  return (JSON.parse(readFileSync(path.join(packageRoot(), 'package.json'), 'utf8')) as { version: string }).version;
}

function validateId(id: string): string {
  if (!/^[A-Za-z0-9][A-Za-z0-9._:-]{0,199}$/.test(id)) {
    const shown = id.length > 60 ? `${JSON.stringify(id.slice(0, 60)).slice(0, -1)}…" (${id.length} characters)` : JSON.stringify(id);
    throw new CliError(
      `--id ${shown} is not allowed: use 1-200 letters, digits, '.', '_', ':' or '-', starting with a letter or digit`,
      EXIT.usage,
    );
  }
  return id;
}

export async function main(argv: string[]): Promise<number> {
  const program = (await import('./knob-options.js')).addKnobOptions(buildProgram());
  try {
    await program.parseAsync(argv);
    return typeof process.exitCode === 'number' ? process.exitCode : 0;
  } catch (err) {
    if (err instanceof CommanderError) {
      return err.exitCode === 0 ? 0 : EXIT.usage;
    }
    return reportFailure(err);
  }
}

const code = await main(process.argv);
process.exit(code);
