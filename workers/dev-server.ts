/**
 * Lifecycle of an embedded Temporal dev server (`temporal server start-dev`): persistent SQLite
 * database in WAL mode with `synchronous=NORMAL` (durable across crashes, not fsync-bound), the
 * namespace and Vigil's search attributes registered at start, readiness checked over gRPC, and
 * the dynamic config of `DEV_SERVER_DYNAMIC_CONFIG` (tuned for Vigil's workload).
 */
import { chmodSync, createWriteStream, existsSync, mkdirSync, readFileSync, statSync } from 'node:fs';
import net, { BlockList } from 'node:net';
import path from 'node:path';
import { Connection } from '@temporalio/client';
import { execa, type ResultPromise } from 'execa';
import { SEARCH_ATTRIBUTE_FLAGS } from '../schemas/search-attributes.js';

/**
 * Dynamic config of the embedded server, tuned for Vigil's workload: long chains of short tasks
 * (an iteration is an agent call, a few workflow tasks and at most a couple more activities),
 * one run per workflow, from one to a few hundred runs at once. The same values are in the
 * compose deployment's `deploy/temporal/dynamicconfig/vigil.yaml` (tests/unit/deploy.test.ts
 * keeps them equal); `npm run bench` measures them.
 *
 * - The history service's queue processors read at most `…MaxPollRPS` (default 20) batches per
 *   second per shard, and the dev server has one shard: once a burst has used the budget up, every
 *   task transfer (workflow task → matching, activity → matching) waits for the rate limiter, and
 *   an iteration locks to ~0.3 s. Raised, the transfer of a task is immediate.
 * - One task-queue partition (default 4): with one worker process, a task written to a partition
 *   no poller is waiting on is forwarded or waits for a poll on it; with one partition every task
 *   is matched to a waiting poll at once. One matching host and one shard need no partitioning.
 */
export const DEV_SERVER_DYNAMIC_CONFIG: Readonly<Record<string, number | boolean | string>> = {
  'history.transferProcessorMaxPollRPS': 2000,
  'history.transferProcessorMaxPollHostRPS': 2000,
  'history.timerProcessorMaxPollRPS': 2000,
  'history.timerProcessorMaxPollHostRPS': 2000,
  'history.visibilityProcessorMaxPollRPS': 2000,
  'history.visibilityProcessorMaxPollHostRPS': 2000,
  'matching.numTaskqueueReadPartitions': 1,
  'matching.numTaskqueueWritePartitions': 1,
};

export interface DevServerOptions {
  cliPath: string;
  /** SQLite database file; created when missing, reused (with all runs in it) when present. */
  dbFile: string;
  ip?: string;
  port?: number;
  /** Web UI port; default port + 1000. Ignored when headless. */
  uiPort?: number;
  headless?: boolean;
  namespace?: string;
  /** Server output goes here (default: next to the database). */
  logFile?: string;
  /** How long to wait for the server to answer (default 60 s). */
  readyTimeoutMs?: number;
  /** Dynamic config values (default `DEV_SERVER_DYNAMIC_CONFIG`; the bench compares others). */
  dynamicConfig?: Readonly<Record<string, number | boolean | string>>;
  /** Where a warning goes, e.g. that the server listens beyond this machine (default: stderr). */
  onWarning?: (line: string) => void;
}

const LOOPBACK = new BlockList();
LOOPBACK.addSubnet('127.0.0.0', 8, 'ipv4');
LOOPBACK.addAddress('::1', 'ipv6');
LOOPBACK.addSubnet('::ffff:127.0.0.0', 104, 'ipv6');

/** True when `host` (an address, or `localhost`) is reachable from this machine only. */
export function isLoopbackHost(host: string): boolean {
  const h = host.replace(/^\[|\]$/g, '').toLowerCase();
  if (h === 'localhost' || h.endsWith('.localhost')) return true;
  const family = net.isIP(h);
  return family !== 0 && LOOPBACK.check(h, family === 4 ? 'ipv4' : 'ipv6');
}

/**
 * The warning for a dev server that listens on `ip` beyond this machine (every interface for
 * 0.0.0.0 and ::, else that address's network), or null on a loopback address. The dev server
 * has no authentication: whoever reaches it can start runs, whose agent commands workers execute.
 */
export function exposureWarning(ip: string, port: number, uiPort: number | null): string | null {
  if (isLoopbackHost(ip)) return null;
  const everywhere = ip === '0.0.0.0' || ip === '::' || ip === '[::]';
  const where = everywhere ? `every network interface (${ip})` : `${ip}, which is not a loopback address`;
  const ports = uiPort === null ? `port ${port}` : `port ${port} (and the Web UI on ${uiPort})`;
  return (
    `the Temporal dev server listens on ${where}: anyone who can reach this machine on ${ports} can start runs, ` +
    `whose agent commands the workers execute, and read, signal or cancel every run; it has no authentication. ` +
    `To keep it on this machine, set TEMPORAL_ADDRESS=127.0.0.1:${port} (or pass --ip 127.0.0.1). ` +
    'To share it on purpose, keep the port behind a firewall and start workers with --require-signed-runs.'
  );
}

export interface DevServer {
  address: string;
  uiUrl: string | null;
  namespace: string;
  pid: number;
  logFile: string;
  /** Resolves with the exit code (or null on a signal) when the server process ends. */
  exited: Promise<number | null>;
  /** SIGTERM, then SIGKILL after `graceMs`; resolves when the process is gone. */
  stop(graceMs?: number): Promise<void>;
}

/** True when something accepts TCP connections on ip:port. */
export function isListening(ip: string, port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = net.connect({ host: ip, port });
    socket.setTimeout(1000);
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('timeout', () => {
      socket.destroy();
      resolve(false);
    });
    socket.once('error', () => resolve(false));
  });
}

/**
 * A TCP port that was free a moment ago on 127.0.0.1, held back from the kernel's next picks.
 * A port read from a closed listener is the kernel's to hand out again, to the next `listen(0)`
 * or outgoing connection, before its new owner binds it. So a connection is made to it and
 * closed from the listening side first: that side's socket stays in TIME_WAIT for a minute, which
 * keeps the port out of the kernel's ephemeral picks while a server that binds it on purpose
 * (with SO_REUSEADDR, as Go and Node both set) still can. The same trick as Temporal's own SDKs.
 */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const addr = srv.address();
      if (typeof addr !== 'object' || !addr) {
        srv.close();
        reject(new Error('no port'));
        return;
      }
      const done = (): void => void srv.close(() => resolve(addr.port));
      srv.once('connection', (accepted) => {
        accepted.once('close', () => {
          client.destroy();
          done();
        });
        accepted.end();
      });
      const client = net.connect({ host: '127.0.0.1', port: addr.port });
      client.once('error', () => done());
      // The client answers the listening side's FIN only after it has sent it: TIME_WAIT lands there.
      client.once('end', () => client.end());
    });
  });
}

/** Polls until the frontend answers for `namespace`, or throws after `timeoutMs`. */
export async function waitForServer(
  address: string,
  namespace: string,
  timeoutMs: number,
  alive: () => boolean = () => true,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let lastError = '';
  while (Date.now() < deadline) {
    if (!alive()) throw new Error('the server process exited while starting');
    try {
      const conn = await Connection.connect({ address, connectTimeout: 2000 });
      try {
        await conn.workflowService.describeNamespace({ namespace });
        return;
      } finally {
        await conn.close();
      }
    } catch (err) {
      lastError = err instanceof Error ? err.message : String(err);
    }
    await new Promise((r) => setTimeout(r, 250));
  }
  throw new Error(`the Temporal server at ${address} did not answer within ${timeoutMs} ms: ${lastError}`);
}

const lastLines = (file: string, n: number): string => {
  try {
    return readFileSync(file, 'utf8').trimEnd().split('\n').slice(-n).join('\n');
  } catch {
    return '';
  }
};

/**
 * How many times a server that fails to start for a passing reason is started again. Nothing is
 * written to the database by then, so starting again is safe. The passing reasons:
 * - a Go panic: the server (1.32) has a start-up race, its worker service can begin serving gRPC
 *   on a listener that is not there yet (`grpc.(*Server).Serve(…, {0x0, 0x0})`), seen about once
 *   in a few hundred starts on a loaded machine;
 * - a port the CLI chose itself (the HTTP API's and the metrics', "a random free port") taken by
 *   another process between the CLI's pick and the server's bind; the next start picks again.
 * Any other failure (a port the caller chose in use, a bad flag, a timeout) is reported at once.
 */
export const START_ATTEMPTS = 3;

/** The ports the server's output since `offset` says were already in use. */
const portsInUseSince = (logFile: string, offset: number): number[] => {
  try {
    const text = readFileSync(logFile, 'utf8').slice(offset);
    return [...text.matchAll(/listen tcp \S*?:(\d+): bind: address already in use/g)].map((m) => Number(m[1]));
  } catch {
    return [];
  }
};

/** The server's output since `offset` shows a Go runtime panic. */
const panickedSince = (logFile: string, offset: number): boolean => {
  try {
    return /^panic: /m.test(readFileSync(logFile, 'utf8').slice(offset));
  } catch {
    return false;
  }
};

const fileSize = (file: string): number => {
  try {
    return statSync(file).size;
  } catch {
    return 0;
  }
};

export async function startDevServer(opts: DevServerOptions): Promise<DevServer> {
  const ip = opts.ip ?? '127.0.0.1';
  const port = opts.port ?? 7233;
  const uiPort = opts.uiPort ?? port + 1000;
  const namespace = opts.namespace ?? 'default';
  const logFile = opts.logFile ?? path.join(path.dirname(opts.dbFile), 'temporal-server.log');
  const exposed = exposureWarning(ip, port, opts.headless ? null : uiPort);
  if (exposed) (opts.onWarning ?? ((line: string) => process.stderr.write(`vigil: warning: ${line}\n`)))(exposed);
  // The database holds every run's history: private to the user who runs the server.
  for (const dir of new Set([path.dirname(opts.dbFile), path.dirname(logFile)])) {
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    chmodSync(dir, 0o700);
  }

  if (await isListening(ip, port)) {
    throw new Error(`port ${ip}:${port} is already in use (another Temporal server? use --port, or point TEMPORAL_ADDRESS at it)`);
  }
  if (!opts.headless && (await isListening(ip, uiPort))) {
    throw new Error(`UI port ${ip}:${uiPort} is already in use (use --ui-port, or --headless)`);
  }

  const args = [
    'server',
    'start-dev',
    '--db-filename',
    opts.dbFile,
    '--ip',
    ip,
    '--port',
    String(port),
    '--sqlite-pragma',
    'journal_mode=WAL',
    '--sqlite-pragma',
    'synchronous=NORMAL',
    '--log-level',
    'warn',
    ...(namespace !== 'default' ? ['--namespace', namespace] : []),
    ...SEARCH_ATTRIBUTE_FLAGS.flatMap((sa) => ['--search-attribute', sa]),
    ...Object.entries(opts.dynamicConfig ?? DEV_SERVER_DYNAMIC_CONFIG).flatMap(([k, v]) => [
      '--dynamic-config-value',
      `${k}=${JSON.stringify(v)}`,
    ]),
    ...(opts.headless ? ['--headless'] : ['--ui-port', String(uiPort), '--ui-ip', ip]),
  ];
  const address = `${ip}:${port}`;

  for (let attempt = 1; ; attempt++) {
    const offset = fileSize(logFile);
    const out = createWriteStream(logFile, { flags: 'a' });
    out.write(`--- ${new Date().toISOString()} ${opts.cliPath} ${args.join(' ')}\n`);
    const child: ResultPromise = execa(opts.cliPath, args, { stdin: 'ignore', reject: false, buffer: false, all: true });
    child.all?.pipe(out);
    let running = true;
    const exited = child.then((r) => {
      running = false;
      return typeof r.exitCode === 'number' ? r.exitCode : null;
    });
    const flushed = new Promise<void>((resolve) => out.once('close', () => resolve()));

    try {
      // A crash is noticed when it happens, not after the connection attempt in flight times out.
      const ready = waitForServer(address, namespace, opts.readyTimeoutMs ?? 60_000, () => running);
      ready.catch(() => undefined);
      await Promise.race([ready, exited.then(() => Promise.reject(new Error('the server process exited while starting')))]);
    } catch (err) {
      const crashed = !running;
      child.kill('SIGKILL');
      await exited;
      await flushed;
      const chosen = new Set(opts.headless ? [port] : [port, uiPort]);
      const inUse = portsInUseSince(logFile, offset);
      const passing = panickedSince(logFile, offset) || (inUse.length > 0 && inUse.every((p) => !chosen.has(p)));
      if (crashed && attempt < START_ATTEMPTS && passing) continue;
      const detail = lastLines(logFile, 15);
      const tries = attempt > 1 ? ` (attempt ${attempt} of ${START_ATTEMPTS})` : '';
      throw new Error(
        `${err instanceof Error ? err.message : String(err)}${tries}${detail ? `\nserver log (${logFile}):\n${detail}` : ''}`,
      );
    }

    return {
      address,
      uiUrl: opts.headless ? null : `http://${ip === '0.0.0.0' ? 'localhost' : ip}:${uiPort}`,
      namespace,
      pid: child.pid ?? -1,
      logFile,
      exited,
      async stop(graceMs = 10_000) {
        if (!running) return;
        child.kill('SIGTERM');
        const timer = setTimeout(() => child.kill('SIGKILL'), graceMs);
        await exited;
        clearTimeout(timer);
      },
    };
  }
}

export const dbFileExists = (dbFile: string): boolean => existsSync(dbFile);
