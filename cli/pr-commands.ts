/**
 * `vigil pr-event` and `vigil hooks` (cli/hooks.ts). `vigil pr-event` sends an event of the pull request a run follows (knob followPr) as its
 * `prEvent` signal, by hand or from any CI (GitLab, Jenkins, ...): red checks with their logs, a
 * comment with its author, the base moved, merged, closed. The commander lines only; the payload
 * is checked against schemas/pr-event.ts before anything connects (bad input: exit 2).
 */
import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import type { Command } from 'commander';
import type { Endpoint } from './connection.js';
import { CliError, EXIT } from './errors.js';

export interface PrCommandsContext {
  /** The run-id argument's parser (an empty id is a usage error). */
  runIdArg: (raw: string) => string;
  /** The Temporal endpoint, resolved after parsing. */
  endpoint: () => Endpoint;
}

export interface PrEventFlags {
  checksFailed?: string;
  check?: string;
  comment?: string;
  author?: string;
  review?: boolean;
  baseMoved?: boolean;
  merged?: boolean;
  mergeCommit?: string;
  closed?: boolean;
  id?: string;
  by?: string;
}

const LOG_TAIL = 8_000;

/**
 * The failing checks of `--checks-failed FILE`: a JSON array of `{ "name", "logTail" }`, else the
 * file is one check's log (named by --check, else the file's name), its tail kept.
 */
export function checksFromFile(file: string, name?: string): { name: string; logTail: string }[] {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (err) {
    throw new CliError(`--checks-failed: cannot read ${file}: ${err instanceof Error ? err.message : String(err)}`, EXIT.usage);
  }
  if (text.trimStart().startsWith('[')) {
    try {
      const parsed = JSON.parse(text) as { name?: unknown; logTail?: unknown }[];
      return parsed.map((c) => ({ name: String(c.name ?? ''), logTail: String(c.logTail ?? '').slice(-LOG_TAIL) }));
    } catch {
      // Not JSON after all: a log that starts with a bracket.
    }
  }
  return [{ name: name ?? path.basename(file), logTail: text.slice(-LOG_TAIL) }];
}

/** The `prEvent` payload the flags describe; exactly one kind of event. */
export function prEventPayload(o: PrEventFlags): Record<string, unknown> {
  const kinds = [o.checksFailed !== undefined, o.comment !== undefined, o.baseMoved, o.merged, o.closed].filter(Boolean).length;
  if (kinds !== 1)
    throw new CliError(
      'pr-event: give exactly one of --checks-failed FILE, --comment TEXT --author NAME, --base-moved, --merged, --closed',
      EXIT.usage,
    );
  const id = o.id ?? `cli-${randomUUID()}`;
  const by = o.by ? { by: o.by } : {};
  if (o.checksFailed !== undefined) return { kind: 'checks-failed', id, checks: checksFromFile(o.checksFailed, o.check), ...by };
  if (o.comment !== undefined) {
    if (!o.author) throw new CliError('pr-event: --comment needs --author NAME (who wrote it: the agent is told)', EXIT.usage);
    return { kind: 'comment', id, author: o.author, text: o.comment, commentKind: o.review ? 'review' : 'comment' };
  }
  if (o.baseMoved) return { kind: 'base-moved', id, ...by };
  if (o.merged) return { kind: 'merged', id, ...(o.mergeCommit ? { mergeCommit: o.mergeCommit } : {}), ...by };
  return { kind: 'closed', id, ...by };
}

/** Checks the payload, then signals the run; prints the event's id (resend with --id to have it taken once). */
export async function prEventCommand(ep: Endpoint, runId: string, o: PrEventFlags, print: (line: string) => void): Promise<void> {
  const payload = prEventPayload(o);
  const { PrEventSchema } = await import('../schemas/pr-event.js');
  const checked = PrEventSchema.safeParse(payload);
  if (!checked.success)
    throw new CliError(
      `pr-event: ${checked.error.issues.map((i) => `${i.path.join('.') || 'event'}: ${i.message}`).join('; ')}`,
      EXIT.usage,
    );
  const [{ withRunApi }] = await Promise.all([import('./open-run-api.js')]);
  await withRunApi(ep, async (api) => {
    await api.signal(runId, 'prEvent', checked.data);
  });
  print(`${runId}: ${checked.data.kind} event ${checked.data.id} sent; a resend with --id ${checked.data.id} is taken once`);
}

export function addPrCommands(program: Command, ctx: PrCommandsContext): void {
  program
    .command('pr-event')
    .description(
      'send an event of the pull request a run follows (knob followPr): red checks, a comment, the base moved, merged, closed; ' +
        "by hand or from any CI (GitHub's webhooks: vigil hooks)",
    )
    .argument('<id>', 'workflow id of the run', ctx.runIdArg)
    .option('--checks-failed <file>', 'the checks failed: a JSON array of {"name","logTail"}, or one check\'s log (its tail is kept)')
    .option('--check <name>', "the check's name, with --checks-failed and a log file (default: the file's name)")
    .option('--comment <text>', 'a comment addressed to the run (the agent reads it verbatim, as a person’s directive)')
    .option('--author <name>', 'who wrote the comment')
    .option('--review', 'the comment is a review that requested changes')
    .option('--base-moved', 'the base branch moved')
    .option('--merged', 'the pull request was merged: the run ends merged')
    .option('--merge-commit <sha>', 'with --merged: the merge commit')
    .option('--closed', 'the pull request was closed without merge: the run ends pr_closed')
    .option('--id <id>', "the event's id (a redelivered event is taken once; default: a new one)")
    .option('--by <name>', 'who sends it')
    .action(async (id: string, o: PrEventFlags) => {
      const { out } = await import('./steer-commands.js');
      await prEventCommand(ctx.endpoint(), id, o, out);
    });

  program
    .command('hooks')
    .description(
      "receive GitHub's webhooks for the pull requests runs follow (VIGIL_HOOKS_SECRET: the webhook's secret; a wrong " +
        'signature is refused with 401): red checks, changes requested, /vigil comments, merged, closed',
    )
    .option('--host <host>', 'address to listen on', '127.0.0.1')
    .option('--port <port>', 'port to listen on, 0 for any free one', (raw: string) => Number(raw), 8239)
    .action(async (o: { host: string; port: number }) => {
      if (!Number.isInteger(o.port) || o.port < 0 || o.port > 65_535)
        throw new CliError(`--port must be an integer from 0 to 65535, got ${o.port}`, EXIT.usage);
      const [{ out }, { hooksCommand }] = await Promise.all([import('./steer-commands.js'), import('./hooks-command.js')]);
      await hooksCommand(ctx.endpoint(), o, out);
    });
}
