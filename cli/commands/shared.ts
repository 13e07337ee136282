/**
 * What the command modules of cli/commands/ share: the context cli/main.ts hands each register
 * function (the endpoint, resolved after parsing; the knob resolution of `start`, `try`, `doctor`,
 * `config` and MCP's vigil_start; the run id checks) and commander's small helpers. Light to import,
 * as every command module is: commander and modules without dependencies; the rest is loaded by
 * the action that needs it (cli/main.ts says why).
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { InvalidArgumentError, type Command } from 'commander';
import type { KnobName } from '../../schemas/knobs.js';
import { eventStoreDefault } from '../../lib/store-location.js';
import { packageRoot } from '../../lib/paths.js';
import type { ResolvedKnobs } from '../config.js';
import type { Endpoint } from '../connection.js';
import { CliError, EXIT } from '../errors.js';
import { intArg } from '../int-arg.js';
import { out } from '../steer-commands.js';

/** What every register function of cli/commands/ is handed by cli/main.ts. */
export interface CommandContext {
  /** The Temporal endpoint, resolved when a command needs it (after parsing: `--profile` may follow the verb). */
  endpoint: () => Endpoint;
  /** The knobs a start with these flags resolves (flags, --set, --config, VIGIL_*, the store's default). */
  resolve: (opts: Record<string, unknown>) => Promise<ResolvedKnobs>;
  /** `--id`'s check of a new run's workflow id. */
  validateId: (id: string) => string;
  /** A run's workflow id, as commander reads it. */
  runIdArg: (raw: string) => string;
  /** Commander's collector for repeatable options. */
  collect: (value: string, previous: string[]) => string[];
  out: (line?: string) => void;
}

/** One JSON line of a streaming command's `--json` output (`watch`, `start --wait`, `logs`). */
export const jsonLine = (value: unknown): void => out(JSON.stringify(value));

export const HOST_WORKER_HELP =
  "this machine's name for runs: poll its task queue <queue>@<name> for the activities of runs started with --host <name>, " +
  "besides the shared queue (default: VIGIL_HOST, else this machine's name)";

/** A run's workflow id, as commander reads it: not empty (the server would refuse it with a bare gRPC error). */
export function runIdArg(raw: string): string {
  if (raw.trim() === '') throw new InvalidArgumentError('a run id is not empty; `vigil list` shows the runs');
  return raw;
}

export const collect = (value: string, previous: string[]): string[] => [...previous, value];

export function serverOptions(cmd: Command): Command {
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
export function storeOption(cmd: Command): Command {
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

/** The knobs a command with these options resolves; loki-mode alias notes on stderr. */
export async function resolve(opts: Record<string, unknown>): Promise<ResolvedKnobs> {
  const { knobProfileOf, resolveKnobs } = await import('../config.js');
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

export function validateId(id: string): string {
  if (!/^[A-Za-z0-9][A-Za-z0-9._:-]{0,199}$/.test(id)) {
    const shown = id.length > 60 ? `${JSON.stringify(id.slice(0, 60)).slice(0, -1)}…" (${id.length} characters)` : JSON.stringify(id);
    throw new CliError(
      `--id ${shown} is not allowed: use 1-200 letters, digits, '.', '_', ':' or '-', starting with a letter or digit`,
      EXIT.usage,
    );
  }
  return id;
}

export function packageVersion(): string {
  return (JSON.parse(readFileSync(path.join(packageRoot(), 'package.json'), 'utf8')) as { version: string }).version;
}
