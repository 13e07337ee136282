/**
 * The cluster path without Docker: the real Temporal server binary (built from the Go module proxy
 * by scripts/install-temporal-server.sh, at the version of the compose image) on a real Postgres
 * (the embedded one), its schema set up by the real temporal-sql-tool, configured as the compose
 * deployment is: the default store and the visibility store on SQL (postgres12), the frontend,
 * history, matching and worker services in one process, the deployment's dynamic config. The
 * server can be killed with SIGKILL and started again on the same ports and database.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { closeSync, existsSync, openSync, readFileSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { Connection } from '@temporalio/client';
import { execa } from 'execa';
import pg from 'pg';
import { z } from 'zod';
import { isListening } from '../../workers/dev-server.js';
import { sleep } from '../support/harness.js';
import { withDatabase, type TestPostgres } from '../support/postgres.js';

export const ROOT = path.resolve(import.meta.dirname, '../..');
const INSTALL_SCRIPT = path.join(ROOT, 'scripts/install-temporal-server.sh');

/** The version scripts/install-temporal-server.sh builds (its `version=` line). */
export function pinnedServerVersion(): string {
  const m = /^version=(\S+)$/m.exec(readFileSync(INSTALL_SCRIPT, 'utf8'));
  if (!m?.[1]) throw new Error(`no version= line in ${INSTALL_SCRIPT}`);
  return m[1];
}

/** The tag of the temporalio/server image in docker-compose.yml (without its digest, when pinned by one). */
export function composeServerVersion(): string {
  const m = /^\s*image:\s*temporalio\/server:([^@\s]+)(?:@sha256:[0-9a-f]+)?\s*$/m.exec(
    readFileSync(path.join(ROOT, 'docker-compose.yml'), 'utf8'),
  );
  if (!m?.[1]) throw new Error('no temporalio/server image in docker-compose.yml');
  return m[1];
}

export interface ServerBinaries {
  dir: string;
  server: string;
  sqlTool: string;
  /** schema/postgresql/v12: its temporal/versioned and visibility/versioned folders. */
  schema: string;
}

/** The binaries the install script left in its cache (VIGIL_TEMPORAL_SERVER_DIR, else ~/.cache/vigil/temporal-server-<version>). */
export function serverBinaries(): ServerBinaries {
  const dir =
    process.env.VIGIL_TEMPORAL_SERVER_DIR?.trim() || path.join(os.homedir(), '.cache/vigil', `temporal-server-${pinnedServerVersion()}`);
  const bins: ServerBinaries = {
    dir,
    server: path.join(dir, 'temporal-server'),
    sqlTool: path.join(dir, 'temporal-sql-tool'),
    schema: path.join(dir, 'schema/postgresql/v12'),
  };
  for (const p of [bins.server, bins.sqlTool, bins.schema]) {
    if (!existsSync(p))
      throw new Error(`${p} is missing: run \`bash scripts/install-temporal-server.sh\` first (\`npm run test:cluster\` does)`);
  }
  return bins;
}

export interface Ports {
  frontend: number;
  frontendHttp: number;
  frontendMembership: number;
  history: number;
  historyMembership: number;
  matching: number;
  matchingMembership: number;
  worker: number;
  workerMembership: number;
}

/** The gRPC port of each service, by the name the server gives it. */
export function servicePorts(p: Ports): Record<'frontend' | 'history' | 'matching' | 'worker', number> {
  return { frontend: p.frontend, history: p.history, matching: p.matching, worker: p.worker };
}

/**
 * A free loopback port below 32768: Temporal's SQL schema keeps a member's port in a smallint
 * (cluster_membership.rpc_port), so the system's ephemeral ports (32768 and up) fail the
 * membership heartbeat ("value out of range for type smallint") and the server exits.
 */
async function freeLowPort(taken: Set<number>): Promise<number> {
  for (let attempt = 0; attempt < 200; attempt++) {
    const port = 20_000 + Math.floor(Math.random() * 12_000);
    if (taken.has(port)) continue;
    const free = await new Promise<boolean>((resolve) => {
      const srv = net.createServer();
      srv.once('error', () => resolve(false));
      srv.listen(port, '127.0.0.1', () => srv.close(() => resolve(true)));
    });
    if (free) {
      taken.add(port);
      return port;
    }
  }
  throw new Error('no free loopback port between 20000 and 32000');
}

async function freePorts(): Promise<Ports> {
  const taken = new Set<number>();
  const next = (): Promise<number> => freeLowPort(taken);
  return {
    frontend: await next(),
    frontendHttp: await next(),
    frontendMembership: await next(),
    history: await next(),
    historyMembership: await next(),
    matching: await next(),
    matchingMembership: await next(),
    worker: await next(),
    workerMembership: await next(),
  };
}

export interface SqlLogin {
  host: string;
  port: number;
  user: string;
  password: string;
}

/**
 * Temporal's own role on the Postgres, as the compose deployment has it (`temporal`, allowed to
 * create its databases); the embedded server's superuser keeps the event store.
 */
export async function createTemporalRole(tp: TestPostgres): Promise<SqlLogin> {
  const password = randomBytes(12).toString('hex');
  const admin = new pg.Client({ connectionString: withDatabase(tp.server.url, 'postgres') });
  await admin.connect();
  try {
    await admin.query(`create role temporal login createdb password ${admin.escapeLiteral(password)}`);
  } finally {
    await admin.end();
  }
  return { host: '127.0.0.1', port: tp.server.port, user: 'temporal', password };
}

/**
 * Creates `temporal` and `temporal_visibility` and brings their schemas to the server's version,
 * with the real temporal-sql-tool, as deploy/temporal/schema.sh does in the compose deployment.
 * Returns each command line and its output, for the log.
 */
export async function setupSchema(bins: ServerBinaries, login: SqlLogin): Promise<string> {
  let log = '';
  const sql = async (db: string, ...args: string[]): Promise<void> => {
    const argv = [
      '--plugin',
      'postgres12',
      '--ep',
      login.host,
      '-p',
      String(login.port),
      '-u',
      login.user,
      '--pw',
      login.password,
      '--db',
      db,
      ...args,
    ];
    const r = await execa(bins.sqlTool, argv, { reject: false, all: true, timeout: 120_000 });
    log += `$ temporal-sql-tool --db ${db} ${args.join(' ')}\n${String(r.all)}\n`;
    if (r.exitCode !== 0) throw new Error(`temporal-sql-tool --db ${db} ${args.join(' ')} exited ${r.exitCode ?? r.signal}:\n${log}`);
  };
  for (const [db, dir] of [
    ['temporal', 'temporal'],
    ['temporal_visibility', 'visibility'],
  ] as const) {
    await sql(db, 'create-database');
    await sql(db, 'setup-schema', '-v', '0.0');
    await sql(db, 'update-schema', '-d', path.join(bins.schema, dir, 'versioned'));
  }
  return log;
}

/**
 * The server's config: the compose deployment's (postgres12 for both stores, every service in one
 * process, its dynamic config file), on loopback ports of its own. Pools stay small: each of the
 * four services opens its own, and the embedded Postgres allows 50 connections, which the
 * event store shares.
 */
export function serverConfig(ports: Ports, login: SqlLogin, dynamicConfigFile: string): string {
  const store = (db: string, conns: number): string => `
      sql:
        pluginName: postgres12
        databaseName: ${db}
        connectAddr: "${login.host}:${login.port}"
        connectProtocol: tcp
        user: ${login.user}
        password: "${login.password}"
        maxConns: ${conns}
        maxIdleConns: ${conns}
        maxConnLifetime: 1h`;
  const service = (grpc: number, membership: number, http?: number): string => `
    rpc:
      grpcPort: ${grpc}
      membershipPort: ${membership}
      bindOnIP: 127.0.0.1${http ? `\n      httpPort: ${http}` : ''}`;
  return `log:
  stdout: true
  level: warn

persistence:
  defaultStore: postgres-default
  visibilityStore: postgres-visibility
  numHistoryShards: 4
  datastores:
    postgres-default:${store('temporal', 4)}
    postgres-visibility:${store('temporal_visibility', 2)}

global:
  membership:
    maxJoinDuration: 30s
    broadcastAddress: 127.0.0.1

services:
  frontend:${service(ports.frontend, ports.frontendMembership, ports.frontendHttp)}
  history:${service(ports.history, ports.historyMembership)}
  matching:${service(ports.matching, ports.matchingMembership)}
  worker:${service(ports.worker, ports.workerMembership)}

clusterMetadata:
  enableGlobalNamespace: false
  failoverVersionIncrement: 10
  masterClusterName: active
  currentClusterName: active
  clusterInformation:
    active:
      enabled: true
      initialFailoverVersion: 1
      rpcName: frontend
      rpcAddress: "127.0.0.1:${ports.frontend}"

dcRedirectionPolicy:
  policy: noop

publicClient:
  hostPort: "127.0.0.1:${ports.frontend}"

dynamicConfigClient:
  filepath: "${dynamicConfigFile}"
  pollInterval: 10s
`;
}

const ClusterInfoSchema = z.object({
  serverVersion: z.string(),
  persistenceStore: z.string(),
  visibilityStore: z.string(),
});
export type ClusterInfo = z.infer<typeof ClusterInfoSchema>;

/** What the frontend says of itself (GetClusterInfo), once it serves and its persistence answers. */
export async function clusterInfo(address: string): Promise<ClusterInfo> {
  const connection = await Connection.connect({ address, connectTimeout: 2_000 });
  try {
    const info = ClusterInfoSchema.parse(await connection.workflowService.getClusterInfo({}));
    // A read of the default store: the system namespace exists once the server has started.
    await connection.workflowService.describeNamespace({ namespace: 'temporal-system' });
    return info;
  } finally {
    await connection.close();
  }
}

export interface ClusterServer {
  address: string;
  ports: Ports;
  configFile: string;
  logFile: string;
  /** The pid of the server process now running (changes with each start). */
  pid(): number;
  /** Starts the binary (again) with the same config, and waits until the frontend answers. */
  start(): Promise<ClusterInfo>;
  /** SIGKILL, as a crash would: no shutdown of any kind. */
  kill9(): Promise<void>;
  /** Stops it gracefully (SIGTERM; SIGKILL after 20 s). */
  stop(): Promise<void>;
  /** The end of the server's log, for failure messages. */
  logTail(): string;
}

export async function clusterServer(bins: ServerBinaries, login: SqlLogin, dir: string): Promise<ClusterServer> {
  const ports = await freePorts();
  const configFile = path.join(dir, 'temporal.yaml');
  const logFile = path.join(dir, 'temporal-server.log');
  writeFileSync(configFile, serverConfig(ports, login, path.join(ROOT, 'deploy/temporal/dynamicconfig/vigil.yaml')));
  const address = `127.0.0.1:${ports.frontend}`;
  let child: ChildProcess | null = null;
  let exited: Promise<void> = Promise.resolve();

  const logTail = (): string => {
    try {
      return readFileSync(logFile, 'utf8').slice(-6_000);
    } catch {
      return '(no server log)';
    }
  };

  const waitForExit = async (ms: number): Promise<boolean> => Promise.race([exited.then(() => true), sleep(ms).then(() => false)]);

  const server: ClusterServer = {
    address,
    ports,
    configFile,
    logFile,
    pid: () => child?.pid ?? -1,
    logTail,
    async start() {
      if (child && child.exitCode === null && child.signalCode === null) throw new Error('the server is running already');
      // Every port free again (a killed server's sockets are gone with it).
      for (const [name, port] of Object.entries(servicePorts(ports))) {
        if (await isListening('127.0.0.1', port)) throw new Error(`port ${port} of the ${name} service is taken before the server started`);
      }
      const fd = openSync(logFile, 'a');
      writeFileSync(logFile, `--- ${new Date().toISOString()} temporal-server start\n`, { flag: 'a' });
      const proc = spawn(bins.server, ['--config-file', configFile, '--allow-no-auth', 'start'], { stdio: ['ignore', fd, fd] });
      closeSync(fd);
      child = proc;
      exited = new Promise((resolve) => proc.once('exit', () => resolve()));
      const deadline = Date.now() + 120_000;
      let last: unknown = null;
      for (;;) {
        if (proc.exitCode !== null || proc.signalCode !== null) {
          throw new Error(`temporal-server exited (${proc.exitCode ?? proc.signalCode}) before serving:\n${logTail()}`);
        }
        try {
          return await clusterInfo(address);
        } catch (err) {
          last = err;
        }
        if (Date.now() > deadline)
          throw new Error(`temporal-server did not serve at ${address} within 120 s (last error: ${String(last)}):\n${logTail()}`);
        await sleep(500);
      }
    },
    async kill9() {
      if (!child) return;
      child.kill('SIGKILL');
      await exited;
    },
    async stop() {
      if (!child || child.exitCode !== null || child.signalCode !== null) return;
      child.kill('SIGTERM');
      if (!(await waitForExit(20_000))) {
        child.kill('SIGKILL');
        await exited;
      }
    },
  };
  return server;
}
