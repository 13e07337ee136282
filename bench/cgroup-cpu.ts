/**
 * The CPU of every process a bench starts, read from a control group of its own: the bench moves
 * itself into a new cgroup (v1 `cpuacct`, else v2), and every process it starts from then on — the
 * server, the event store, the git helper, the supervisor daemon, bubblewrap and what runs in the
 * sandbox — is counted there, whoever reaps it. /proc cannot see all of them: bubblewrap's parent
 * exits on the exit status the sandbox's init reports without reaping that init, which is then
 * reaped outside the bench's tree (by the machine's init), and its CPU — the command's, the
 * bridge's — with it. Where no cgroup can be made (not root, a cgroup v2 tree without
 * delegation) this answers null and the bench counts from /proc as before, and says so.
 */
import { appendFileSync, existsSync, mkdirSync, readFileSync, rmdirSync } from 'node:fs';
import path from 'node:path';

export interface CpuCgroup {
  /** Where it is, for the report. */
  readonly path: string;
  /** CPU seconds of every process in it so far (those gone included). */
  seconds(): number;
  /** Moves what is left in it back to where the bench was, and removes it. */
  close(): void;
}

function ownCgroup(controller: string | null): string | null {
  try {
    for (const line of readFileSync('/proc/self/cgroup', 'utf8').split('\n')) {
      const [, controllers, where] = line.split(':');
      if (where === undefined) continue;
      if (controller === null ? controllers === '' : (controllers ?? '').split(',').includes(controller)) return where;
    }
  } catch {
    /* not Linux */
  }
  return null;
}

function tryGroup(base: string, own: string, read: (dir: string) => number): CpuCgroup | null {
  const parent = path.join(base, own);
  const dir = path.join(parent, `vigil-bench-${process.pid}`);
  try {
    if (!existsSync(base)) return null;
    mkdirSync(dir);
    appendFileSync(path.join(dir, 'cgroup.procs'), `${process.pid}\n`);
    read(dir);
  } catch {
    try {
      rmdirSync(dir);
    } catch {
      /* never made */
    }
    return null;
  }
  return {
    path: dir,
    seconds: () => read(dir),
    close: () => {
      if (!existsSync(dir)) return;
      try {
        for (const pid of readFileSync(path.join(dir, 'cgroup.procs'), 'utf8').split('\n').filter(Boolean))
          appendFileSync(path.join(parent, 'cgroup.procs'), `${pid}\n`);
        rmdirSync(dir);
      } catch {
        /* a process on its way out: the empty group stays */
      }
    },
  };
}

/** A cgroup of the bench's own, or null where none can be made here. */
export function openCpuCgroup(): CpuCgroup | null {
  if (process.platform !== 'linux') return null;
  const v1 = ownCgroup('cpuacct');
  if (v1 !== null) {
    const g = tryGroup('/sys/fs/cgroup/cpuacct', v1, (d) => Number(readFileSync(path.join(d, 'cpuacct.usage'), 'utf8')) / 1e9);
    if (g) return g;
  }
  const v2 = ownCgroup(null);
  if (v2 !== null) {
    const base = existsSync('/sys/fs/cgroup/cgroup.controllers') ? '/sys/fs/cgroup' : '/sys/fs/cgroup/unified';
    const usage = (d: string): number => {
      const m = /^usage_usec (\d+)$/m.exec(readFileSync(path.join(d, 'cpu.stat'), 'utf8'));
      if (!m) throw new Error('no usage_usec');
      return Number(m[1]) / 1e6;
    };
    return tryGroup(base, v2, usage);
  }
  return null;
}
