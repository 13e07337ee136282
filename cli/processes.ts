/**
 * Long-running commands: `vigil server` (embedded dev server with a persistent database under
 * VIGIL_HOME), `vigil worker`, and `vigil up` (both in one process, reusing a server that is
 * already answering at TEMPORAL_ADDRESS).
 */
import path from 'node:path';
import { DefaultLogger, NativeConnection, Runtime, type LogLevel } from '@temporalio/worker';
import { isListening, startDevServer, type DevServer } from '../workers/dev-server.js';
import { vigilHome } from '../workers/paths.js';
import { resolveTemporalCli } from '../workers/temporal-cli.js';
import { createVigilWorker } from '../workers/worker.js';
import { CliError, EXIT, splitHostPort, type Endpoint } from './connection.js';

export interface ServerFlags {
  port?: number;
  uiPort?: number;
  headless?: boolean;
  db?: string;
  ip?: string;
}

const say = (line: string): void => {
  process.stdout.write(`${line}\n`);
};

export function installRuntime(level: LogLevel, handleSignals = true): void {
  Runtime.install({ logger: new DefaultLogger(level), ...(handleSignals ? {} : { shutdownSignals: [] }) });
}

export function dbFileFor(flags: ServerFlags): string {
  return path.resolve(flags.db ?? path.join(vigilHome(), 'temporal.db'));
}

export async function startServer(ep: Endpoint, flags: ServerFlags): Promise<DevServer> {
  const [host, port] = splitHostPort(ep.address);
  const cli = await resolveTemporalCli({ log: say });
  const dbFile = dbFileFor(flags);
  const server = await startDevServer({
    cliPath: cli.path,
    dbFile,
    ip: flags.ip ?? host,
    port: flags.port ?? port,
    ...(flags.uiPort !== undefined ? { uiPort: flags.uiPort } : {}),
    headless: flags.headless ?? false,
    namespace: ep.namespace,
  });
  say(`Temporal dev server (${cli.version.split('\n')[0]}) is up`);
  say(`  gRPC address : ${server.address}   (TEMPORAL_ADDRESS)`);
  say(`  namespace    : ${server.namespace}`);
  say(`  Web UI       : ${server.uiUrl ?? 'off (--headless)'}`);
  say(`  database     : ${dbFile}   (runs survive restarts)`);
  say(`  server log   : ${server.logFile}`);
  return server;
}

function untilSignal(): Promise<NodeJS.Signals> {
  return new Promise((resolve) => {
    const on = (sig: NodeJS.Signals): void => resolve(sig);
    process.once('SIGINT', on);
    process.once('SIGTERM', on);
  });
}

export async function serverCommand(ep: Endpoint, flags: ServerFlags): Promise<number> {
  const server = await startServer(ep, flags);
  say('Press Ctrl+C to stop the server.');
  const result = await Promise.race([untilSignal().then(() => 'signal' as const), server.exited.then(() => 'exited' as const)]);
  if (result === 'exited') {
    process.stderr.write(`the Temporal server exited unexpectedly; see ${server.logFile}\n`);
    return 1;
  }
  await server.stop();
  say('server stopped; the database keeps every run');
  return 0;
}

export async function workerCommand(ep: Endpoint): Promise<number> {
  installRuntime('INFO');
  let connection: NativeConnection;
  try {
    connection = await NativeConnection.connect({ address: ep.address });
  } catch (err) {
    throw new CliError(`cannot reach Temporal at ${ep.address}: ${err instanceof Error ? err.message : String(err)}\nStart one with \`vigil server\`, or set TEMPORAL_ADDRESS.`, EXIT.unreachable);
  }
  try {
    const worker = await createVigilWorker({ connection, namespace: ep.namespace, taskQueue: ep.taskQueue });
    say(`vigil worker polling task queue "${ep.taskQueue}" (namespace "${ep.namespace}", ${ep.address}); Ctrl+C to stop`);
    await worker.run();
    say('vigil worker stopped');
    return 0;
  } finally {
    await connection.close();
  }
}

export async function upCommand(ep: Endpoint, flags: ServerFlags): Promise<number> {
  const [host, port] = splitHostPort(ep.address);
  let server: DevServer | null = null;
  if (await isListening(host, port)) {
    say(`using the Temporal server already answering at ${ep.address}`);
  } else {
    server = await startServer(ep, flags);
  }
  try {
    return await workerCommand(server ? { ...ep, address: server.address } : ep);
  } finally {
    await server?.stop();
  }
}
