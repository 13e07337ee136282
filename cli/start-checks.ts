/**
 * Owns what a start says before a run begins, for both starts (`vigil start`, cli/start-command.ts,
 * and the MCP server's `vigil_start`, cli/mcp-start.ts), so the two cannot drift apart: the
 * refusals of a start that would silently do something else than it was asked (exit 2), and the
 * warnings of knobs that cannot do what they seem to. `vigil doctor` says the notification one
 * too (cli/doctor-setup.ts).
 *
 * - `--tasks FILE` splits a run into parallel streams, which only exist with parallelStreams
 *   above 1 (workflows/run/streams.ts); with 1 the run would ignore the file, so it is refused.
 * - `--acceptance-from-prd` with `--acceptance DIR`: one of the two sets of tests would be dropped.
 * - No notification channel: an escalation, a pause for a person or a budget stop reaches nobody
 *   until someone looks at `vigil status`.
 * - A budget with a `command` agent: such an agent reports no cost unless it writes
 *   `.vigil/signals/USAGE`, so its calls are unpriced and the budget may never be reached.
 * - The PRD or an issue (`--issue`, `issue`): one of the two, the issue never beside a checklist
 *   (its task list is the checklist) nor for another host (it is read here).
 */
import { accessSync, constants, statSync } from 'node:fs';
import path from 'node:path';
import type { Knobs } from '../schemas/knobs.js';
import type { TaskList } from '../schemas/tasks.js';
import { CliError, EXIT } from './errors.js';

/** Where notify-send is on `env.PATH` (its absolute folders), or null: the desktop channel's one requirement. */
export function notifySendHere(env: NodeJS.ProcessEnv = process.env): string | null {
  for (const dir of (env.PATH ?? '').split(path.delimiter)) {
    if (!dir || !path.isAbsolute(dir)) continue;
    const file = path.join(dir, 'notify-send');
    try {
      accessSync(file, constants.X_OK);
      if (statSync(file).isFile()) return file;
    } catch {
      /* not here */
    }
  }
  return null;
}

/**
 * `--acceptance-from-prd` with `--acceptance DIR` (knobs acceptanceFromPrd and acceptanceTests):
 * refused, since one of the two sets of acceptance tests would be silently dropped.
 */
export function checkAcceptanceSource(knobs: Pick<Knobs, 'acceptanceFromPrd' | 'acceptanceTests'>): void {
  if (!knobs.acceptanceFromPrd || knobs.acceptanceTests.trim() === '') return;
  throw new CliError(
    `--acceptance-from-prd and --acceptance ${knobs.acceptanceTests}: a run has one set of acceptance tests, either a person's folder ` +
      `or the ones an acceptance agent writes from the PRD. Leave out --acceptance to have them written, or --acceptance-from-prd ` +
      `(and acceptanceFromPrd in the config or VIGIL_ACCEPTANCE_FROM_PRD) to use your folder`,
    EXIT.usage,
  );
}

/** `--tasks FILE` without streams: refused, saying how to have them (the file would be ignored). */
export function checkTasks(knobs: Pick<Knobs, 'parallelStreams'>, tasks: TaskList | undefined, file = 'FILE'): void {
  if (!tasks?.length || knobs.parallelStreams > 1) return;
  throw new CliError(
    `--tasks ${file}: a task list splits the run into parallel streams, and parallelStreams is ${knobs.parallelStreams}, ` +
      `so the run would ignore it. Add --set parallelStreams=N (2 to 8: how many tasks run at once), or leave --tasks out ` +
      `to run the PRD as one run`,
    EXIT.usage,
  );
}

export type NotifyKnobs = Pick<
  Knobs,
  'notifyWebhookUrl' | 'notifySlackWebhookUrl' | 'notifyDiscordWebhookUrl' | 'notifyFile' | 'notifyDesktop'
>;

/** The notification channels a run with these knobs has here (desktop: only where notify-send is on PATH). */
export function notifyChannels(knobs: NotifyKnobs, notifySend: string | null): string[] {
  const set = (v: string): boolean => v.trim() !== '';
  return [
    ...(set(knobs.notifyWebhookUrl) ? ['webhook'] : []),
    ...(set(knobs.notifySlackWebhookUrl) ? ['slack'] : []),
    ...(set(knobs.notifyDiscordWebhookUrl) ? ['discord'] : []),
    ...(set(knobs.notifyFile) ? [`file ${knobs.notifyFile}`] : []),
    ...(knobs.notifyDesktop && notifySend !== null ? [`desktop (${notifySend})`] : []),
  ];
}

/** How to configure a channel, said once wherever the lack of one is. */
export const NOTIFY_HOW =
  'set one: --set notifyFile=PATH (a JSON line per notification), VIGIL_NOTIFY_SLACK_WEBHOOK_URL, VIGIL_NOTIFY_DISCORD_WEBHOOK_URL ' +
  'or VIGIL_NOTIFY_WEBHOOK_URL (or the knobs in vigil.config.json), or install notify-send for desktop notifications ' +
  '(docs/how-a-run-works.md#telling-a-person)';

/** Why nothing would reach a person (null: some channel is set). */
export function noChannelWarning(knobs: NotifyKnobs, notifySend: string | null): string | null {
  if (notifyChannels(knobs, notifySend).length > 0) return null;
  const desktop = knobs.notifyDesktop ? 'notify-send is not installed here' : 'notifyDesktop is off';
  return (
    `no notification channel is configured (${desktop}, and no webhook or file is set): an escalation, a pause ` +
    `for a person or a budget stop reaches nobody until someone runs \`vigil status\`; ${NOTIFY_HOW}`
  );
}

/** The providers whose calls may be priced in a run with these knobs (every role's). */
function rolesProviders(k: Knobs): string[] {
  const council = k.councilProvider || k.provider;
  return [...new Set([k.provider, council, k.devilsAdvocateProvider || council, k.reviewProvider || council])];
}

/** A budget a `command` builder's calls may never count toward (null: none, or the builder reports cost). */
export function budgetWarning(k: Knobs): string | null {
  if (k.budgetUsd <= 0 || k.provider !== 'command') return null;
  const priced = rolesProviders(k).filter((p) => p !== 'command');
  const counts =
    priced.length === 0
      ? 'may never be reached: no role of this run uses a provider that reports its cost'
      : `counts only the calls of ${priced.join(', ')}`;
  return (
    `budgetUsd=${k.budgetUsd}: a \`command\` agent reports no cost unless it writes .vigil/signals/USAGE (JSON with costUsd, ` +
    `or inputTokens, outputTokens and model), so its calls are unpriced (\`vigil status\` counts them) and the budget ${counts}. ` +
    `Have the command write USAGE (docs/how-a-run-works.md#budget), or bound the run by maxIterations (now ${k.maxIterations})`
  );
}

/** Every warning of a start with these knobs, each once. */
export function startWarnings(k: Knobs, notifySend: string | null): string[] {
  return [noChannelWarning(k, notifySend), budgetWarning(k)].filter((w): w is string => w !== null);
}

/** How a start surface names its PRD, issue and checklist inputs in what it says. */
export interface SourceNames {
  prd: string;
  issue: string;
  checklist: string;
  /** How to start the issue as a PRD with its checklist beside it, and a PRD on another host. */
  asPrd: (issue: string, checklist: string) => string;
  onHost: string;
  /** What to say when neither is given. */
  missing: string;
  /** The goal's input (a run without a PRD), an example of it, and how to start from a file instead. */
  goal: string;
  goalExample: string;
  asFile: string;
}

export const CLI_NAMES: SourceNames = {
  prd: 'the PRD',
  issue: '--issue',
  checklist: '--checklist',
  asPrd: (issue, checklist) => `vigil start ${issue} --checklist ${checklist}`,
  onHost: 'vigil start FILE --host ...',
  missing: 'missing the PRD: vigil start <prd> [options], vigil start --issue FILE, or vigil start --goal "what to build"',
  goal: '--goal',
  goalExample: 'vigil start --goal "add a CSV export to the weekly report"',
  asFile: 'vigil start FILE',
};

export const MCP_NAMES: SourceNames = {
  prd: '`prd`',
  issue: '`issue`',
  checklist: '`checklist`',
  asPrd: (issue, checklist) => `vigil_start with prd: ${issue}, checklist: ${checklist}`,
  onHost: 'vigil_start with prd and host',
  missing: 'missing the PRD: give `prd` (a PRD file), `issue` (an issue file) or `goal` (what to build, as text)',
  goal: '`goal`',
  goalExample: 'vigil_start with goal: "add a CSV export to the weekly report"',
  asFile: 'vigil_start with prd: FILE',
};

/** The longest goal `vigil start --goal` takes (the run input's bound). */
export const MAX_GOAL_CHARS = 4000;

/**
 * `vigil start --goal "…"`: the goal, checked (null: no goal). A run from a goal has no PRD yet (a
 * discovery call writes it as the run starts), so it is given alone — no PRD, no issue — and as one
 * run on this machine: not beside --tasks or --attempts, which split a PRD a person wrote, nor for
 * another host.
 */
export function goalSource(
  goal: unknown,
  o: { prdFile: string | undefined; issueFile: string | undefined; tasks: boolean; attempts: boolean; remote: boolean },
  names: SourceNames = CLI_NAMES,
): string | null {
  if (goal === undefined) return null;
  const text = typeof goal === 'string' ? goal.trim() : '';
  const usage = (why: string): CliError => new CliError(why, EXIT.usage);
  const g = names.goal;
  if (text === '') throw usage(`${g} needs the goal as text: ${names.goalExample}`);
  if (text.length > MAX_GOAL_CHARS)
    throw usage(
      `the goal is ${text.length} characters (at most ${MAX_GOAL_CHARS}): write it into a file and start with it as the PRD (${names.asFile})`,
    );
  if (o.prdFile !== undefined || o.issueFile !== undefined)
    throw usage(
      `give ${g} or ${o.prdFile !== undefined ? `a PRD (${o.prdFile})` : `${names.issue} ${o.issueFile}`}, not both: with ${g} a discovery call writes the PRD`,
    );
  if (o.tasks) throw usage('--tasks splits a PRD you wrote; with --goal the PRD is written as the run starts: drop --tasks');
  if (o.attempts)
    throw usage(
      '--attempts runs one PRD several times; with --goal the PRD is written as the run starts: drop --attempts, or write the PRD first',
    );
  if (o.remote) throw usage(`${g} runs on this machine: start it on the run's host, or write the PRD there and start it: ${names.onHost}`);
  return text;
}

/**
 * Where the run's PRD comes from: the PRD file, or an issue (its task list the checklist). One
 * of the two, and an issue neither beside a checklist (it is the checklist) nor on another host
 * (its task list is read here, and the worker there reads the PRD from its own disk).
 */
export function prdSource(
  prdFile: string | undefined,
  issueFile: string | undefined,
  checklist: string | undefined,
  remote: boolean,
  n: SourceNames,
): { kind: 'prd' | 'issue'; file: string } {
  if (prdFile !== undefined && issueFile !== undefined)
    throw new CliError(`give ${n.prd} (${prdFile}) or ${n.issue} ${issueFile}, not both: the issue is the PRD`, EXIT.usage);
  if (issueFile === undefined) {
    if (prdFile === undefined) throw new CliError(n.missing, EXIT.usage);
    return { kind: 'prd', file: prdFile };
  }
  if (checklist !== undefined)
    throw new CliError(
      `${n.issue} ${issueFile} takes the PRD checklist from the issue's task list: drop ${n.checklist}, or give the issue as ` +
        `the PRD (${n.asPrd(issueFile, checklist)})`,
      EXIT.usage,
    );
  if (remote)
    throw new CliError(
      `${n.issue} is read on this machine, and the run's host is another: copy the issue to that host and start it there as the PRD (${n.onHost})`,
      EXIT.usage,
    );
  return { kind: 'issue', file: issueFile };
}
