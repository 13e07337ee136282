/**
 * The per-call process supervisor: a small Node process (node built-ins only) that runs one child
 * for an activity and outlives the worker that started it. It is the fallback for when the
 * supervisor daemon (supervisor-daemon.ts, one process for all calls) cannot be reached; both
 * supervise a call the same way (supervised-call.ts). The worker spawns it detached (its own
 * session and process group) and writes the call's spec on its stdin; the child's output goes to
 * the log and to the worker (fd 1), control messages to fd 3, one JSON object a line.
 * Nothing may import this module: importing it runs the supervisor.
 *
 * It never lives longer than its child: it exits once the child has exited and its leftovers are
 * killed. SIGTERM (the worker's cancellation: STOP --now, worker shutdown) kills the tree at once.
 */
import { Socket } from 'node:net';
import { processStartTime } from './process-tree.js';
import { superviseCall } from './supervised-call.js';
import type { SupervisorMessage, SupervisorSpec } from './supervisor-state.js';

function readStdin(): Promise<string> {
  return new Promise((resolve, reject) => {
    const parts: Buffer[] = [];
    process.stdin.on('data', (d: Buffer) => parts.push(d));
    process.stdin.on('end', () => resolve(Buffer.concat(parts).toString('utf8')));
    process.stdin.on('error', reject);
  });
}

async function supervise(): Promise<void> {
  // The worker may cancel as soon as it hears the child started: listen before spawning. (A
  // SIGTERM that came before the listener would end this process and orphan the tree.)
  let cancelled = false;
  let onCancel = (): void => {};
  process.on('SIGTERM', () => {
    cancelled = true;
    onCancel();
  });
  // Detached from any terminal; a hangup or interrupt meant for the worker is not for the call.
  process.on('SIGINT', () => {});
  process.on('SIGHUP', () => {});

  const spec = JSON.parse(await readStdin()) as SupervisorSpec;
  // The worker is gone when these fail: the call goes on, recorded in the log and the state file.
  const toWorker = new Socket({ fd: 3, readable: false, writable: true });
  let workerGone = false;
  const onGone = (): void => {
    workerGone = true;
  };
  toWorker.on('error', onGone);
  process.stdout.on('error', onGone);

  const call = superviseCall(
    spec,
    { pid: process.pid, startTime: processStartTime(process.pid) },
    {
      output: (chunk) => {
        if (!workerGone) process.stdout.write(chunk);
      },
      tell: (m: SupervisorMessage) => {
        if (!workerGone) toWorker.write(`${JSON.stringify(m)}\n`);
      },
    },
  );
  onCancel = () => call.cancel();
  if (cancelled) onCancel();
  await call.done;
  if (!workerGone) process.stdout.end();
  toWorker.end();
  // Nothing else may keep a finished supervisor alive.
  setTimeout(() => process.exit(0), 2000).unref();
}

supervise().catch((err: unknown) => {
  process.stderr.write(`vigil process supervisor: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
  process.exit(70);
});
