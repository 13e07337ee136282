/**
 * The actions of `vigil status` and the message verbs (the rows of schemas/message-verbs.ts sent as
 * they are: pause, resume, stop, input, review, budget, waive) and their payloads, shared by the
 * commander program (cli/commands/messages.ts), the bin entry's pre-dispatch (cli/fast.ts), MCP
 * (cli/mcp.ts) and the console (cli/console/actions.ts), so all run the same code; and how the CLI reports a failure (message and exit
 * code). Light to import: the client and the views are loaded by the action.
 */
import { randomBytes } from 'node:crypto';
import { closeSync, fstatSync, openSync, readSync } from 'node:fs';
import { userInfo } from 'node:os';
import { logLine } from '../lib/logging.js';
import type { Endpoint } from './endpoint.js';
import { CliError, EXIT } from './errors.js';
import type { MessageKind } from './steer.js';
import type { RunApi } from './run-api.js';
import type { AttemptsStatus } from '../schemas/attempts.js';
import type { MessageJson } from '../schemas/cli-output.js';

export const out = (line = ''): void => {
  process.stdout.write(`${line}\n`);
};

/** Who a message is from when `--by` is not given: this machine's user (the account, whatever USER says), else USER or LOGNAME. */
export function defaultActor(): string {
  let name = '';
  try {
    name = userInfo().username.trim();
  } catch {
    // A uid without a passwd entry (some containers): the environment may still name it.
  }
  return name || process.env.USER?.trim() || process.env.LOGNAME?.trim() || 'cli';
}

/** `--by NAME`, else the default actor. */
export const by = (o: Record<string, unknown>): { by?: string } => (typeof o.by === 'string' ? { by: o.by } : { by: defaultActor() });

/** The largest directive (schemas/run.ts LIMITS.directiveBytes, checked again by the run). */
const DIRECTIVE_BYTES = 1024 * 1024;

/**
 * A directive file's text: at most 1 MiB of UTF-8 text without NUL bytes. A regular file's size is
 * checked before it is read; a pipe (`--file /dev/stdin`) is read up to the limit.
 */
export function readDirective(file: string): string {
  let fd: number;
  try {
    fd = openSync(file, 'r');
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    const why =
      code === 'ENOENT'
        ? 'no such file'
        : code === 'EACCES'
          ? 'permission denied'
          : code === 'EISDIR'
            ? 'it is a folder'
            : (err as Error).message;
    throw new CliError(`cannot read directive file ${file}: ${why}`, EXIT.usage);
  }
  const tooBig = (size: string): CliError =>
    new CliError(`directive file ${file} is ${size}; at most ${DIRECTIVE_BYTES} bytes (1 MiB)`, EXIT.usage);
  let buf: Buffer;
  try {
    const st = fstatSync(fd);
    if (st.isDirectory()) throw new CliError(`cannot read directive file ${file}: it is a folder`, EXIT.usage);
    if (st.isFile() && st.size > DIRECTIVE_BYTES) throw tooBig(`${st.size} bytes`);
    const chunk = Buffer.alloc(DIRECTIVE_BYTES + 1);
    let len = 0;
    for (let n = -1; n !== 0 && len < chunk.length; len += n) n = readSync(fd, chunk, len, chunk.length - len, null);
    if (len > DIRECTIVE_BYTES) throw tooBig(`more than ${DIRECTIVE_BYTES} bytes`);
    buf = chunk.subarray(0, len);
  } catch (err) {
    if (err instanceof CliError) throw err;
    throw new CliError(`cannot read directive file ${file}: ${(err as Error).message}`, EXIT.usage);
  } finally {
    closeSync(fd);
  }
  let text: string;
  try {
    text = new TextDecoder('utf-8', { fatal: true }).decode(buf);
  } catch {
    throw new CliError(`directive file ${file} is not UTF-8 text`, EXIT.usage);
  }
  if (text.includes('\0')) throw new CliError(`directive file ${file} looks binary (it holds NUL bytes); a directive is text`, EXIT.usage);
  return text;
}

/** A directive id, as the run's input message takes it (schemas/messages.ts). */
const DIRECTIVE_ID = /^[A-Za-z0-9._:-]{1,100}$/;

const reason = (o: Record<string, unknown>): { reason?: string } => (typeof o.reason === 'string' ? { reason: o.reason } : {});

/** A dollar amount as the CLI and the console take it (`25`, `12.50`); a number is taken as it is (MCP). */
export function dollars(raw: unknown, what = 'budget: the amount'): number {
  if (typeof raw === 'number') return raw;
  const text = typeof raw === 'string' ? raw.trim() : '';
  if (!/^\d+(\.\d+)?$/.test(text))
    throw new CliError(`${what} must be a number of dollars, e.g. 25 or 12.50, got "${String(raw ?? '')}"`, EXIT.usage);
  return Number(text);
}

/**
 * The payload of each message sent as it is (a row of schemas/message-verbs.ts), from a verb's
 * options (keyed as commander names them) and its arguments after the run id: one builder per row,
 * shared by the CLI, the quick path, MCP and the console. Bad input throws exit 2.
 */
export const PAYLOADS: { [K in MessageKind]: (o: Record<string, unknown>, ...args: (string | undefined)[]) => Record<string, unknown> } = {
  pause: (o) => ({ ...reason(o), ...by(o) }),
  resume: (o) => by(o),
  stop: (o) => ({ ...reason(o), ...(o.now ? { now: true } : {}), ...by(o) }),
  input: (o, text) => {
    let directive = text;
    if (typeof o.file === 'string') {
      if (text !== undefined) throw new CliError('give the directive as TEXT or with --file, not both', EXIT.usage);
      directive = readDirective(o.file);
    }
    if (directive === undefined || directive.trim() === '') throw new CliError('no directive: pass TEXT or --file F', EXIT.usage);
    // Its id: given (a resend), else a fresh one; the run takes a directive with an id it has seen once.
    const id = typeof o.id === 'string' ? o.id : `d-${randomBytes(6).toString('hex')}`;
    if (!DIRECTIVE_ID.test(id)) throw new CliError(`--id ${id}: letters, digits, . _ : - only, at most 100`, EXIT.usage);
    return { directive, ...by(o), id };
  },
  budget: (o) => ({ usd: dollars(o.usd), ...by(o) }),
  forceReview: (o) => ({ ...reason(o), ...by(o) }),
  waive: (o, item) => {
    if (item === undefined || item === '') throw new CliError('waive: choose the checklist item (or finding) to waive', EXIT.usage);
    return { item, ...reason(o), ...by(o) };
  },
};

/** `vigil status ID [--json]`. */
export async function statusCommand(ep: Endpoint, id: string, json: boolean): Promise<void> {
  const [{ viewRun }, { printStatus, statusJson }, { withRunApi }] = await Promise.all([
    import('./steer.js'),
    import('./status.js'),
    import('./open-run-api.js'),
  ]);
  await withRunApi(ep, async (api) => {
    const view = await viewRun(api, id);
    // A run with attempts (workflows/attempts-workflow.ts) answers `attempts`, not `status`.
    if (!view.snapshot && (await attemptsStatus(api, id, json))) return;
    const host = view.kind === 'running' ? (view.snapshot?.host ?? null) : null;
    // Only a running run with a host can be waiting for one: does any worker poll its queue?
    const hosts = host ? await import('./hosts.js') : null;
    const pollers = host && hosts ? await hosts.hostPollers(api, ep.taskQueue, host) : null;
    if (json) {
      out(JSON.stringify({ ...statusJson(view), ...(pollers ? { hostPollers: pollers } : {}) }, null, 2));
    } else {
      printStatus(view, out);
      if (host && hosts && pollers?.length === 0)
        out(
          `  warning   : ${hosts.noHostWorkerHint(ep.taskQueue, host, view.snapshot?.repoPath ?? 'the repository').replace(/\n/g, '\n              ')}`,
        );
    }
    if (view.kind === 'running' && !view.workerAnswered) process.exitCode = EXIT.unreachable;
  });
}

/** Prints a run with attempts' status (true), or answers false: not such a run, or no worker answered. */
async function attemptsStatus(api: RunApi, id: string, json: boolean): Promise<boolean> {
  const { WORKER_ANSWER_MS } = await import('./steer.js');
  const answer = (await api.query(id, 'attempts', WORKER_ANSWER_MS).catch(() => null)) as AttemptsStatus | null;
  if (!answer) return false;
  const { attemptsLines, liveAttempts } = await import('./attempts-status.js');
  const live = await liveAttempts(answer, (attemptId) => api.query(attemptId, 'status', WORKER_ANSWER_MS));
  if (json) out(JSON.stringify({ ...answer, live: Object.fromEntries(live) }, null, 2));
  else for (const l of attemptsLines(answer, live)) out(l);
  return true;
}

/** Sends one message (its payload built already: bad input is exit 2 before anything connects); `json`: the answer as MessageJson. */
export async function messageCommand(
  ep: Endpoint,
  kind: MessageKind,
  id: string,
  body: Record<string, unknown>,
  asSignal: boolean,
  json = false,
): Promise<void> {
  const [{ sendMessage }, { withRunApi }] = await Promise.all([import('./steer.js'), import('./open-run-api.js')]);
  const directiveId = kind === 'input' && typeof body.id === 'string' ? body.id : null;
  await withRunApi(ep, async (api) => {
    let ack;
    try {
      ack = await sendMessage(api, ep, id, kind, body, asSignal);
    } catch (err) {
      // An unanswered directive may still reach the run: resent with its id, it is taken once.
      if (directiveId && err instanceof CliError && err.exitCode === EXIT.unreachable) {
        throw new CliError(
          `${err.message}\nTo resend this directive without it reaching the run twice, give it its id: vigil input ` +
            `${id} --signal --id ${directiveId} (with the same text).`,
          err.exitCode,
        );
      }
      throw err;
    }
    if (json) {
      const answer: MessageJson = {
        workflowId: id,
        message: kind,
        by: typeof body.by === 'string' ? body.by : defaultActor(),
        acknowledged: ack !== null,
        ack: ack ? { changed: ack.changed, message: ack.message, status: ack.status, iteration: ack.iteration, paused: ack.paused } : null,
        ...(directiveId ? { directiveId } : {}),
      };
      out(JSON.stringify(answer, null, 2));
    } else
      out(
        ack
          ? `${id}: ${ack.message} (status ${ack.status}, iteration ${ack.iteration})`
          : `${id}: ${kind} signal recorded${directiveId ? ` (directive ${directiveId})` : ''}; it takes effect when a worker runs the workflow`,
      );
  });
}

/**
 * Says why a command failed and returns its exit code (commander's own errors are handled by
 * cli/main.ts). On stderr as text, or as a JSON line with --log-format json.
 */
export function reportFailure(err: unknown): number {
  // By name: the modules that define them are loaded only by the commands that throw them.
  if (err instanceof Error && (err.name === 'ConfigError' || err.name === 'PrdError')) {
    logLine('ERROR', `vigil: ${err.message}`);
    return EXIT.usage;
  }
  if (err instanceof CliError) {
    logLine('ERROR', `vigil: ${err.message}`);
    return err.exitCode;
  }
  logLine('ERROR', `vigil: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}`);
  return 1;
}
