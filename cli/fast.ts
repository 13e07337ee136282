/**
 * The bin entry's pre-dispatch: `vigil status`, `pause`, `resume`, `stop` and `input`, when their
 * command line is plainly well formed, run here without loading commander or building the whole
 * program (and, for an environment with no profile, TLS or API key, without loading envconfig).
 * Anything else — another verb, `--help`, `--version`, an option these verbs do not have, a
 * missing or extra argument, an option given twice, a value that starts with `-`, `--` — goes to
 * the commander program (cli/main.ts), so usage errors and help are exactly commander's. The
 * message verbs' grammar is their rows of the message table (schemas/message-verbs.ts, those
 * marked `quick`); the actions are the program's own (cli/steer-commands.ts).
 */
import type { Endpoint } from './endpoint.js';
import { MESSAGE_VERBS, optionKey, QUICK_VERBS, type MessageVerb, type QuickVerb } from '../schemas/message-verbs.js';

interface Grammar {
  /** Required positional arguments, then optional ones. */
  required: number;
  optional: number;
  /** Boolean flags. */
  flags: readonly string[];
  /** Options that take a value. */
  values: readonly string[];
}

/** The grammar of a quick message verb, read from its row of the message table. */
function grammarOf(name: QuickVerb): Grammar {
  const row: MessageVerb = MESSAGE_VERBS[name];
  const keys = row.options.map(optionKey);
  return {
    required: 1 + row.args.filter((a) => !a.optional).length,
    optional: row.args.filter((a) => a.optional).length,
    flags: keys.filter((k) => !k.value).map((k) => k.key),
    values: keys.filter((k) => k.value).map((k) => k.key),
  };
}

const STATUS: Grammar = { required: 1, optional: 0, flags: ['json'], values: [] };
const VERBS = Object.fromEntries([['status', STATUS], ...QUICK_VERBS.map((n) => [n, grammarOf(n)])]) as Record<
  'status' | QuickVerb,
  Grammar
>;

export interface FastCommand {
  verb: keyof typeof VERBS;
  args: string[];
  opts: Record<string, string | true>;
  profile?: string;
}

/** The command line as these five verbs read it; null when commander should read it. */
export function parseFast(argv: readonly string[]): FastCommand | null {
  // Before the verb, only the program's own --profile.
  let at = 0;
  while (at < argv.length && (argv[at] as string).startsWith('-')) {
    if (argv[at] === '--profile') at += 2;
    else if ((argv[at] as string).startsWith('--profile=')) at += 1;
    else return null;
  }
  const verb = argv[at];
  if (verb === undefined || !Object.hasOwn(VERBS, verb)) return null;
  const g = VERBS[verb as keyof typeof VERBS];
  const args: string[] = [];
  const opts: Record<string, string | true> = {};
  let profile: string | undefined;
  const take = (name: string, value: string): boolean => {
    if (value.startsWith('-')) return false;
    if (name === 'profile') {
      if (profile !== undefined) return false;
      profile = value;
      return true;
    }
    if (Object.hasOwn(opts, name)) return false;
    opts[name] = value;
    return true;
  };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i] as string;
    if (i === at) continue;
    if (!a.startsWith('-')) {
      args.push(a);
      continue;
    }
    const m = /^--([a-z][a-z-]*)(?:=(.*))?$/s.exec(a);
    if (!m) return null;
    const name = m[1] as string;
    const inline = m[2];
    if (name === 'profile' || g.values.includes(name)) {
      const value = inline ?? argv[i + 1];
      if (value === undefined) return null;
      if (inline === undefined) i++;
      if (!take(name, value)) return null;
    } else if (g.flags.includes(name) && inline === undefined) {
      if (Object.hasOwn(opts, name)) return null;
      opts[name] = true;
    } else {
      return null;
    }
  }
  if (args.length < g.required || args.length > g.required + g.optional) return null;
  // An empty run id is commander's usage error, worded once (cli/commands/shared.ts runIdArg).
  if ((args[0] ?? 'id').trim() === '') return null;
  return { verb: verb as keyof typeof VERBS, args, opts, ...(profile !== undefined ? { profile } : {}) };
}

/** Runs a command the pre-dispatch read; its exit code. */
export async function runFast(cmd: FastCommand): Promise<number> {
  const { messageCommand, PAYLOADS, reportFailure, statusCommand } = await import('./steer-commands.js');
  try {
    const endpoint = async (): Promise<Endpoint> => {
      const { plainEndpoint } = await import('./endpoint.js');
      return (
        plainEndpoint(process.env, cmd.profile) ??
        (await import('./connection.js')).endpointFromEnv(process.env, cmd.profile?.trim() ? { profile: cmd.profile } : {})
      );
    };
    const id = cmd.args[0] as string;
    if (cmd.verb === 'status') {
      await statusCommand(await endpoint(), id, cmd.opts.json === true);
    } else {
      // As the program: the payload first (bad input is exit 2 whatever Temporal says), then the endpoint.
      const body = PAYLOADS[cmd.verb](cmd.opts, ...cmd.args.slice(1));
      await messageCommand(await endpoint(), cmd.verb, id, body, cmd.opts.signal === true, cmd.opts.json === true);
    }
    return typeof process.exitCode === 'number' ? process.exitCode : 0;
  } catch (err) {
    return reportFailure(err);
  }
}
