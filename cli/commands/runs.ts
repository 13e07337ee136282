/** Reading runs: `vigil checkpoints`, `list`, `watch`, `wait`, `logs` and `handoff`. */
import { Option, type Command } from 'commander';
import type { Client } from '@temporalio/client';
import type { AttemptsStatus } from '../../schemas/attempts.js';
import type { ListRow, WaitJson } from '../../schemas/cli-output.js';
import { runUrl, withClient } from '../connection.js';
import { EXIT } from '../errors.js';
import { intArg } from '../int-arg.js';
import { out } from '../steer-commands.js';
import { jsonLine, type CommandContext } from './shared.js';

/** `vigil checkpoints`, `list`, `watch`, `wait`, `logs`, `handoff`. */
export function registerRuns(program: Command, ctx: CommandContext): void {
  const { endpoint, runIdArg } = ctx;
  program
    .command('checkpoints')
    .description("list a run's checkpoints (iteration, time, commit, files changed, exit, tests, council verdict) and its rewinds")
    .argument('<id>', 'workflow id of the run', runIdArg)
    .option('--json', 'machine-readable output')
    .action(async (id: string, o: { json?: boolean }) => {
      const { checkpointsCommand } = await import('../checkpoints.js');
      await withClient(endpoint(), async (client) => checkpointsCommand(client, endpoint(), id, Boolean(o.json), out));
    });

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
        import('../../schemas/search-attributes.js'),
        import('../runs.js'),
      ]);
      const query = listQuery({
        ...(o.status !== undefined ? { status: o.status } : {}),
        ...(o.repo !== undefined ? { repo: o.repo } : {}),
      });
      await withClient(endpoint(), async (client) => {
        const rows: ListRow[] = [];
        for await (const wf of client.workflow.list({ query })) {
          const sa = wf.typedSearchAttributes;
          const attempts = wf.type === 'vigilAttempts' ? await attemptsRow(client, wf.workflowId) : null;
          rows.push({
            workflowId: wf.workflowId,
            runId: wf.runId,
            temporalStatus: wf.status.name,
            status: sa.get(SA_STATUS) ?? null,
            iteration: sa.get(SA_ITERATION) ?? null,
            repo: sa.get(SA_REPO) ?? null,
            startTime: wf.startTime.toISOString(),
            closeTime: wf.closeTime?.toISOString() ?? null,
            ...(wf.type === 'vigilAttempts' ? { attempts } : {}),
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
          for (const r of rows) out(row(r.workflowId, listStatus(r), String(r.iteration ?? '-'), r.startTime, r.repo ?? ''));
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
        import('../follow.js'),
        import('../ctrl-c.js'),
        import('../sdk-run-api.js'),
      ]);
      await withClient(ep, async (client) => {
        // A run with attempts is followed by its attempts' status (cli/attempts.ts), as `vigil start --attempts --wait` does.
        const type = await client.workflow
          .getHandle(id)
          .describe()
          .then((d) => d.type)
          .catch(() => null);
        if (type === 'vigilAttempts') {
          const { followAttempts } = await import('../attempts.js');
          out(`watching ${id} (a run with attempts) — ${runUrl(ep, id)}`);
          process.exitCode = await followAttempts(client, id, { json: Boolean(o.json), print: out });
          return;
        }
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
      const { followRun } = await import('../follow.js');
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
      "show an iteration's agent log, from any machine (read on the run's host by its worker, no workflow per read); -f " +
        'follows the run from iteration to iteration until it finishes',
    )
    .argument('<id>', 'workflow id of the run', runIdArg)
    .option('--iteration <n>', 'which iteration (default: the current or last one)', intArg('--iteration', 1, 1_000_000))
    .option('-f, --follow', 'keep printing what the agent writes until its call ends (Ctrl+C stops, exit 0)')
    .option('--timeout <seconds>', "how long the run's host has to answer a read (exit 4 past it)", intArg('--timeout', 1, 300), 15)
    .option('--json', 'JSON lines: the iteration read, its text as chunks, notes, and (with -f) the end of the run')
    .action(async (id: string, o: { iteration?: number; follow?: boolean; timeout: number; json?: boolean }) => {
      const { logsCommand } = await import('../logs.js');
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
      const { handoffCommand } = await import('../handoff.js');
      await withClient(endpoint(), async (client) => {
        process.exitCode = await handoffCommand(client, id, {
          json: Boolean(o.json),
          answerSeconds: o.timeout,
          write: (text) => new Promise<void>((resolve) => process.stdout.write(text, () => resolve())),
        });
      });
    });
}

/** The STATUS column of `vigil list`: a run's VigilStatus; a run with attempts, its phase (and a pick it waits for). */
function listStatus(r: ListRow): string {
  if (r.attempts) {
    const phase = r.attempts.waitingForPick ? 'pick an attempt' : r.attempts.phase;
    return `attempts×${r.attempts.k}: ${phase}${r.attempts.winner ? ` (#${r.attempts.winner})` : ''}`;
  }
  return r.status ?? r.temporalStatus.toLowerCase();
}

/** A run with attempts as `vigil list` shows it, from its `attempts` query (null: no worker answered in time). */
async function attemptsRow(client: Client, workflowId: string): Promise<NonNullable<ListRow['attempts']>> {
  const s = await Promise.race([
    client.workflow
      .getHandle(workflowId)
      .query<AttemptsStatus>('attempts')
      .catch(() => null),
    new Promise<null>((ok) => setTimeout(() => ok(null), 5000).unref()),
  ]);
  if (!s) return { phase: 'unknown (no worker answered)', k: 0, winner: null, waitingForPick: false };
  return { phase: s.phase, k: s.attempts.length, winner: s.winner, waitingForPick: s.phase === 'waiting_for_pick' };
}
