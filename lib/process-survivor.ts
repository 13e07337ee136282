/**
 * What a crashed call may leave running: its pid file names the supervisor, the child and the
 * call's environment token (activities/process.ts writes it), and killSurvivor kills what is still
 * theirs before the call runs again.
 */
import { readFileSync, rmSync } from 'node:fs';
import { processStartTime, signalTree } from './process-tree.js';

interface PidRecord {
  pid?: unknown;
  startTime?: unknown;
  token?: unknown;
  supervisor?: { pid?: unknown; startTime?: unknown; shared?: unknown };
}

/** Whether the process `pid` is still the one that started at `startTime`. */
function sameProcess(pid: unknown, startTime: unknown): pid is number {
  return typeof pid === 'number' && typeof startTime === 'string' && processStartTime(pid) === startTime;
}

/**
 * Kills what the record in `pidFile` names, if still alive: the supervisor, the child's process
 * group and every token holder (a pid reused by another process is left alone). Removes the file.
 */
export function killSurvivor(pidFile: string): boolean {
  let rec: PidRecord;
  try {
    rec = JSON.parse(readFileSync(pidFile, 'utf8')) as PidRecord;
  } catch {
    return false;
  }
  rmSync(pidFile, { force: true });
  if (typeof rec !== 'object' || rec === null) return false;
  // A daemon supervises other calls too: it is left running (it records nothing for a call
  // whose state file a later call took over, supervised-call.ts).
  const sup = rec.supervisor?.shared !== true && sameProcess(rec.supervisor?.pid, rec.supervisor?.startTime);
  if (sup) process.kill(rec.supervisor?.pid as number, 'SIGKILL');
  const token = typeof rec.token === 'string' ? rec.token : '';
  const alive = sameProcess(rec.pid, rec.startTime); // else gone, or the pid was reused
  const strays = signalTree(alive ? (rec.pid as number) : undefined, token, 'SIGKILL');
  return sup || alive || strays > 0;
}
