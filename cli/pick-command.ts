/**
 * `vigil pick <run> <attempt>`: a person's pick of the winner of a run with attempts, where the
 * run is supervised and its council split between approved attempts (docs/attempts.md). Sent as the
 * run's `pick` update (workflows/attempts-messages.ts), whose validator refuses what is not a pick
 * the run waits for; every refusal is a usage error (exit 2) with the reason. The commander lines
 * here, the client loaded by the action.
 */
import type { Command } from 'commander';
import type { Endpoint } from './connection.js';
import { CliError, EXIT } from './errors.js';

export interface PickCommandContext {
  /** The run-id argument's parser (an empty id is a usage error). */
  runIdArg: (raw: string) => string;
  /** The Temporal endpoint, resolved after parsing. */
  endpoint: () => Endpoint;
}

/** The attempt's number as typed: a whole number from 1 (checked against the run by the run itself). */
export function attemptArg(raw: string): number {
  const n = Number(raw);
  if (!/^[0-9]+$/.test(raw.trim()) || !Number.isInteger(n) || n < 1)
    throw new CliError(
      `pick: the attempt is a whole number from 1 (vigil status <run> lists them), not ${JSON.stringify(raw)}`,
      EXIT.usage,
    );
  return n;
}

/** What the run is, as Temporal describes it (null: no such run), for a refused pick. */
export interface PickTarget {
  type: string;
  running: boolean;
}

/** Why the pick was refused, as a CLI error: no such run (exit 3), a run that ended or has no attempts, or the run's own reason (exit 2). */
export function pickFailure(runId: string, target: PickTarget | null, err: unknown): CliError {
  if (!target) return new CliError(`no run ${runId}: \`vigil list\` shows the runs`, EXIT.noSuchRun);
  if (target.type !== 'vigilAttempts') return new CliError(`run ${runId} is not a run with attempts: nothing to pick`, EXIT.usage);
  if (!target.running) return new CliError(`run ${runId} has ended: it is not waiting for a pick`, EXIT.usage);
  const e = err as { message?: string; cause?: { message?: string } } | null;
  return new CliError(`pick refused: ${e?.cause?.message ?? e?.message ?? String(err)}`, EXIT.usage);
}

export async function pickCommand(
  ep: Endpoint,
  runId: string,
  rawAttempt: string,
  by: string,
  print: (line: string) => void,
): Promise<void> {
  const attempt = attemptArg(rawAttempt);
  const { withClient } = await import('./connection.js');
  await withClient(ep, async (client) => {
    const handle = client.workflow.getHandle(runId);
    let said: string;
    try {
      said = await handle.executeUpdate<string, [{ attempt: number; by: string }]>('pick', { args: [{ attempt, by }] });
    } catch (err) {
      const d = await handle.describe().catch(() => null);
      throw pickFailure(runId, d ? { type: d.type, running: d.status.name === 'RUNNING' } : null, err);
    }
    print(said);
  });
}

export function addPickCommand(program: Command, ctx: PickCommandContext): void {
  program
    .command('pick')
    .description('pick the winner of a supervised run with attempts whose council split (vigil status <run> says when it waits)')
    .argument('<id>', 'workflow id of the run with attempts', ctx.runIdArg)
    .argument('<attempt>', 'the approved attempt to deliver (its number, 1..K)')
    .option('--by <name>', 'who picks (default: this user)')
    .action(async (id: string, attempt: string, o: { by?: string }) => {
      const { out, defaultActor } = await import('./steer-commands.js');
      await pickCommand(ctx.endpoint(), id, attempt, o.by ?? defaultActor(), out);
    });
}
