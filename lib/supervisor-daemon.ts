/**
 * The supervisor daemon: one long-lived Node process (node built-ins only) that supervises the
 * agent calls, gate commands and other children of the workers on this machine, so a call costs
 * a connection on a unix socket instead of starting a Node process. Like the per-call supervisor
 * it replaces (process-supervisor.ts, still the fallback) it runs in a session of its own and
 * outlives the worker that started it: a worker that crashes loses nothing, its retried attempt
 * re-attaches to the running child or collects its result from the call's state file
 * (activities/process.ts). Every call is supervised as supervised-call.ts does it.
 *
 * Usage (by the worker, supervisor-client.ts): `node supervisor-daemon.js <socket> [idle-ms]`. It prints
 * `ready` once it listens (or `running` when another daemon already answers on the socket, and
 * exits). It exits after `idle-ms` (default a minute) with no call and no connection. SIGTERM or SIGINT kill every
 * call's tree without recording an exit (the calls are run again, as after a lost machine).
 * The socket is created owner-only inside an owner-only folder: whoever connects runs commands.
 * Nothing may import this module: importing it runs the daemon.
 */
import { chmodSync, rmSync } from 'node:fs';
import { createConnection, createServer, type Socket } from 'node:net';
import { processStartTime } from './process-tree.js';
import { superviseCall, type SupervisedCall } from './supervised-call.js';
import { frame, FRAME_DATA, FRAME_MESSAGE, lineReader, type DaemonMessage, type DaemonRequest } from './supervisor-state.js';

/** With no call and no connection for this long, the daemon exits (the next call starts another). */
const DEFAULT_IDLE_MS = 60_000;

const socketPath = process.argv[2];
const IDLE_MS = process.argv[3] ? Number(process.argv[3]) : DEFAULT_IDLE_MS;
if (!socketPath || !(IDLE_MS > 0)) {
  process.stderr.write('usage: supervisor-daemon.js <socket> [idle-ms]\n');
  process.exit(64);
}
const self = { pid: process.pid, startTime: processStartTime(process.pid), shared: true };
/** The calls running, by state file: a later call of the same state file takes over from an earlier one. */
const calls = new Map<string, SupervisedCall>();
let connections = 0;
let idle: NodeJS.Timeout | undefined;

function log(text: string): void {
  process.stderr.write(`${new Date().toISOString()} vigil supervisor daemon ${process.pid}: ${text}\n`);
}

function checkIdle(): void {
  clearTimeout(idle);
  if (calls.size === 0 && connections === 0) idle = setTimeout(() => shutdown('idle'), IDLE_MS);
}

function shutdown(why: string): void {
  log(`exiting (${why}); ${calls.size} call(s) running`);
  // The calls' trees go with the daemon; nothing is recorded, so each call is run again.
  for (const call of calls.values()) call.abandon();
  server.close();
  try {
    rmSync(socketPath as string, { force: true });
  } catch {
    /* gone */
  }
  setTimeout(() => process.exit(0), calls.size ? 300 : 0);
}

function serve(conn: Socket): void {
  connections++;
  clearTimeout(idle);
  let gone = false;
  let call: SupervisedCall | undefined;
  const send = (type: number, payload: Buffer): void => {
    if (!gone) conn.write(frame(type, payload));
  };
  const tell = (m: DaemonMessage): void => send(FRAME_MESSAGE, Buffer.from(JSON.stringify(m)));
  conn.on('error', () => {
    gone = true;
  });
  conn.on('close', () => {
    gone = true;
    connections--;
    checkIdle();
  });
  conn.on(
    'data',
    lineReader((line) => {
      let req: DaemonRequest;
      try {
        req = JSON.parse(line) as DaemonRequest;
      } catch {
        log('a request that is not JSON; connection closed');
        conn.destroy();
        return;
      }
      if (req.t === 'cancel') {
        call?.cancel();
        return;
      }
      if (req.t !== 'run' || call) return;
      const spec = req.spec;
      calls.get(spec.statePath)?.abandon();
      const started = superviseCall(spec, self, { output: (chunk) => send(FRAME_DATA, chunk), tell });
      call = started;
      calls.set(spec.statePath, started);
      void started.done.then(() => {
        if (calls.get(spec.statePath) === started) calls.delete(spec.statePath);
        if (!gone) conn.end();
        checkIdle();
      });
    }),
  );
  tell({ t: 'hello', pid: self.pid, startTime: self.startTime });
}

const server = createServer(serve);

/** Listens on the socket unless another daemon answers there; a stale socket file is replaced. */
function listen(): void {
  const probe = createConnection(socketPath as string);
  probe.once('connect', () => {
    probe.destroy();
    process.stdout.write('running\n');
    process.exit(0);
  });
  probe.once('error', () => {
    probe.destroy();
    rmSync(socketPath as string, { force: true });
    server.once('error', (err: NodeJS.ErrnoException) => {
      // Another daemon started in between: it serves.
      if (err.code === 'EADDRINUSE') {
        process.stdout.write('running\n');
        process.exit(0);
      }
      log(`cannot listen on ${socketPath}: ${err.message}`);
      process.exit(70);
    });
    server.listen(socketPath, () => {
      chmodSync(socketPath as string, 0o600);
      process.stdout.write('ready\n');
      checkIdle();
    });
  });
}

process.on('SIGTERM', () => shutdown('SIGTERM'));
process.on('SIGINT', () => shutdown('SIGINT'));
// Detached from any terminal: a hangup meant for the worker is not for the calls.
process.on('SIGHUP', () => {});
// One call's failure must not take the others with it.
process.on('uncaughtException', (err) => log(`uncaught: ${err.stack ?? err.message}`));
listen();
