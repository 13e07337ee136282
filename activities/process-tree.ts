/**
 * Finding and killing every process an agent call started, including those that left its process
 * group (`setsid`, double-fork daemons). Each call gets a random token in its environment
 * (`VIGIL_PROCESS_TOKEN`); descendants inherit it, so scanning `/proc/<pid>/environ` finds them
 * wherever they moved. Linux only; elsewhere the process group is all that is killed.
 */
import { closeSync, openSync, readdirSync, readSync } from 'node:fs';

export const TOKEN_VAR = 'VIGIL_PROCESS_TOKEN';

/** Reused by every read below: /proc files report no size, so `readFileSync` would allocate 64 KiB per file. */
let procBuffer = Buffer.allocUnsafe(64 * 1024);

/**
 * The whole content of `/proc/<pid>/<name>`, or null when it cannot be read (gone, a kernel
 * thread, not ours). The returned bytes share one buffer: use them before the next call.
 * A scan reads one of these per process on the machine, for every call that ends, so it costs
 * three system calls and no allocation per process.
 */
export function readProcFile(pid: number | string, name: string): Buffer | null {
  let fd: number;
  try {
    fd = openSync(`/proc/${pid}/${name}`, 'r');
  } catch {
    return null;
  }
  try {
    let length = 0;
    for (;;) {
      if (length === procBuffer.length) {
        const bigger = Buffer.allocUnsafe(procBuffer.length * 2);
        procBuffer.copy(bigger, 0, 0, length);
        procBuffer = bigger;
      }
      const n = readSync(fd, procBuffer, length, procBuffer.length - length, null);
      if (n === 0) return procBuffer.subarray(0, length);
      length += n;
    }
  } catch {
    return null;
  } finally {
    closeSync(fd);
  }
}

/** Pids (other than this process) whose environment carries `token`. */
export function processesWithToken(token: string): number[] {
  if (!token) return [];
  let entries: string[];
  try {
    entries = readdirSync('/proc');
  } catch {
    return [];
  }
  const needle = Buffer.from(`${TOKEN_VAR}=${token}\0`);
  const found: number[] = [];
  for (const e of entries) {
    if (!/^\d+$/.test(e)) continue;
    const pid = Number(e);
    if (pid === process.pid) continue;
    if (readProcFile(e, 'environ')?.includes(needle)) found.push(pid);
  }
  return found;
}

function signal(target: number, sig: NodeJS.Signals): boolean {
  try {
    process.kill(target, sig);
    return true;
  } catch {
    return false;
  }
}

/**
 * Signals the process group led by `pid` (or the process itself) and every process carrying
 * `token`. Returns how many token carriers (the child itself excluded) were found alive.
 */
export function signalTree(pid: number | undefined, token: string, sig: NodeJS.Signals): number {
  const carriers = processesWithToken(token).filter((p) => p !== pid);
  if (pid !== undefined && !signal(-pid, sig)) signal(pid, sig);
  for (const p of carriers) signal(p, sig);
  return carriers.length;
}

/** Start time of a process in clock ticks since boot (field 22 of /proc/<pid>/stat), or null. */
export function processStartTime(pid: number): string | null {
  const stat = readProcFile(pid, 'stat')?.toString('latin1');
  if (stat === undefined) return null;
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  // A zombie has ended; it only waits for its parent to collect its status.
  if (fields[0] === 'Z' || fields[0] === 'X') return null;
  return fields[19] ?? null;
}
