/**
 * The worker's side of the supervisor daemon (supervisor-daemon.ts): starting it when nothing
 * answers at its socket (lib/supervisor-location.ts says where), and opening a connection for one
 * call. VIGIL_SUPERVISOR=per-call turns the daemon off (a Node process per call, as
 * process-supervisor.ts); so does any failure to start or reach it, with one warning.
 */
import { spawn } from 'node:child_process';
import { closeSync, lstatSync, mkdirSync, openSync } from 'node:fs';
import { createConnection, type Socket } from 'node:net';
import path from 'node:path';
import { log } from '@temporalio/activity';
import { frameReader, FRAME_MESSAGE, type DaemonHello } from '../lib/supervisor-state.js';
import {
  compiledModule,
  daemonSocketPath,
  setSupervisorSettings,
  supervisorIdleMs,
  supervisorMode,
  type SupervisorSettings,
} from '../lib/supervisor-location.js';

/** After a failure to reach the daemon, calls get their own supervisor until then. */
let unusableUntil = 0;
let warned = false;
const RETRY_DAEMON_MS = 60_000;

/** Overrides where the daemon lives and whether it is used (tests; a worker's options). */
export function configureSupervisor(over: Partial<SupervisorSettings>): void {
  setSupervisorSettings(over);
  unusableUntil = 0;
}

/** Creates the daemon's folder owner-only, and refuses one that is not (another user could reach the socket). */
function privateDir(dir: string): void {
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const st = lstatSync(dir);
  const uid = typeof process.getuid === 'function' ? process.getuid() : st.uid;
  if (!st.isDirectory() || st.uid !== uid || (st.mode & 0o077) !== 0) {
    throw new Error(`${dir} must be a folder only its owner (uid ${uid}) can enter (chmod 700 ${dir}), or set VIGIL_SUPERVISOR_DIR`);
  }
}

/** A connection to the daemon and its greeting; the first frames after the greeting are replayed to `onFrame`. */
export interface DaemonConnection {
  socket: Socket;
  hello: DaemonHello;
}

/** Connects and waits for the greeting; rejects when nothing answers. */
function connectOnce(socketPath: string, onFrame: (type: number, payload: Buffer) => void): Promise<DaemonConnection> {
  return new Promise((resolve, reject) => {
    const socket = createConnection(socketPath);
    let hello: DaemonHello | undefined;
    const timer = setTimeout(() => {
      socket.destroy();
      reject(new Error(`the supervisor daemon at ${socketPath} did not answer`));
    }, 5000);
    const read = frameReader((type, payload) => {
      if (hello === undefined && type === FRAME_MESSAGE) {
        hello = JSON.parse(payload.toString('utf8')) as DaemonHello;
        clearTimeout(timer);
        socket.off('error', reject);
        resolve({ socket, hello });
        return;
      }
      onFrame(type, payload);
    });
    socket.on('data', read);
    socket.once('error', (err) => {
      clearTimeout(timer);
      reject(err);
    });
  });
}

let starting: Promise<void> | undefined;

/** Starts the daemon and waits until it listens (or says another one does). */
function startDaemon(socketPath: string): Promise<void> {
  starting ??= new Promise<void>((resolve, reject) => {
    const dir = path.dirname(socketPath);
    privateDir(dir);
    const errFd = openSync(path.join(dir, 'daemon.log'), 'a', 0o600);
    const idle = supervisorIdleMs();
    const child = spawn(process.execPath, [compiledModule('supervisor-daemon.js'), socketPath, ...(idle !== null ? [String(idle)] : [])], {
      cwd: '/',
      // The calls' environments travel in their specs: none of the worker's (NODE_OPTIONS...) applies here.
      env: { PATH: process.env.PATH ?? '/usr/bin:/bin' },
      detached: true, // outlives the worker: its own session and process group
      stdio: ['ignore', 'pipe', errFd],
    });
    closeSync(errFd);
    let said = '';
    child.stdout?.setEncoding('utf8');
    child.stdout?.on('data', (d: string) => {
      said += d;
      if (/^(ready|running)\n/.test(said)) {
        child.stdout?.destroy();
        child.unref();
        resolve();
      }
    });
    child.once('error', reject);
    child.once('exit', (code) =>
      reject(new Error(`the supervisor daemon exited with ${code} before it listened (see ${path.join(dir, 'daemon.log')})`)),
    );
  }).finally(() => {
    starting = undefined;
  });
  return starting;
}

/**
 * A connection to the daemon for one call, starting the daemon when needed; null when the daemon
 * is off or cannot be reached (the call then gets a supervisor of its own).
 */
export async function connectDaemon(onFrame: (type: number, payload: Buffer) => void): Promise<DaemonConnection | null> {
  if (supervisorMode() !== 'daemon' || Date.now() < unusableUntil) return null;
  try {
    const socketPath = daemonSocketPath();
    try {
      return await connectOnce(socketPath, onFrame);
    } catch {
      /* not running yet, or a stale socket */
    }
    await startDaemon(socketPath);
    return await connectOnce(socketPath, onFrame);
  } catch (err) {
    unusableUntil = Date.now() + RETRY_DAEMON_MS;
    if (!warned) {
      warned = true;
      log.warn('the supervisor daemon cannot be used; each call gets a supervisor process of its own (slower) for a minute', {
        error: err instanceof Error ? err.message : String(err),
      });
    }
    return null;
  }
}
