/**
 * One sandboxed call's limits, on the supervisor's side (docs/security.md, Limits inside the
 * sandbox): the call runs in a control group of its own (sandbox-cgroups.ts) that a small shell
 * joins before it execs bubblewrap, so nothing the call starts is ever outside it; the group is
 * looked at a few times a second, and a call that reached its pid limit or lost a process to the
 * OOM killer is ended, with the reason. Where no group can be made, the fallback: RLIMIT_DATA
 * (per process), a watch of the call's pid namespace (its tasks and memory, twice a second) that
 * ends the call past a limit, and `nice`. Node built-ins only: the supervisor daemon runs it.
 *
 * Not RLIMIT_NPROC: it counts every process of the worker's user (the worker's own, Temporal's
 * and Postgres's when they share it), so a sandbox at its limit stops them forking too, and the
 * kernel never applies it to root (uid 0 outside the sandbox's user namespace, which is what an
 * agent of a root worker is). Not RLIMIT_AS: it counts address space reserved and never touched
 * (V8 and Go reserve gigabytes), so it breaks programs long before they use memory.
 */
import { existsSync, readdirSync, readlinkSync } from 'node:fs';
import { readProcFile } from './process-tree.js';
import { CallGroup, cgroupProbe, type CgroupSettings } from './sandbox-cgroups.js';

const MIB = 1024 * 1024;

/** What the worker hands the supervisor: the call's limits (0: none) and who the reason names. */
export interface CallLimitsSpec {
  pids: number;
  memoryMb: number;
  cpuWeight: number;
  /** "the agent", "the test run", "the gate tool". */
  subject: string;
  /** The worker's VIGIL_SANDBOX_CGROUP and VIGIL_SANDBOX_LIMITS=fallback (the supervisor's own environment is bare). */
  cgroup?: string;
  fallback?: boolean;
}

export interface LimitHit {
  kind: 'pids' | 'memory';
  /** Tasks, or bytes, the call reached (null: the kernel does not keep it). */
  used: number | null;
  /** The limit: tasks, or MiB. */
  limit: number;
  /** Seen by the fallback's watch (no cgroup): not held by the kernel, so the call may have gone past it. */
  watched: boolean;
}

export interface LimitsOutcome {
  /** How the call was limited, in one line. */
  applied: string;
  hit: LimitHit | null;
  /** Why a limit ended the call (limitReason), else null. */
  reason: string | null;
}

const size = (bytes: number): string =>
  bytes >= 1024 * MIB ? `${(bytes / (1024 * MIB)).toFixed(1)} GiB` : `${Math.round(bytes / MIB)} MiB`;

/** Why a limit ended the call, in one line: "the agent started 4096 processes: pid limit (sandboxPids=4096, threads count)". */
export function limitReason(hit: LimitHit, subject: string): string {
  const watched = hit.watched ? "; seen by Vigil's watch, no cgroup here" : '';
  if (hit.kind === 'pids')
    return `${subject} started ${hit.used ?? hit.limit} processes: pid limit (sandboxPids=${hit.limit}, threads count${watched})`;
  return `${subject} used ${size(hit.used ?? hit.limit * MIB)}: memory limit (sandboxMemoryMb=${hit.limit}${watched})`;
}

/** The niceness that stands for a CPU weight where no cgroup can (weight 100 is nice 0; each step of nice is ×1.25). */
export function niceFor(weight: number): number {
  return weight >= 100 ? 0 : Math.min(19, Math.round(Math.log(100 / weight) / Math.log(1.25)));
}

/** The shell that puts the call in its limits, then execs it: joins each group, sets RLIMIT_DATA, execs (through `nice`). */
export function limitedCommand(
  file: string,
  args: readonly string[],
  w: { procs: readonly string[]; dataKb: number | null; nice: { bin: string; n: number } | null },
): { file: string; args: string[] } {
  const script = [
    'while [ "$1" != -- ]; do echo $$ > "$1" || exit 125; shift; done; shift',
    ...(w.dataKb !== null ? [`ulimit -d ${Math.floor(w.dataKb)} || exit 125`] : []),
    'exec "$@"',
  ].join('; ');
  return {
    file: '/bin/sh',
    args: ['-c', script, 'vigil-limits', ...w.procs, '--', ...(w.nice ? [w.nice.bin, '-n', String(w.nice.n)] : []), file, ...args],
  };
}

/** The pid namespace of `pid` (`pid:[4026532…]`), or null. */
function pidNamespace(pid: number | string): string | null {
  try {
    return readlinkSync(`/proc/${pid}/ns/pid`);
  } catch {
    return null;
  }
}

/** The tasks and anonymous memory of every process in the pid namespace `ns` (a scan of /proc). */
export function namespaceUsage(ns: string): { tasks: number; bytes: number } {
  let tasks = 0;
  let kb = 0;
  for (const e of readdirSync('/proc')) {
    if (e.charCodeAt(0) > 57 || pidNamespace(e) !== ns) continue;
    const status = readProcFile(e, 'status')?.toString('latin1') ?? '';
    tasks += Number(/^Threads:\s+(\d+)/m.exec(status)?.[1] ?? 0);
    kb += Number(/^RssAnon:\s+(\d+)/m.exec(status)?.[1] ?? 0);
  }
  return { tasks, bytes: kb * 1024 };
}

/** The child of `parent` in a pid namespace other than ours: the sandbox's init, under bubblewrap. */
function sandboxInit(parent: number): number | null {
  const own = pidNamespace('self');
  const kids = readProcFile(parent, 'task/' + String(parent) + '/children')?.toString('latin1');
  const list = kids !== undefined ? kids.split(' ').filter(Boolean) : readdirSync('/proc').filter((e) => /^\d+$/.test(e));
  for (const e of list) {
    const stat = readProcFile(e, 'stat')?.toString('latin1');
    if (!stat || Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]) !== parent) continue;
    const ns = pidNamespace(e);
    if (ns !== null && ns !== own) return Number(e);
  }
  return null;
}

function findNice(): string | null {
  for (const p of ['/usr/bin/nice', '/bin/nice']) if (existsSync(p)) return p;
  return null;
}

/** One call's limits, from before its start to its end. */
export class CallLimiter {
  private group: CallGroup | null = null;
  private child: number | null = null;
  private ns: string | null = null;
  private hit: LimitHit | null = null;
  /** The fallback's `nice`, where it is installed. */
  private nice: { bin: string; n: number } | null = null;
  readonly applied: string;
  /** How often `check` is worth calling. */
  readonly intervalMs: number;

  /** Makes the call's group (`call-<supervisor pid>-<token>`), or settles for the fallback. */
  constructor(
    readonly spec: CallLimitsSpec,
    token: string,
  ) {
    let probe: ReturnType<typeof cgroupProbe>;
    try {
      probe = cgroupProbe({ cgroup: spec.cgroup, fallback: spec.fallback });
    } catch (e) {
      // Never the call's failure: it gets the fallback, which says why.
      probe = { base: null, problem: `the cgroups could not be probed (${e instanceof Error ? e.message : String(e)})` };
    }
    let problem = probe.problem;
    if (probe.base) {
      try {
        this.group = CallGroup.open(probe.base, `call-${process.pid}-${token.slice(0, 12)}`, {
          pids: spec.pids,
          memoryBytes: spec.memoryMb * MIB,
          cpuWeight: spec.cpuWeight,
        });
      } catch (e) {
        problem = `the call's cgroup could not be made (${(e as NodeJS.ErrnoException).code ?? String(e)})`;
      }
    }
    const tasks = spec.pids > 0 ? `${spec.pids} tasks` : 'no task limit';
    const memory = spec.memoryMb > 0 ? `${spec.memoryMb} MiB` : 'no memory limit';
    if (this.group) {
      const cpu = this.group.dirs.cpu ? `cpu weight ${spec.cpuWeight}` : 'no cpu share (no cpu controller)';
      this.applied = `cgroup v${this.group.base.version}: ${tasks}, ${memory}, ${cpu}`;
      this.intervalMs = 250;
    } else {
      const n = niceFor(spec.cpuWeight);
      const bin = n > 0 ? findNice() : null;
      this.nice = bin ? { bin, n } : null;
      this.applied =
        `no cgroup (${(problem ?? '').slice(0, 80)}): ${memory} per process (RLIMIT_DATA); ${tasks} and ${memory} for the call ` +
        `watched twice a second${this.nice ? `; nice ${n}` : ''}`;
      this.intervalMs = 500;
    }
  }

  /** The command that runs `file args` within the limits. */
  wrap(file: string, args: readonly string[]): { file: string; args: string[] } {
    if (this.group) return limitedCommand(file, args, { procs: this.group.procsFiles(), dataKb: null, nice: null });
    return limitedCommand(file, args, { procs: [], dataKb: this.spec.memoryMb > 0 ? this.spec.memoryMb * 1024 : null, nice: this.nice });
  }

  /** The call started: `pid` is bubblewrap (the fallback's watch finds its namespace from it). */
  started(pid: number): void {
    this.child = pid;
  }

  /** Looks at the call; returns the limit it reached, once. */
  check(): LimitHit | null {
    if (this.hit) return null;
    const s = this.spec;
    if (this.group) {
      const ev = this.group.events();
      const peaks = ev.pidsMax > 0 || ev.oomKills > 0 ? this.group.peaks() : null;
      if (ev.oomKills > 0 && s.memoryMb > 0)
        this.hit = { kind: 'memory', used: peaks?.memoryBytes ?? null, limit: s.memoryMb, watched: false };
      else if (ev.pidsMax > 0 && s.pids > 0) this.hit = { kind: 'pids', used: peaks?.pids ?? null, limit: s.pids, watched: false };
    } else if (this.child !== null && (s.pids > 0 || s.memoryMb > 0)) {
      if (this.ns === null) {
        const init = sandboxInit(this.child);
        this.ns = init === null ? null : pidNamespace(init);
      }
      if (this.ns === null) return null;
      const u = namespaceUsage(this.ns);
      if (s.pids > 0 && u.tasks >= s.pids) this.hit = { kind: 'pids', used: u.tasks, limit: s.pids, watched: true };
      else if (s.memoryMb > 0 && u.bytes >= s.memoryMb * MIB)
        this.hit = { kind: 'memory', used: u.bytes, limit: s.memoryMb, watched: true };
    }
    return this.hit;
  }

  /** Kills every process of the call's group (the fallback has none: its pid namespace dies with bubblewrap). */
  kill(): void {
    this.group?.kill();
  }

  /** After the call: what limited it and what it hit (a last look), its group removed. */
  async close(): Promise<LimitsOutcome> {
    if (this.group) this.check();
    if (this.group) {
      this.group.kill();
      for (let i = 0; i < 20 && !this.group.remove(); i++) await new Promise((r) => setTimeout(r, 50));
    }
    return { applied: this.applied, hit: this.hit, reason: this.hit ? limitReason(this.hit, this.spec.subject) : null };
  }
}

/** What `vigil doctor` says of the limits a worker here would apply: cgroups (where), or the fallback and what it does not hold. */
export function describeLimits(settings: CgroupSettings): { cgroup: boolean; line: string } {
  const probe = cgroupProbe(settings, true);
  if (probe.base) {
    const dirs = [...new Set(Object.values(probe.base.dirs))];
    const cpu = probe.base.dirs.cpu ? 'CPU weight' : 'no CPU weight (no cpu controller offered)';
    return {
      cgroup: true,
      line:
        `cgroup v${probe.base.version}: each sandboxed call in a group of its own under ${dirs.join(', ')}; its tasks, memory ` +
        `and ${cpu} held by the kernel`,
    };
  }
  return {
    cgroup: false,
    line:
      `no cgroup can be made here (${(probe.problem ?? '').slice(0, 300)}): the fallback — RLIMIT_DATA per process, and each call's tasks and ` +
      ('memory watched twice a second (a burst between two looks can pass a limit; its /tmp is not ' +
        'counted); no pid limit the kernel holds, no CPU weight but nice'),
  };
}
