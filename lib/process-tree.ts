/**
 * Finding and killing every process an agent call started, including those that left its process
 * group (`setsid`, double-fork daemons). Each call gets a random token in its environment
 * (`VIGIL_PROCESS_TOKEN`); descendants inherit it, so scanning `/proc/<pid>/environ` finds them
 * wherever they moved. Linux only; elsewhere the process group is all that is killed.
 */
import { closeSync, openSync, readdirSync, readFileSync, readlinkSync, readSync, rmSync } from 'node:fs';

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

/** The pid namespace of `pid` (`pid:[4026532…]`), or null (gone, or not ours to read). */
export function pidNamespaceOf(pid: number | string): string | null {
  try {
    return readlinkSync(`/proc/${pid}/ns/pid`);
  } catch {
    return null;
  }
}

/**
 * What belongs to one call whose direct child has exited: its process group (led by the child's
 * pid), the carriers of its token, the processes of its sandbox's pid namespace.
 */
export interface CallTree {
  pid?: number | undefined;
  token: string;
  /** A sandbox's pid namespace (`pid:[…]`, bubblewrap's `--json-status-fd`); null: none known. */
  pidNamespace?: string | null;
}

/**
 * The live processes of `tree` (zombies left out: a zombie runs nothing and writes nothing; it
 * only waits for its parent). One scan of /proc.
 */
export function liveMembers(tree: CallTree): number[] {
  let entries: string[];
  try {
    entries = readdirSync('/proc');
  } catch {
    return [];
  }
  const needle = tree.token ? Buffer.from(`${TOKEN_VAR}=${tree.token}\0`) : null;
  const found: number[] = [];
  for (const e of entries) {
    if (e.charCodeAt(0) > 57 || !/^\d+$/.test(e)) continue;
    const pid = Number(e);
    if (pid === process.pid) continue;
    const stat = readProcFile(e, 'stat')?.toString('latin1');
    if (stat === undefined) continue;
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    if (fields[0] === 'Z' || fields[0] === 'X') continue;
    const member =
      (tree.pid !== undefined && Number(fields[2]) === tree.pid) ||
      (tree.pidNamespace ? pidNamespaceOf(e) === tree.pidNamespace : false) ||
      (needle !== null && readProcFile(e, 'environ')?.includes(needle) === true);
    if (member) found.push(pid);
  }
  return found;
}

/**
 * Kills every live process of `tree` and waits until none is left (or `timeoutMs` passed): a
 * call's end is awaited, so that nothing of it still writes when the next step reads the tree. A
 * sandbox's namespace dies with bubblewrap, but bubblewrap exits as soon as its command has, while
 * the kernel is still killing the rest. Returns the processes still alive at the deadline.
 */
export async function awaitTreeGone(tree: CallTree, timeoutMs = 5000): Promise<number[]> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    const live = liveMembers(tree);
    if (live.length === 0 || Date.now() >= until) return live;
    for (const p of live) signal(p, 'SIGKILL');
    await new Promise((r) => setTimeout(r, 10));
  }
}

/** The descriptor a sandboxed call's bubblewrap writes its status to (`--json-status-fd`): its spawner gives it a pipe there. */
export const SANDBOX_STATUS_FD = 3;

/**
 * Reads bubblewrap's status lines (`{ "child-pid": …, "pid-namespace": 4026532… }`, then
 * `{ "exit-code": … }`) from the pipe on `SANDBOX_STATUS_FD`; returns the sandbox's pid namespace
 * (`pid:[…]`) once seen, else null.
 */
export function sandboxStatusReader(): { push: (chunk: Buffer) => void; pidNamespace: () => string | null } {
  let pending = '';
  let ns: string | null = null;
  return {
    push: (chunk) => {
      pending = (pending + chunk.toString('latin1')).slice(-4096);
      const m = /"pid-namespace"\s*:\s*(\d+)/.exec(pending);
      if (m && ns === null) ns = `pid:[${m[1]}]`;
    },
    pidNamespace: () => ns,
  };
}

/** A supervised call's state file, as far as killing what it names goes (lib/supervisor-state.ts has the whole). */
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
