/** The servers: `vigil console`, `vigil mcp` and `vigil codec-server`. */
import type { Command } from 'commander';
import { CliError, EXIT } from '../errors.js';
import { intArg } from '../int-arg.js';
import { defaultActor, out } from '../steer-commands.js';
import type { CommandContext } from './shared.js';

/** `vigil console`, `vigil mcp`, `vigil codec-server`. */
export function registerServe(program: Command, ctx: CommandContext): void {
  const { endpoint, resolve, validateId, collect } = ctx;
  program
    .command('console')
    .description(
      'serve the operator console: every run waiting for a person with its handoff and the actions that answer it, every run ' +
        'with its timeline, charts and live log, and the reports (see docs/console.md)',
    )
    .option(
      '--host <host>',
      'address to listen on; any but a loopback address needs the console token (made once, printed once, kept in VIGIL_HOME)',
      '127.0.0.1',
    )
    .option('--port <port>', 'port to listen on, 0 for any free one (default: 8237)', intArg('--port', 0, 65_535))
    .option('--by <name>', 'who the actions are sent by (default: your OS user name); a person can set another name in the page')
    .action(async (o: { host: string; port?: number; by?: string }) => {
      const { consoleCommand, DEFAULT_CONSOLE_PORT } = await import('../console/command.js');
      process.exitCode = await consoleCommand(
        endpoint(),
        { host: o.host, port: o.port ?? DEFAULT_CONSOLE_PORT, by: o.by ?? defaultActor() },
        out,
      );
    });

  program
    .command('mcp')
    .description(
      "serve Vigil's tools and resources to an MCP client (Claude Code, Cursor, an agent inside a run) over stdio, or with " +
        '--http over streamable HTTP on loopback (see docs/mcp.md)',
    )
    .option(
      '--http',
      'streamable HTTP at http://127.0.0.1:<port>/mcp instead of stdio, for clients that send the token in VIGIL_HOME/mcp-token',
    )
    .option('--port <port>', 'with --http: the port, 0 for any free one (default: 8238)', intArg('--port', 0, 65_535))
    .action(async (o: { http?: boolean; port?: number }) => {
      if (o.port !== undefined && !o.http) throw new CliError('--port is for --http; over stdio there is no port', EXIT.usage);
      const { mcpCommand } = await import('../mcp.js');
      process.exitCode = await mcpCommand(
        { endpoint, resolve, validateId },
        { http: Boolean(o.http), ...(o.port !== undefined ? { port: o.port } : {}) },
      );
    });

  program
    .command('codec-server')
    .description('serve /encode and /decode for the Temporal Web UI and CLI with the payload key (VIGIL_CODEC_KEY_FILE or VIGIL_CODEC_KEY)')
    .option('--host <host>', 'address to listen on (keep it private: whoever reaches it can decrypt)', '127.0.0.1')
    .option('--port <port>', 'port to listen on', intArg('--port', 1, 65_535), 8081)
    .option(
      '--cors-origin <url>',
      'a Web UI origin allowed to call it (repeatable; default the UI of TEMPORAL_ADDRESS)',
      collect,
      [] as string[],
    )
    .action(async (o: { host: string; port: number; corsOrigin: string[] }) => {
      const [{ codecFromEnv }, { startCodecServer }] = await Promise.all([
        import('../../workers/codec.js'),
        import('../../workers/codec-server.js'),
      ]);
      const codec = codecFromEnv();
      if (!codec)
        throw new CliError(
          'no payload key: set VIGIL_CODEC_KEY_FILE (a file with a base64 or hex 32-byte key: `openssl rand -base64 32 > key`) or VIGIL_CODEC_KEY',
          EXIT.usage,
        );
      const origins = o.corsOrigin.length ? o.corsOrigin : [endpoint().uiUrl];
      const server = await startCodecServer({ codec, host: o.host, port: o.port, corsOrigins: origins });
      out(`vigil codec-server: ${server.url} (key id ${codec.keyId}); allowed UI origins: ${origins.join(', ')}`);
      out(`In the Web UI: Settings → Data Encoder → ${server.url}; with the temporal CLI: --codec-endpoint ${server.url}`);
      await new Promise<void>((resolve) => {
        const stop = (): void => resolve();
        process.once('SIGINT', stop);
        process.once('SIGTERM', stop);
      });
      await server.close();
    });
}
