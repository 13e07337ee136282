/**
 * `vigil schedule`: runs started by a Temporal Schedule (cron), e.g. every night on the same PRD.
 * A schedule named NAME (its Temporal schedule id) starts `vigilRun` with what `vigil start` would
 * build (knobs resolved and validated now, the repository checked, the PRD checked and passed by
 * path: the agent reads the file as it is when each run starts, so a PRD edited during the day is
 * what the night's run works on). Temporal names each run `NAME-<scheduled time>` (e.g.
 * `nightly-2026-11-23T02:00:00Z`). The overlap policy is SKIP unless chosen: a run still going is
 * not doubled, and `trigger` honours the policy too.
 */
import { knobsGivenOf } from '../rules/complexity.js';
import { Option, type Command } from 'commander';
import type { Client, ScheduleDescription, ScheduleHandle, ScheduleOverlapPolicy } from '@temporalio/client';
import { PROVIDERS } from '../schemas/provider-names.js';
import type { ResolvedKnobs } from './config.js';
import type { Endpoint } from './connection.js';
import { CliError, EXIT } from './errors.js';
import { defaultActor } from './steer-commands.js';
import type { ScheduleDeleteJson, ScheduleJson, ScheduleRow, ScheduleStateJson, ScheduleTriggerJson } from '../schemas/cli-output.js';

/**
 * What the actions need, loaded when one runs: defining the commands stays light, so the CLI's
 * start-up cost is not paid for the client, the schemas and the workflow's UI helpers (see cli/main.ts).
 */
async function load() {
  const [client, searchAttributes, ui, config, connection, prd, runs] = await Promise.all([
    import('@temporalio/client'),
    import('../schemas/search-attributes.js'),
    import('../rules/ui.js'),
    import('./config.js'),
    import('./connection.js'),
    import('./prd.js'),
    import('./runs.js'),
  ]);
  return { ...client, ...searchAttributes, ...ui, ...config, ...connection, ...prd, ...runs };
}

const OVERLAPS = ['skip', 'buffer-one', 'buffer-all', 'cancel-other', 'terminate-other', 'allow-all'] as const;
type Overlap = (typeof OVERLAPS)[number];
const toPolicy = (o: Overlap): ScheduleOverlapPolicy => o.toUpperCase().replace(/-/g, '_') as ScheduleOverlapPolicy;
const fromPolicy = (p: string): string => p.toLowerCase().replace(/_/g, '-');

/** What Vigil keeps in a schedule's memo, to show it back (the server keeps the cron only as calendars). */
interface ScheduleMemo {
  vigilCron: string;
  vigilPrd: string;
  vigilRepo: string;
}

export interface ScheduleDeps {
  endpoint: () => Endpoint;
  /** Resolves the knobs from the start flags (`--provider`, `--agent-command`, `--config`, `--set`). */
  resolve: (opts: Record<string, unknown>) => Promise<ResolvedKnobs>;
  out: (line?: string) => void;
}

export function validateScheduleName(name: string): string {
  if (!/^[A-Za-z0-9][A-Za-z0-9._-]{0,99}$/.test(name)) {
    throw new CliError(
      `schedule name "${name}" is not allowed: use 1-100 letters, digits, '.', '_' or '-', starting with a letter or digit`,
      EXIT.usage,
    );
  }
  return name;
}

/**
 * A first check of a cron expression before the server sees it: 5 fields (minute hour
 * day-of-month month day-of-week; Temporal also takes 6 or 7 with seconds and years), or a macro
 * such as `@daily` / `@every 12h`. The server checks the values.
 */
export function checkCron(expr: string): string {
  const e = expr.trim().replace(/\s+/g, ' ');
  const macro = /^@(yearly|annually|monthly|weekly|daily|midnight|hourly|every \S+)$/.test(e);
  const fields = e.split(' ');
  const fieldOk = fields.length >= 5 && fields.length <= 7 && fields.every((f) => /^[0-9A-Za-z*?/,#LW-]+$/.test(f));
  if (!macro && !fieldOk) {
    throw new CliError(
      `--cron "${expr}" is not a cron expression: give 5 fields, minute hour day-of-month month day-of-week (e.g. "0 2 * * *" ` +
        `for 02:00 every day, "30 6 * * 1-5" for 06:30 on weekdays), or @daily, @hourly, @every 6h`,
      EXIT.usage,
    );
  }
  return e;
}

function isScheduleNotFound(err: unknown): boolean {
  return err instanceof Error && (err.name === 'ScheduleNotFoundError' || /not found/i.test(err.message));
}

async function describeOrFail(client: Client, name: string): Promise<{ handle: ScheduleHandle; desc: ScheduleDescription }> {
  const handle = client.schedule.getHandle(name);
  try {
    const desc = await handle.describe();
    if (desc.action.workflowType !== 'vigilRun')
      throw new CliError(`schedule "${name}" is not a Vigil schedule (it starts ${desc.action.workflowType})`, EXIT.usage);
    return { handle, desc };
  } catch (err) {
    if (isScheduleNotFound(err)) throw new CliError(`no such schedule: "${name}" (list them with \`vigil schedule list\`)`, EXIT.noSuchRun);
    throw err;
  }
}

const memoOf = (desc: { memo?: Record<string, unknown> | undefined }): Partial<ScheduleMemo> => (desc.memo ?? {}) as Partial<ScheduleMemo>;

const workflowIdsOf = (actions: readonly { action: { workflow: { workflowId: string } } }[]): string[] =>
  actions.map((a) => a.action.workflow.workflowId);

/** One schedule as `describe --json` prints it. */
function describeJson(name: string, desc: ScheduleDescription): ScheduleJson {
  const memo = memoOf(desc);
  return {
    name,
    cron: memo.vigilCron ?? null,
    timezone: desc.spec.timezone ?? 'UTC',
    prd: memo.vigilPrd ?? null,
    repo: memo.vigilRepo ?? null,
    workflowIdPrefix: desc.action.workflowId,
    overlap: fromPolicy(desc.policies.overlap ?? 'SKIP'),
    paused: desc.state.paused,
    note: desc.state.note ?? null,
    nextRuns: desc.info.nextActionTimes.slice(0, 5).map((d) => d.toISOString()),
    running: workflowIdsOf(desc.info.runningActions.map((a) => ({ action: a }))),
    recent: desc.info.recentActions.map((a) => ({
      scheduledAt: a.scheduledAt.toISOString(),
      takenAt: a.takenAt.toISOString(),
      workflowId: a.action.workflow.workflowId,
    })),
    runs: desc.info.numActionsTaken,
    skippedOverlap: desc.info.numActionsSkippedOverlap,
  };
}

/** Adds `vigil schedule ...` to the program (its subcommands inherit the program's error handling). */
export function addScheduleCommand(program: Command, deps: ScheduleDeps): Command {
  const { endpoint, out } = deps;
  const cmd = program
    .command('schedule')
    .description('runs on a schedule (Temporal Schedules): create, list, describe, pause, unpause, trigger, delete');

  cmd
    .command('create')
    .description('create a schedule that starts a run at every cron time (overlap policy skip: a run still going is not doubled)')
    .argument('<name>', 'the schedule name (its Temporal schedule id); each run is NAME-<scheduled time>')
    .requiredOption('--cron <expr>', 'when: a cron expression, e.g. "0 2 * * *" (02:00 every day)')
    .requiredOption('--prd <file>', 'the PRD file; each run reads it as it is then')
    .option('--timezone <tz>', 'time zone of the cron expression (IANA name, e.g. Europe/Paris)', 'UTC')
    .addOption(new Option('--overlap <policy>', 'when a run is still going at the next time').choices([...OVERLAPS]).default('skip'))
    .option('--repo <dir>', 'git repository the agent works in', '.')
    .addOption(new Option('--provider <name>', 'agent CLI (see docs/agents-and-providers.md)').choices([...PROVIDERS]))
    .option('--agent-command <cmd>', 'the agent command line (no shell; the prompt arrives on stdin)')
    .option('--config <file>', 'JSON config file of knobs (default: ./vigil.config.json if present)')
    .option(
      '--set <key=value>',
      'set a knob (repeatable); see `vigil config --explain`',
      (v: string, p: string[]) => [...p, v],
      [] as string[],
    )
    .option('--checklist <file>', 'the PRD checklist to verify (JSON or Markdown), read now')
    .option('--note <text>', 'a note kept with the schedule (shown by describe)')
    .option('--json', 'the schedule created, as `schedule describe --json` prints it')
    .action(async (name: string, o: Record<string, unknown>) => {
      const {
        readPrd,
        checkRepo,
        checkPromptTemplate,
        requireAgentCommand,
        readChecklist,
        withClient,
        runInputFor,
        missingSearchAttributes,
        staticSummary,
        staticDetails,
        startSearchAttributes,
        searchAttributeHint,
      } = await load();
      validateScheduleName(name);
      const cron = checkCron(String(o.cron));
      const prd = readPrd(String(o.prd));
      const repoPath = checkRepo(String(o.repo));
      const resolved = checkPromptTemplate(await deps.resolve(o), process.cwd());
      requireAgentCommand(resolved);
      const checklist = typeof o.checklist === 'string' ? readChecklist(o.checklist) : undefined;
      const overlap = o.overlap as Overlap;
      const ep = endpoint();
      await withClient(ep, async (client, connection) => {
        const input = runInputFor(
          {
            prd,
            repoPath,
            knobs: resolved.knobs,
            knobsGiven: knobsGivenOf(resolved),
            workflowId: name,
            ...(checklist ? { checklist } : {}),
          },
          true,
        );
        const missing = await missingSearchAttributes(connection, ep.namespace);
        // Each run of the schedule is stamped with this release: the one that made the schedule (recreate it after an upgrade).
        const attributes = startSearchAttributes(input, missing ?? []);
        if (!attributes.upserts) input.searchAttributes = false;
        const memo: ScheduleMemo = { vigilCron: cron, vigilPrd: prd.path, vigilRepo: repoPath };
        try {
          await client.schedule.create({
            scheduleId: name,
            spec: { cronExpressions: [cron], timezone: String(o.timezone) },
            action: {
              type: 'startWorkflow',
              workflowType: 'vigilRun',
              workflowId: name,
              taskQueue: ep.taskQueue,
              args: [input],
              staticSummary: staticSummary(input),
              staticDetails: staticDetails(input),
              ...(attributes.upserts ? { typedSearchAttributes: attributes.typed } : {}),
            },
            policies: { overlap: toPolicy(overlap) },
            memo: { ...memo },
            state: { note: typeof o.note === 'string' ? o.note : `created by vigil schedule create (${cron})` },
          });
        } catch (err) {
          if (err instanceof Error && err.name === 'ScheduleAlreadyRunning')
            throw new CliError(
              `a schedule named "${name}" exists already; delete it first (\`vigil schedule delete ${name}\`) or choose another name`,
              EXIT.usage,
            );
          const msg = err instanceof Error ? (err.cause instanceof Error ? err.cause.message : err.message) : String(err);
          // The client rethrows the server's INVALID_ARGUMENT (a bad cron field, time zone) as a TypeError.
          if (err instanceof TypeError || /invalid|cron|time ?zone|argument/i.test(msg))
            throw new CliError(`the server refused the schedule: ${msg.replace(/^\d+ [A-Z_]+: /, '')}`, EXIT.usage);
          throw err;
        }
        if (missing?.length) process.stderr.write(`${searchAttributeHint(missing, ep)}\n`);
        const { desc } = await describeOrFail(client, name);
        if (o.json) return out(JSON.stringify(describeJson(name, desc), null, 2));
        out(`created schedule ${name}: ${cron} (${String(o.timezone)}), overlap ${overlap}`);
        out(`  PRD        : ${prd.path} (read by each run when it starts)`);
        out(`  repository : ${repoPath}`);
        out(
          `  runs       : ${name}-<scheduled time>, e.g. ${name}-${(desc.info.nextActionTimes[0] ?? new Date()).toISOString().replace(/\.\d+Z$/, 'Z')}`,
        );
        out(
          `  next       : ${
            desc.info.nextActionTimes
              .slice(0, 3)
              .map((d) => d.toISOString())
              .join(', ') || '(none)'
          }`,
        );
        out(`  run one now: vigil schedule trigger ${name}`);
      });
    });

  cmd
    .command('list')
    .description("Vigil's schedules: name, cron, state, next run, last run")
    .option('--json', 'machine-readable output')
    .action(async (o: { json?: boolean }) => {
      const { withClient } = await load();
      await withClient(endpoint(), async (client) => {
        const rows: ScheduleRow[] = [];
        for await (const s of client.schedule.list()) {
          if (s.action?.workflowType !== 'vigilRun') continue;
          const memo = memoOf(s);
          rows.push({
            name: s.scheduleId,
            cron: memo.vigilCron ?? null,
            paused: s.state.paused,
            next: s.info.nextActionTimes[0]?.toISOString() ?? null,
            last: s.info.recentActions.at(-1)?.action.workflow.workflowId ?? null,
            repo: memo.vigilRepo ?? null,
          });
        }
        rows.sort((a, b) => a.name.localeCompare(b.name));
        if (o.json) out(JSON.stringify(rows, null, 2));
        else if (rows.length === 0)
          out('no schedules (create one with `vigil schedule create NAME --cron "0 2 * * *" --prd PRD.md --repo DIR`)');
        else
          for (const r of rows)
            out(
              `${String(r.name).padEnd(24)} ${String(r.cron ?? '?').padEnd(16)} ${(r.paused ? 'paused' : 'active').padEnd(7)} ` +
                `next ${String(r.next ?? '-').padEnd(24)} last ${String(r.last ?? '-')}  ${String(r.repo ?? '')}`,
            );
      });
    });

  cmd
    .command('describe')
    .description('one schedule: cron, overlap policy, state, next runs, recent and running runs')
    .argument('<name>')
    .option('--json', 'machine-readable output')
    .action(async (name: string, o: { json?: boolean }) => {
      const { withClient } = await load();
      await withClient(endpoint(), async (client) => {
        const { desc } = await describeOrFail(client, name);
        const j = describeJson(name, desc);
        if (o.json) {
          out(JSON.stringify(j, null, 2));
          return;
        }
        out(`schedule ${name}${desc.state.paused ? ' (paused)' : ''}`);
        out(`  cron       : ${j.cron ?? '?'} (${j.timezone}), overlap ${j.overlap}`);
        out(`  PRD        : ${j.prd ?? '?'}`);
        out(`  repository : ${j.repo ?? '?'}`);
        if (desc.state.note) out(`  note       : ${desc.state.note}`);
        out(`  next       : ${j.nextRuns.slice(0, 3).join(', ') || '(none)'}`);
        out(`  running    : ${j.running.join(', ') || '(none)'}`);
        out(`  runs       : ${j.runs} started, ${j.skippedOverlap} skipped because one was still going`);
        for (const r of j.recent.slice(-5)) out(`  recent     : ${r.workflowId}  (vigil status ${r.workflowId})`);
      });
    });

  const stateChange = (verb: 'pause' | 'unpause', aliases: string[] = []) => {
    const c = cmd
      .command(verb)
      .description(
        verb === 'pause' ? 'pause a schedule: no run starts until unpaused (a run already going goes on)' : 'unpause (resume) a schedule',
      )
      .argument('<name>')
      .option('--reason <text>', 'why (kept as the schedule note)')
      .option('--json', 'the state the schedule is in and whether it changed, as JSON')
      .action(async (name: string, o: { reason?: string; json?: boolean }) => {
        const { withClient } = await load();
        await withClient(endpoint(), async (client) => {
          const { handle, desc } = await describeOrFail(client, name);
          const say = (answer: ScheduleStateJson, text: string): void => out(o.json ? JSON.stringify(answer, null, 2) : text);
          const unchanged: ScheduleStateJson = { name, paused: desc.state.paused, changed: false, note: desc.state.note ?? null };
          if (verb === 'pause' && desc.state.paused) return say(unchanged, `schedule ${name} is already paused`);
          if (verb === 'unpause' && !desc.state.paused) return say(unchanged, `schedule ${name} is not paused`);
          const note = o.reason ?? `${verb}d by ${defaultActor()} with vigil schedule ${verb}`;
          if (verb === 'pause') await handle.pause(note);
          else await handle.unpause(note);
          say({ name, paused: verb === 'pause', changed: true, note }, `schedule ${name} ${verb}d`);
        });
      });
    for (const a of aliases) c.alias(a);
  };
  stateChange('pause');
  stateChange('unpause', ['resume']);

  cmd
    .command('trigger')
    .description("start a run now, under the schedule's overlap policy (skip: nothing starts while one is still going)")
    .argument('<name>')
    .option('--json', 'what came of it (started and its run, skipped and the runs still going, or not started yet), as JSON')
    .action(async (name: string, o: { json?: boolean }) => {
      const { withClient } = await load();
      await withClient(endpoint(), async (client) => {
        const say = (answer: ScheduleTriggerJson, ...text: string[]): void => {
          if (o.json) out(JSON.stringify(answer, null, 2));
          else for (const t of text) out(t);
        };
        const { handle, desc } = await describeOrFail(client, name);
        const before = { taken: desc.info.numActionsTaken, skipped: desc.info.numActionsSkippedOverlap };
        await handle.trigger(desc.policies.overlap ?? ('SKIP' as ScheduleOverlapPolicy));
        // The server takes the action asynchronously: wait (briefly) to say what happened.
        const deadline = Date.now() + 15_000;
        for (;;) {
          const d = await handle.describe();
          if (d.info.numActionsTaken > before.taken) {
            const id = d.info.recentActions.at(-1)?.action.workflow.workflowId ?? null;
            say(
              { name, result: 'started', workflowId: id, running: workflowIdsOf(d.info.runningActions.map((a) => ({ action: a }))) },
              `started run ${id ?? '?'}`,
              `  follow     : vigil watch ${id ?? '?'}`,
            );
            return;
          }
          if (d.info.numActionsSkippedOverlap > before.skipped) {
            const running = workflowIdsOf(d.info.runningActions.map((a) => ({ action: a })));
            say(
              { name, result: 'skipped', workflowId: null, running },
              `skipped: ${running.length ? `${running.join(', ')} is still going` : 'a run of this schedule is still going'} (` +
                `overlap policy ${fromPolicy(d.policies.overlap ?? 'SKIP')})`,
            );
            return;
          }
          if (Date.now() > deadline) {
            say(
              { name, result: 'pending', workflowId: null, running: workflowIdsOf(d.info.runningActions.map((a) => ({ action: a }))) },
              `triggered schedule ${name}; the server has not started the run yet (see \`vigil schedule describe ${name}\`)`,
            );
            return;
          }
          await new Promise((r) => setTimeout(r, 250));
        }
      });
    });

  cmd
    .command('delete')
    .description('delete a schedule (runs it started go on)')
    .argument('<name>')
    .option('--json', 'the schedule deleted and the runs it started that go on, as JSON')
    .action(async (name: string, o: { json?: boolean }) => {
      const { withClient } = await load();
      await withClient(endpoint(), async (client) => {
        const { handle, desc } = await describeOrFail(client, name);
        await handle.delete();
        const running = workflowIdsOf(desc.info.runningActions.map((a) => ({ action: a })));
        const answer: ScheduleDeleteJson = { name, deleted: true, running };
        if (o.json) return out(JSON.stringify(answer, null, 2));
        out(`deleted schedule ${name}${running.length ? `; ${running.join(', ')} goes on (vigil stop ${running[0]} to end it)` : ''}`);
      });
    });

  return cmd;
}
