/**
 * The event store's readers as `vigil` commands: `report` and `history` (cli/report.ts),
 * `notifications` (cli/notifications.ts) and `rejudge` (cli/rejudge.ts). The commander lines
 * only; each command's module is loaded when it runs.
 */
import type { Client } from '@temporalio/client';
import type { Command } from 'commander';
import type { Endpoint } from './connection.js';

export interface ReportCommandsContext {
  /** The run-id argument's parser (an empty id is a usage error). */
  runIdArg: (raw: string) => string;
  /** Commander's collector for repeatable options. */
  collect: (value: string, previous: string[]) => string[];
  /** The Temporal endpoint, resolved after parsing. */
  endpoint: () => Endpoint;
}

export function addReportCommands(program: Command, ctx: ReportCommandsContext): void {
  program
    .command('report')
    .description(
      "reports from the event store (DATABASE_URL, else the local one): across runs, or one run's timeline of iterations and decisions",
    )
    .argument('[id]', 'a run: its timeline instead of the report across runs')
    .option('--since <when>', 'runs started since a date (2026-01-31) or a duration back from now (30m, 12h, 7d, 2w)')
    .option('--repo <dir>', 'runs on this repository only')
    .option('--json', 'machine-readable output')
    .action(async (id: string | undefined, o: { since?: string; repo?: string; json?: boolean }) => {
      const { reportCommand } = await import('./report.js');
      process.exitCode = await reportCommand({ ...(id ? { id } : {}), ...o });
    });

  program
    .command('history')
    .description('export a run from the event store, as JSON lines (every event) or Markdown (one line per iteration and decision)')
    .argument('<id>', 'workflow id of the run', ctx.runIdArg)
    .option('--format <format>', 'jsonl or md', 'jsonl')
    .action(async (id: string, o: { format?: string }) => {
      const { historyCommand } = await import('./report.js');
      process.exitCode = await historyCommand(id, o);
    });

  const notifications = program
    .command('notifications')
    .description('what runs told people (escalations, pauses, budgets, finished runs), newest first, and which a person has acknowledged')
    .argument('[run]', "this run's only (as --run)")
    .option('--run <id>', "this run's only")
    .option('--new', 'only those nobody has acknowledged')
    .option('--limit <n>', 'how many (newest first; default 100, at most 1000)')
    .option('--json', 'machine-readable output')
    .action(async (arg: string | undefined, o: { run?: string; new?: boolean; limit?: string; json?: boolean }) => {
      const { notificationsCommand } = await import('./notifications.js');
      const run = arg ?? o.run;
      process.exitCode = await notificationsCommand({ ...o, ...(run ? { run: ctx.runIdArg(run) } : {}) });
    });
  notifications
    .command('ack')
    .description("acknowledge every notification of these runs so far (they are no longer new); --all: every run's")
    .argument('[runs...]', 'runs whose notifications to acknowledge')
    .option('--all', 'every run with notifications')
    .option('--by <name>', 'who acknowledges (default: your user name)')
    .option('--json', 'machine-readable output')
    .action(async (runs: string[], o: { all?: boolean; by?: string; json?: boolean }) => {
      const { ackCommand } = await import('./notifications.js');
      process.exitCode = await ackCommand(runs.map(ctx.runIdArg), o);
    });

  program
    .command('rejudge')
    .description(
      "judge recorded completion checks again by today's rules (or with --set knob=value), from the recorded evidence, without " +
        'calling an agent; says which verdicts flip and why',
    )
    .argument('[ids...]', 'runs in the event store')
    .option('--all', 'every run in the event store')
    .option('--from <path>', 'recorded runs from a file or a folder of them (repeatable; what --export writes)', ctx.collect, [])
    .option('--set <knob=value>', 'judge with this knob changed (repeatable)', ctx.collect, [])
    .option('--export <dir>', 'also write each recorded run there, one JSON file per run')
    .option('--json', 'machine-readable output')
    .action(async (ids: string[], o: { all?: boolean; from: string[]; set: string[]; export?: string; json?: boolean }) => {
      const { rejudgeCommand } = await import('./rejudge.js');
      const { connect } = await import('./connection.js');
      const client = async (): Promise<{ client: Client; close: () => Promise<void> }> => {
        const c = await connect(ctx.endpoint());
        return { client: c.client, close: () => c.connection.close() };
      };
      process.exitCode = await rejudgeCommand(ids.map(ctx.runIdArg), o, { out: (t) => process.stdout.write(t), env: process.env, client });
    });
}
