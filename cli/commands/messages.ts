/**
 * `vigil status` and the message verbs, registered from the message table
 * (schemas/message-verbs.ts): each row's verb, arguments, options and summary. A row sent as it is
 * builds its payload with cli/steer-commands.ts PAYLOADS (before anything connects: bad input is
 * exit 2 whatever Temporal says) and sends it with `messageCommand`, as the quick path does
 * (cli/fast.ts); `vigil rewind` has its handler here.
 */
import { InvalidArgumentError, Option, type Command } from 'commander';
import { MESSAGE_NAMES, MESSAGE_VERBS, type MessageName, type MessageVerb, type VerbOption } from '../../schemas/message-verbs.js';
import { withClient } from '../connection.js';
import { CliError, EXIT } from '../errors.js';
import { intArg } from '../int-arg.js';
import { by, defaultActor, messageCommand, out, PAYLOADS, statusCommand } from '../steer-commands.js';
import type { CommandContext } from './shared.js';

/** Commander's parser of a dollar amount (`--usd 12.50`). */
function dollarsArg(name: string) {
  return (raw: string): number => {
    if (!/^\d+(\.\d+)?$/.test(raw.trim()))
      throw new InvalidArgumentError(`${name} must be a number of dollars, e.g. 25 or 12.50, got "${raw}"`);
    return Number(raw);
  };
}

function optionOf(o: VerbOption): Option {
  const option = new Option(o.flags, o.help);
  if (o.required) option.makeOptionMandatory();
  const long = o.flags.split(' ')[0] as string;
  if (o.parse && 'dollars' in o.parse) option.argParser(dollarsArg(long));
  else if (o.parse) option.argParser(intArg(long, o.parse.int[0], o.parse.int[1]));
  return option;
}

/** `vigil rewind`: the rewind message around checkpoints, or a fork of a finished run (cli/checkpoints.ts). */
function rewindAction(ctx: CommandContext) {
  return async (id: string, o: Record<string, unknown>): Promise<void> => {
    const { rewindRun } = await import('../checkpoints.js');
    if (o.id !== undefined && !o.fork)
      throw new CliError('--id names the new run of --fork; without --fork the run keeps its id', EXIT.usage);
    if (o.replace && o.id === undefined)
      throw new CliError('--replace takes the id given with --fork --id; a fork without --id gets a fresh one', EXIT.usage);
    const ep = ctx.endpoint();
    await withClient(ep, async (client, connection) => {
      const done = await rewindRun(client, connection, ep, id, {
        to: o.to as number,
        ...(typeof o.reason === 'string' ? { reason: o.reason } : {}),
        ...(typeof o.input === 'string' ? { directive: o.input } : {}),
        force: Boolean(o.force),
        fork: Boolean(o.fork),
        ...(typeof o.id === 'string' ? { forkId: ctx.validateId(o.id) } : {}),
        ...(o.replace ? { replace: true } : {}),
        by: by(o).by ?? defaultActor(),
      });
      if (o.json) out(JSON.stringify(done.json, null, 2));
      else for (const l of done.lines) out(l);
    });
  };
}

/** The action of a row: its payload from the arguments after the run id and the options, then the message. */
function action(name: MessageName, ctx: CommandContext) {
  if (name === 'rewind') return rewindAction(ctx);
  return async (id: string, ...rest: unknown[]): Promise<void> => {
    const count = MESSAGE_VERBS[name].args.length;
    const args = rest.slice(0, count) as (string | undefined)[];
    const o = rest[count] as Record<string, unknown>;
    const body = PAYLOADS[name](o, ...args);
    await messageCommand(ctx.endpoint(), name, id, body, Boolean(o.signal), Boolean(o.json));
  };
}

/** `vigil status` and one verb per row of the message table. */
export function registerMessages(program: Command, ctx: CommandContext): void {
  program
    .command('status')
    .description('show a run: status, iteration, pause, outcome')
    .argument('<id>', 'workflow id of the run', ctx.runIdArg)
    .option('--json', 'machine-readable output')
    .action(async (id: string, o: { json?: boolean }) => {
      await statusCommand(ctx.endpoint(), id, Boolean(o.json));
    });

  for (const name of MESSAGE_NAMES) {
    const row: MessageVerb = MESSAGE_VERBS[name];
    const cmd = program.command(row.cli).description(row.summary).argument('<id>', 'workflow id of the run', ctx.runIdArg);
    for (const a of row.args) cmd.argument(a.optional ? `[${a.name}]` : `<${a.name}>`, a.help);
    for (const o of row.options) cmd.addOption(optionOf(o));
    cmd.action(action(name, ctx));
  }
}
