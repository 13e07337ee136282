/**
 * The messages a run takes, once: one row per message with its CLI verb, arguments, options,
 * summary, MCP tool, console actions and the summary the journal keeps of it. Everything that
 * speaks a message reads it from here: commander's registration (cli/commands/messages.ts), the
 * bin entry's quick grammar (cli/fast.ts), the MCP tools (cli/mcp.ts, inputs from schemas/mcp.ts),
 * the console's actions (cli/console/actions.ts), the message kinds the CLI sends (cli/steer.ts),
 * the `message` enum of `--json` (schemas/cli-output.ts), the journal (rules/journal.ts),
 * the console's timeline (cli/console/sources.ts) and docs/messages.md (`npm run docs:messages`).
 * The payload schema of each row (zod) is schemas/messages.ts MESSAGE_SCHEMAS, keyed by these names
 * (its type requires one per row); the builder of each payload from a verb's input is
 * cli/steer-commands.ts PAYLOADS (likewise).
 *
 * A new message is a row here, its schema, its payload builder and its handler in the workflow
 * (workflows/run/handlers.ts); tests/unit/message-verbs.test.ts checks it reaches the CLI, MCP
 * and the console.
 *
 * Light on purpose: no imports, so `vigil pause` (the quick path, cli/fast.ts) and the workflow
 * bundle read it without loading zod or commander.
 */

/** A positional argument after the run id. `key`: the payload field, MCP field and console form field it feeds. */
export interface VerbArgument {
  readonly name: string;
  readonly key: string;
  readonly help: string;
  /** Optional on the command line (another option can give it: input's --file); required for MCP. */
  readonly optional?: true;
  /** Its description as an MCP field, where the CLI's help speaks of CLI options. */
  readonly mcpHelp?: string;
}

/** An option, as commander declares it (`--reason <text>`); a flag when it takes no value. */
export interface VerbOption {
  readonly flags: string;
  readonly help: string;
  readonly required?: true;
  /** How the value is read: dollars (`12.50`) or an integer within bounds; default text. */
  readonly parse?: { readonly dollars: true } | { readonly int: readonly [number, number] };
  /** Not an MCP field (a file, the CLI's own output format, the directive id the CLI makes). */
  readonly cliOnly?: true;
}

export interface MessageVerb {
  /** The CLI verb (`vigil review` sends `forceReview`). */
  readonly cli: string;
  /** One line: the verb's help. */
  readonly summary: string;
  readonly args: readonly VerbArgument[];
  readonly options: readonly VerbOption[];
  /**
   * `send`: the payload is built and sent as the update (or signal) as it is, through one code
   * path (cli/steer.ts sendMessage). `own`: the verb has a handler of its own around the message
   * (`vigil rewind` checks checkpoints and can fork a run instead).
   */
  readonly handler: 'send' | 'own';
  /** The bin entry reads this verb without commander when its command line is plainly well formed. */
  readonly quick?: true;
  readonly mcp: { readonly tool: string; readonly title: string; readonly description: string; readonly destructive?: true };
  /** The console's actions that send it; `<action>-resume` sends a resume after it. */
  readonly console: readonly string[];
  /** What it does to the run (docs/messages.md). */
  readonly effect: string;
  /** The journal's one-line summary of an accepted message with this payload (never a directive's text). */
  readonly journal: (payload: Record<string, unknown>) => string;
}

const str = (p: Record<string, unknown>, k: string): string => (typeof p[k] === 'string' ? (p[k] as string) : '');
const because = (p: Record<string, unknown>): string => (str(p, 'reason') ? `: ${str(p, 'reason')}` : '');

const MESSAGE_JSON = 'print the acknowledgement (or, with --signal, that the signal was recorded) as JSON';
const SIGNAL_AGAIN = 'send as a signal (see pause --signal)';
const by = (who: string): VerbOption => ({ flags: '--by <name>', help: `who is ${who} (default: your OS user name)` });
const signal: VerbOption = { flags: '--signal', help: SIGNAL_AGAIN };
const json: VerbOption = { flags: '--json', help: MESSAGE_JSON, cliOnly: true };

export const MESSAGE_VERBS = {
  pause: {
    cli: 'pause',
    summary: 'pause a run at the next iteration boundary (the running agent call finishes first)',
    args: [],
    options: [
      { flags: '--reason <text>', help: 'why (shown in status and the UI)' },
      by('pausing'),
      { flags: '--signal', help: 'send as a signal: recorded even when no worker is running, but not acknowledged' },
      json,
    ],
    handler: 'send',
    quick: true,
    mcp: { tool: 'vigil_pause', title: 'Pause a run', description: 'Pause a run at the next iteration boundary (`vigil pause`).' },
    console: ['pause'],
    effect: "no new iteration starts until resumed; a running agent call finishes first. A person's pause always pauses.",
    journal: (p) => str(p, 'reason'),
  },
  resume: {
    cli: 'resume',
    summary: 'resume a paused run',
    args: [],
    options: [by('resuming'), signal, json],
    handler: 'send',
    quick: true,
    mcp: { tool: 'vigil_resume', title: 'Resume a run', description: 'Resume a paused run (`vigil resume`).' },
    console: ['resume'],
    effect:
      "continue (and cancels a waiting pause's reminder, re-route and deadline: [questions with deadlines](how-a-run-works.md#questions-with-deadlines))",
    journal: (p) => str(p, 'reason'),
  },
  stop: {
    cli: 'stop',
    summary: 'stop a run: at the next boundary, or at once with --now (kills the running agent)',
    args: [],
    options: [
      { flags: '--now', help: 'cancel the running agent call and kill its process tree' },
      { flags: '--reason <text>', help: 'why' },
      by('stopping'),
      signal,
      json,
    ],
    handler: 'send',
    quick: true,
    mcp: {
      tool: 'vigil_stop',
      title: 'Stop a run',
      description: 'Stop a run at the next boundary, or at once with `now` (`vigil stop`).',
      destructive: true,
    },
    console: ['stop'],
    effect: 'end the run with outcome `stopped` (exit 0); `now: true` cancels the running agent call and kills its process tree',
    journal: (p) => `${p.now === true ? 'stop now' : 'stop'}${because(p)}`,
  },
  input: {
    cli: 'input',
    summary: 'give the agent a one-shot directive, injected into the next prompt',
    args: [
      {
        name: 'text',
        key: 'directive',
        help: 'the directive (or use --file)',
        optional: true,
        mcpHelp: 'the one-shot directive for the next prompt (at most 1 MiB of UTF-8 text)',
      },
    ],
    options: [
      { flags: '--file <file>', help: 'read the directive from a file', cliOnly: true },
      by('speaking'),
      {
        flags: '--id <id>',
        help: "the directive's id, to resend one (the run takes a directive with an id it has seen once; default: a new one)",
        cliOnly: true,
      },
      signal,
      json,
    ],
    handler: 'send',
    quick: true,
    mcp: {
      tool: 'vigil_input',
      title: 'Send a directive',
      description: "Give the run's agent a one-shot directive, injected into the next prompt (`vigil input`).",
    },
    console: ['input', 'input-resume'],
    effect:
      'a one-shot directive injected into the next prompt (≤ 1 MiB; at most 50 and 1 MiB in total may wait for one prompt — ' +
      "more is refused, or listed as invalid when signalled). One that comes while the run's last iteration finishes reaches " +
      "no prompt: the outcome's notes name it. `id` (letters, digits, `. _ : -`, ≤ 100; `vigil input` makes one): a directive " +
      'with an id the run has already received is acknowledged unchanged and not queued again, so a resend never reaches the ' +
      'prompt twice (the run remembers its last 200 ids). To a run that Vigil paused for a person, a directive is an answer: ' +
      "the pause's reminder, re-route and deadline are cancelled (`pause.answered`), and it stays paused until resumed",
    journal: (p) => `directive of ${str(p, 'directive').length} characters`,
  },
  forceReview: {
    cli: 'review',
    summary: 'convene the completion council at the next iteration boundary, whatever the cadence',
    args: [],
    options: [{ flags: '--reason <text>', help: 'why' }, by('asking'), signal, json],
    handler: 'send',
    mcp: {
      tool: 'vigil_review',
      title: 'Convene the council',
      description: 'Convene the completion council at the next iteration boundary, whatever the cadence (`vigil review`).',
    },
    console: ['review'],
    effect: 'convene the completion council at the next boundary (ignores the minimum-iteration floor)',
    journal: (p) => str(p, 'reason'),
  },
  budget: {
    cli: 'budget',
    summary: "set the run's spend limit in USD (a run paused on its budget continues once resumed under it)",
    args: [],
    options: [
      { flags: '--usd <amount>', help: 'the new limit for the whole run; 0 removes it', required: true, parse: { dollars: true } },
      by('changing it'),
      signal,
      json,
    ],
    handler: 'send',
    mcp: {
      tool: 'vigil_budget',
      title: "Set a run's budget",
      description: "Set the run's spend limit in USD; 0 removes it (`vigil budget`).",
    },
    console: ['budget', 'budget-resume'],
    effect: "set the run's spend limit in USD (0 removes it)",
    journal: (p) => `budget set to $${typeof p.usd === 'number' ? p.usd.toFixed(2) : '?'}`,
  },
  waive: {
    cli: 'waive',
    summary:
      'waive a PRD checklist item, or a finding of the integrity gates: it no longer blocks completion (held-out items by ' +
      'their status label, e.g. held-out-1; findings by their id, e.g. assertion_changed-1a2b3c4d)',
    args: [{ name: 'item', key: 'item', help: 'the checklist item id or the finding id, as `vigil status` shows it' }],
    options: [{ flags: '--reason <text>', help: 'why (kept with the waiver)' }, by('waiving it'), signal, json],
    handler: 'send',
    mcp: {
      tool: 'vigil_waive',
      title: 'Waive a checklist item',
      description: 'Waive a PRD checklist item: its failure no longer blocks completion (`vigil waive`).',
    },
    console: ['waive'],
    effect:
      'waive a PRD checklist item (`REQ-3`, or `held-out-1`), or a finding of the `test_mutation` or `test_gaming` gate by its ' +
      'id (`assertion_changed-1a2b3c4d`, as status shows it); refused when the run has no such item or finding',
    journal: (p) => `waived ${str(p, 'item')}${because(p)}`,
  },
  rewind: {
    cli: 'rewind',
    summary:
      'take a run back to just after iteration N: the tree restored to its checkpoint (the current tree kept first), the state ' +
      'as it was then; --fork starts a new run from checkpoint N of a finished run',
    args: [],
    options: [
      {
        flags: '--to <n>',
        help: 'the iteration to go back to (one with a checkpoint: `vigil checkpoints <id>`)',
        required: true,
        parse: { int: [1, 100_000_000] },
      },
      { flags: '--reason <text>', help: 'why (shown in status and the UI)' },
      { flags: '--input <text>', help: 'a directive for the next prompt ("try it without the ORM")' },
      { flags: '--force', help: 'keep changes a person made to the tree since the run last looked in a checkpoint, instead of refusing' },
      { flags: '--fork', help: 'a finished run: start a new run (same PRD and knobs) from checkpoint N instead' },
      {
        flags: '--id <id>',
        help: "with --fork: workflow id of the new run (default: <id>-fork-<N>-<time>); a finished run's id is refused without --replace",
      },
      {
        flags: '--replace',
        help: 'with --fork --id of a run that ended: start the fork under that id on purpose (a running one is never replaced)',
      },
      by('rewinding'),
      { flags: '--json', help: 'what was done (the acknowledgement, or the forked run), as JSON', cliOnly: true },
    ],
    handler: 'own',
    mcp: {
      tool: 'vigil_rewind',
      title: 'Rewind a run',
      description:
        'Take a running run back to just after iteration `to` (tree and state), or with `fork` start a new ' +
        'run from that checkpoint of a finished run (`vigil rewind --json`, under `rewind`).',
      destructive: true,
    },
    console: ['rewind'],
    effect:
      'take the run back to just after iteration `to` (see [Checkpoints and rewind](checkpoints-and-rewind.md)); the update ' +
      "answers once it is done, a signal's refusal is listed under `invalidMessages`",
    journal: (p) => `rewind to iteration ${typeof p.to === 'number' ? p.to : '?'}${because(p)}`,
  },
} as const satisfies Record<string, MessageVerb>;

/** A message's name (the update's and the signal's). */
export type MessageName = keyof typeof MESSAGE_VERBS;
export const MESSAGE_NAMES = Object.keys(MESSAGE_VERBS) as MessageName[];

/** The messages sent as they are (cli/steer.ts sendMessage): every one but those with a handler of their own. */
export type SentMessage = { [K in MessageName]: (typeof MESSAGE_VERBS)[K]['handler'] extends 'send' ? K : never }[MessageName];
export const SENT_MESSAGES = MESSAGE_NAMES.filter((n): n is SentMessage => MESSAGE_VERBS[n].handler === 'send') as [
  SentMessage,
  ...SentMessage[],
];

/** The verbs the bin entry reads without commander. */
export type QuickVerb = { [K in MessageName]: (typeof MESSAGE_VERBS)[K] extends { quick: true } ? K : never }[MessageName];
export const QUICK_VERBS = MESSAGE_NAMES.filter((n): n is QuickVerb => 'quick' in MESSAGE_VERBS[n]);

/** The row of a CLI verb (`review` is forceReview's), or undefined. */
export function verbOf(cli: string): MessageName | undefined {
  return MESSAGE_NAMES.find((n) => MESSAGE_VERBS[n].cli === cli);
}

/** The option's key as commander names it (`--agent-command` is agentCommand), and whether it takes a value. */
export function optionKey(o: VerbOption): { key: string; value: boolean } {
  const long = /--([a-z][a-z-]*)/.exec(o.flags)?.[1] ?? '';
  return { key: long.replace(/-([a-z])/g, (_m, c: string) => c.toUpperCase()), value: o.flags.includes('<') };
}

/**
 * Signals a run takes from tools rather than people: no CLI verb of the message verbs' kind
 * (`vigil hooks` and `vigil pr-event` send prEvent; a stream sends streamWaiting to its run).
 */
export const TOOL_SIGNALS = {
  prEvent: {
    payload:
      '`{kind, id, …}` (schemas/pr-event.ts: `checks-failed` `{checks: [{name, logTail}]}`, `comment` `{author, text, ' +
      'commentKind}`, `base-moved`, `merged` `{mergeCommit?}`, `closed`)',
    effect:
      'an event of the pull request the run follows (signal only; `vigil hooks` and `vigil pr-event` send it): see [Following ' +
      'the pull request](how-a-run-works.md#following-the-pull-request). An event with an id the run has seen is taken once; ' +
      'one that is invalid, or comes to a run that follows no pull request, is listed under `invalidMessages`',
  },
  streamWaiting: {
    payload: '`{task, waiting}` (schemas/tasks.ts StreamWaiting: `waiting` is `{reason, at}` or null)',
    effect:
      'from a stream (a child run of a run split into tasks) to its run: the stream waits for a person now, or no longer (signal only; Vigil sends it)',
  },
} as const;

/** The journal's summary of a message (a refused one says why; a message of no row keeps its reason). */
export function journalSummary(name: string, payload: Record<string, unknown> | null, accepted: boolean, error?: string): string {
  if (!accepted) return `refused: ${error ?? 'invalid'}`;
  const p = payload ?? {};
  return Object.hasOwn(MESSAGE_VERBS, name) ? MESSAGE_VERBS[name as MessageName].journal(p) : str(p, 'reason');
}
