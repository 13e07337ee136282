/**
 * `vigil console [--host H] [--port P] [--by NAME]`, and the console `vigil up` and
 * `vigil demo --keep-server` start beside their worker: connects to Temporal, serves the console
 * (cli/console/server.ts) and prints one line, `console: http://HOST:PORT/`, once it serves. On a
 * non-loopback address it needs its token: printed once, when it is made, and kept in
 * `$VIGIL_HOME/console-token`. With VIGIL_HOOKS_SECRET set it also receives GitHub's webhooks at
 * /hooks (the receiver of `vigil hooks`, cli/hooks.ts), and prints where.
 */
import { vigilHome } from '../../lib/paths.js';
import { connect, type Endpoint } from '../connection.js';
import { CliError, EXIT } from '../errors.js';
import { defaultActor } from '../steer-commands.js';
import { hooksSecret } from '../hooks-command.js';
import { startConsole, type RunningConsole } from './server.js';

export const DEFAULT_CONSOLE_HOST = '127.0.0.1';
export const DEFAULT_CONSOLE_PORT = 8237;

export interface ConsoleFlags {
  host: string;
  port: number;
  by: string;
}

/** The lines to print once it serves: the URL, and the token the first time (only then). */
export function consoleLines(c: RunningConsole): string[] {
  const hooks = c.hooksUrl
    ? [`  webhooks: ${c.hooksUrl} receives GitHub's webhooks signed with VIGIL_HOOKS_SECRET (as \`vigil hooks\`)`]
    : [];
  return [...tokenLines(c), ...hooks];
}

function tokenLines(c: RunningConsole): string[] {
  if (!c.token) return [`console: ${c.url}`];
  if (c.token.created) {
    return [
      `console: ${c.url}?token=${c.token.value}`,
      `  token made now and kept in ${c.token.file} (shown this once): open the URL above once in a browser, or send "Authorization: Bearer <token>"`,
    ];
  }
  return [`console: ${c.url}`, `  it asks for its token (in ${c.token.file}): open ${c.url}?token=<token> once in a browser`];
}

/** Connects and serves; the caller closes it. A port in use is a CliError (exit 2) that says what to do. */
export async function openConsole(ep: Endpoint, flags: ConsoleFlags): Promise<{ console: RunningConsole; close: () => Promise<void> }> {
  // A webhook secret set: the console receives GitHub's webhooks too (one that is too short is refused, as by `vigil hooks`).
  const hooks = process.env.VIGIL_HOOKS_SECRET ? hooksSecret(process.env, 'vigil console') : undefined;
  const { client, connection } = await connect(ep);
  try {
    const c = await startConsole({
      client,
      connection,
      ep,
      host: flags.host,
      port: flags.port,
      home: vigilHome(),
      operator: flags.by,
      ...(hooks ? { hooksSecret: hooks } : {}),
    });
    return {
      console: c,
      close: async () => {
        await c.close();
        await connection.close();
      },
    };
  } catch (err) {
    await connection.close();
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'EADDRINUSE')
      throw new CliError(
        `the console cannot listen on ${flags.host}:${flags.port}: the port is in use; pass --port P (0: any free port)`,
        EXIT.usage,
      );
    if (code === 'EADDRNOTAVAIL')
      throw new CliError(
        `the console cannot listen on ${flags.host}: no such address on this machine; pass --host 127.0.0.1 or an address of this machine`,
        EXIT.usage,
      );
    throw err;
  }
}

/** `vigil console`: serves until SIGINT/SIGTERM. */
export async function consoleCommand(ep: Endpoint, flags: ConsoleFlags, out: (line: string) => void): Promise<number> {
  const { console: c, close } = await openConsole(ep, flags);
  // One write: whoever reads the output (a script, a log tail) sees the URL and the lines under it together.
  out(consoleLines(c).join('\n'));
  await new Promise<void>((resolve) => {
    process.once('SIGINT', () => resolve());
    process.once('SIGTERM', () => resolve());
  });
  await close();
  return 0;
}

/**
 * The console of `vigil up` and `vigil demo --keep-server`: on the default address (loopback), or
 * VIGIL_CONSOLE_PORT; a console that cannot start is a warning, never a reason to stop the worker.
 */
export async function sideConsole(ep: Endpoint, say: (line: string) => void, warn: (line: string) => void): Promise<() => Promise<void>> {
  const raw = process.env.VIGIL_CONSOLE_PORT?.trim();
  if (process.env.VIGIL_CONSOLE?.trim() === '0') return async () => undefined;
  const port = raw && /^\d+$/.test(raw) ? Number(raw) : DEFAULT_CONSOLE_PORT;
  try {
    const { console: c, close } = await openConsole(ep, { host: DEFAULT_CONSOLE_HOST, port, by: defaultActor() });
    for (const l of consoleLines(c)) say(l);
    return close;
  } catch (err) {
    warn(
      `the operator console did not start: ${err instanceof Error ? err.message : String(err)} (VIGIL_CONSOLE_PORT picks ` +
        `another port, VIGIL_CONSOLE=0 turns it off)`,
    );
    return async () => undefined;
  }
}
