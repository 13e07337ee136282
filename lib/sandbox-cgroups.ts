/**
 * The control groups that hold sandboxed calls (docs/security.md, Limits inside the sandbox):
 * finds where this process may make them — cgroup v2 with the memory and pids controllers (cpu
 * where offered), else the v1 hierarchies of those controllers — and makes, reads and removes one
 * group per call inside a `vigil-sandbox` group. Probed once per process, with a real trial (a
 * shell moved into a trial group), so a call never learns at its start that the groups cannot be
 * joined. Node built-ins only: the supervisor daemon runs it.
 *
 * Where `vigil-sandbox` goes, the first that works: the cgroup VIGIL_SANDBOX_CGROUP names (a path
 * inside the hierarchy, e.g. a systemd unit's delegated `/vigil.slice/sandbox`); the hierarchy's
 * root (as root); beside this process's own cgroup (a delegated subtree: systemd's user@ service,
 * or a unit with Delegate= and DelegateSubgroup=). In v2 `vigil-sandbox` never holds a process of
 * its own (the "no internal processes" rule), so its calls' groups can have controllers.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, rmdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';

export const GROUP_NAME = 'vigil-sandbox';
const REQUIRED = ['memory', 'pids'] as const;
type Controller = 'memory' | 'pids' | 'cpu';

/** Where the calls' groups are made: one folder (v2), or one per controller (v1). */
export interface CgroupBase {
  version: 1 | 2;
  dirs: Partial<Record<Controller, string>>;
}

export interface CgroupProbe {
  base: CgroupBase | null;
  /** Why none could be used (each place tried, and why not). */
  problem: string | null;
}

/** The cgroup limits of one call: 0 means none. */
export interface GroupLimits {
  pids: number;
  memoryBytes: number;
  cpuWeight: number;
}

const read = (file: string): string | null => {
  try {
    return readFileSync(file, 'utf8');
  } catch {
    return null;
  }
};
const write = (file: string, value: string): void => writeFileSync(file, value);
const tryWrite = (file: string, value: string): void => {
  try {
    write(file, value);
  } catch {
    /* a file this kernel does not have */
  }
};
const why = (e: unknown): string => ((e as NodeJS.ErrnoException).code ?? (e instanceof Error ? e.message : String(e))).slice(0, 80);

/** A counter of a flat-keyed file (`oom_kill 2`), or 0. */
export function counter(text: string | null, key: string): number {
  const m = text === null ? null : new RegExp(`^${key} (\\d+)$`, 'm').exec(text);
  return m ? Number(m[1]) : 0;
}

/** The cgroup mounts: the v2 one and the v1 hierarchy of each controller (Linux; /proc/self/mounts). */
export function cgroupMounts(mounts = read('/proc/self/mounts') ?? ''): { v2: string | null; v1: Partial<Record<Controller, string>> } {
  let v2: string | null = null;
  const v1: Partial<Record<Controller, string>> = {};
  for (const line of mounts.split('\n')) {
    const [, dir, type, opts] = line.split(' ');
    if (!dir) continue;
    if (type === 'cgroup2') v2 ??= dir;
    else if (type === 'cgroup') for (const c of ['memory', 'pids', 'cpu'] as const) if ((opts ?? '').split(',').includes(c)) v1[c] ??= dir;
  }
  return { v2, v1 };
}

/** This process's cgroup in the v2 hierarchy (`0::/path`) or in a v1 controller's. */
export function ownCgroup(controller: Controller | null, text = read('/proc/self/cgroup') ?? ''): string | null {
  for (const line of text.split('\n')) {
    const [id, controllers, where] = line.split(':');
    if (where === undefined) continue;
    if (controller === null ? id === '0' && controllers === '' : (controllers ?? '').split(',').includes(controller)) return where;
  }
  return null;
}

/** The places to try inside a hierarchy mounted at `mount`, for a process whose cgroup is `own`. */
export function candidates(mount: string, own: string | null, named: string | undefined): string[] {
  const out: string[] = [];
  if (named?.trim()) out.push(path.join(mount, path.normalize(`/${named.trim()}`)));
  out.push(path.join(mount, GROUP_NAME));
  if (own && own !== '/') out.push(path.join(mount, path.dirname(own), GROUP_NAME));
  return [...new Set(out)];
}

const alive = (pid: number): boolean => {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'EPERM';
  }
};

/** Removes the call groups a supervisor that is gone left behind (named `call-<supervisor pid>-…`; a busy one stays). */
function sweep(dir: string): void {
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch {
    return;
  }
  for (const n of names) {
    const m = /^(?:call|trial)-(\d+)-/.exec(n);
    if (!m || alive(Number(m[1]))) continue;
    try {
      rmdirSync(path.join(dir, n));
    } catch {
      /* still in use */
    }
  }
}

/** Moves a throw-away shell into a trial group under each folder: proves that a call's process can join. */
function trial(dirs: string[]): string | null {
  const made: string[] = [];
  try {
    for (const d of dirs) {
      const t = path.join(d, `trial-${process.pid}-${Date.now().toString(36)}`);
      mkdirSync(t);
      made.push(t);
    }
    const r = spawnSync(
      '/bin/sh',
      ['-c', 'for f; do echo $$ > "$f" || exit 1; done', 'sh', ...made.map((t) => path.join(t, 'cgroup.procs'))],
      {
        encoding: 'utf8',
        timeout: 5000,
      },
    );
    return r.status === 0
      ? null
      : `a process cannot join it (${(r.stderr || r.error?.message || `exit ${r.status}`).trim().slice(0, 120)})`;
  } catch (e) {
    return `cannot make a group in it (${why(e)})`;
  } finally {
    for (const t of made) {
      try {
        rmdirSync(t);
      } catch {
        /* the trial shell has not been reaped yet: swept later */
      }
    }
  }
}

/** Makes `dir` a v2 group whose children get memory and pids (and cpu where the parent has it). */
function v2Group(dir: string): string | null {
  try {
    mkdirSync(dir, { recursive: true });
  } catch (e) {
    return `cannot make ${dir} (${why(e)})`;
  }
  const parent = path.dirname(dir);
  const has = (c: string): boolean => (read(path.join(dir, 'cgroup.controllers')) ?? '').split(/\s+/).includes(c);
  const missing = [...REQUIRED, 'cpu'].filter((c) => !has(c));
  if (missing.length) {
    try {
      // Offered by the parent but not handed down yet: hand them down (fails where the parent holds processes).
      const offered = (read(path.join(parent, 'cgroup.controllers')) ?? '').split(/\s+/);
      const give = missing.filter((c) => offered.includes(c));
      if (give.length) write(path.join(parent, 'cgroup.subtree_control'), give.map((c) => `+${c}`).join(' '));
    } catch {
      /* checked below */
    }
  }
  const lacking = REQUIRED.filter((c) => !has(c));
  if (lacking.length) return `${dir} has no ${lacking.join(' or ')} controller (its parent does not hand it down)`;
  try {
    write(path.join(dir, 'cgroup.subtree_control'), [...REQUIRED, ...(has('cpu') ? ['cpu'] : [])].map((c) => `+${c}`).join(' '));
  } catch (e) {
    return `cannot turn the controllers on in ${dir} (${why(e)}: does a process live in it?)`;
  }
  return null;
}

function probeV2(mount: string, named: string | undefined): CgroupProbe {
  const problems: string[] = [];
  for (const dir of candidates(mount, ownCgroup(null), named)) {
    const p = v2Group(dir) ?? trial([dir]);
    if (p === null) {
      sweep(dir);
      const cpu = (read(path.join(dir, 'cgroup.subtree_control')) ?? '').split(/\s+/).includes('cpu');
      return { base: { version: 2, dirs: { memory: dir, pids: dir, ...(cpu ? { cpu: dir } : {}) } }, problem: null };
    }
    problems.push(p);
  }
  return { base: null, problem: `cgroup v2 at ${mount}: ${problems.join('; ')}` };
}

function probeV1(v1: Partial<Record<Controller, string>>, named: string | undefined): CgroupProbe {
  const lacking = REQUIRED.filter((c) => !v1[c]);
  if (lacking.length) return { base: null, problem: `no cgroup v1 hierarchy of ${lacking.join(' or ')}` };
  const controllers = (['memory', 'pids', 'cpu'] as const).filter((c) => v1[c]);
  const places = controllers.map((c) => candidates(v1[c] as string, ownCgroup(c), named));
  const problems: string[] = [];
  for (let i = 0; i < Math.max(...places.map((p) => p.length)); i++) {
    const dirs: Partial<Record<Controller, string>> = {};
    controllers.forEach((c, j) => (dirs[c] = places[j]?.[i] ?? places[j]?.at(-1)));
    try {
      for (const d of Object.values(dirs)) mkdirSync(d, { recursive: true });
    } catch (e) {
      problems.push(`cannot make ${Object.values(dirs).join(', ')} (${why(e)})`);
      continue;
    }
    const p = trial(Object.values(dirs));
    if (p === null) {
      for (const d of Object.values(dirs)) sweep(d);
      return { base: { version: 1, dirs }, problem: null };
    }
    problems.push(`${Object.values(dirs).join(', ')}: ${p}`);
  }
  return { base: null, problem: `cgroup v1: ${problems.join('; ')}` };
}

/** The worker's settings of where the groups go: VIGIL_SANDBOX_CGROUP, and VIGIL_SANDBOX_LIMITS=fallback (no cgroups). */
export interface CgroupSettings {
  cgroup?: string | undefined;
  fallback?: boolean | undefined;
}

/** The worker's settings from its environment (they travel to the supervisor with each call). */
export function cgroupSettings(env: NodeJS.ProcessEnv = process.env): CgroupSettings {
  const cgroup = env.VIGIL_SANDBOX_CGROUP?.trim();
  const fallback = (env.VIGIL_SANDBOX_LIMITS ?? '').trim().toLowerCase() === 'fallback';
  return { ...(cgroup ? { cgroup } : {}), ...(fallback ? { fallback } : {}) };
}

let probed: { key: string; probe: CgroupProbe } | null = null;

/**
 * Where this process can make the calls' groups, or why it cannot (probed once per setting;
 * `fresh` probes again). `fallback` never uses cgroups (the fallback's test, an operator who
 * wants none).
 */
export function cgroupProbe(settings: CgroupSettings = {}, fresh = false): CgroupProbe {
  const key = `${settings.fallback ? 'fallback' : ''}:${settings.cgroup ?? ''}`;
  if (probed?.key === key && !fresh) return probed.probe;
  let probe: CgroupProbe;
  if (process.platform !== 'linux') probe = { base: null, problem: `cgroups are Linux's; this is ${process.platform}` };
  else if (settings.fallback) probe = { base: null, problem: 'VIGIL_SANDBOX_LIMITS=fallback: cgroups are not used' };
  else {
    const { v2, v1 } = cgroupMounts();
    // v2 where it offers the controllers (a hybrid machine binds them to v1 instead), else v1.
    const offered = v2 ? (read(path.join(v2, 'cgroup.controllers')) ?? '').split(/\s+/) : [];
    const lacking = REQUIRED.filter((c) => !offered.includes(c));
    const first: CgroupProbe = !v2
      ? { base: null, problem: 'no cgroup v2 mount' }
      : lacking.length
        ? { base: null, problem: `cgroup v2 at ${v2} offers no ${lacking.join(' or ')} controller` }
        : probeV2(v2, settings.cgroup);
    const second = first.base ? first : probeV1(v1, settings.cgroup);
    probe = second.base ? second : { base: null, problem: `${first.problem}; ${second.problem}` };
  }
  probed = { key, probe };
  return probe;
}

/** One call's group (in each hierarchy, v1), made with its limits before the call starts. */
export class CallGroup {
  private constructor(
    readonly base: CgroupBase,
    readonly dirs: Partial<Record<Controller, string>>,
  ) {}

  /** Makes the group `name` under `base` with `limits`; throws (and leaves nothing) when it cannot. */
  static open(base: CgroupBase, name: string, limits: GroupLimits): CallGroup {
    const dirs: Partial<Record<Controller, string>> = {};
    for (const c of ['memory', 'pids', 'cpu'] as const) {
      const b = base.dirs[c];
      if (b) dirs[c] = path.join(b, name);
    }
    const g = new CallGroup(base, dirs);
    try {
      for (const d of new Set(Object.values(dirs))) mkdirSync(d);
      g.apply(limits);
    } catch (e) {
      g.remove();
      throw e;
    }
    return g;
  }

  private apply(l: GroupLimits): void {
    const { memory, pids, cpu } = this.dirs;
    const v2 = this.base.version === 2;
    if (pids) write(path.join(pids, 'pids.max'), l.pids > 0 ? String(l.pids) : 'max');
    if (memory && v2) {
      write(path.join(memory, 'memory.max'), l.memoryBytes > 0 ? String(l.memoryBytes) : 'max');
      // No swap: the limit is what the call holds, not what it can push out to disk (a kernel
      // without swap accounting has no such file). An OOM kill takes the whole call, not one
      // process the agent could restart (kernels from 4.19).
      if (l.memoryBytes > 0) tryWrite(path.join(memory, 'memory.swap.max'), '0');
      tryWrite(path.join(memory, 'memory.oom.group'), '1');
    } else if (memory && l.memoryBytes > 0) {
      write(path.join(memory, 'memory.limit_in_bytes'), String(l.memoryBytes));
      if (existsSync(path.join(memory, 'memory.memsw.limit_in_bytes')))
        write(path.join(memory, 'memory.memsw.limit_in_bytes'), String(l.memoryBytes));
    }
    if (cpu) {
      // All calls together weigh this much against the rest of the machine (the call starting last sets it), each call as much among them.
      const [file, value] = v2
        ? ['cpu.weight', String(l.cpuWeight)]
        : ['cpu.shares', String(Math.max(2, Math.round((l.cpuWeight * 1024) / 100)))];
      const parent = this.base.dirs.cpu as string;
      try {
        write(path.join(parent, file), value);
      } catch {
        /* the group's own weight still orders the calls among themselves */
      }
      write(path.join(cpu, file), value);
    }
  }

  /** The `cgroup.procs` files a process joins to be in the call's group (one per hierarchy, v1). */
  procsFiles(): string[] {
    return [...new Set(Object.values(this.dirs))].map((d) => path.join(d, 'cgroup.procs'));
  }

  /** Times a fork was refused at the pid limit, and processes the OOM killer ended, so far. */
  events(): { pidsMax: number; oomKills: number } {
    const { memory, pids } = this.dirs;
    return {
      pidsMax: pids ? counter(read(path.join(pids, 'pids.events')), 'max') : 0,
      oomKills: memory ? counter(read(path.join(memory, this.base.version === 2 ? 'memory.events' : 'memory.oom_control')), 'oom_kill') : 0,
    };
  }

  /** The most memory and tasks the call held, where the kernel keeps them (null: it does not). */
  peaks(): { memoryBytes: number | null; pids: number | null } {
    const { memory, pids } = this.dirs;
    const num = (file: string | null): number | null => {
      const t = file === null ? null : read(file);
      return t !== null && /^\d+\s*$/.test(t) ? Number(t) : null;
    };
    return {
      memoryBytes: memory ? num(path.join(memory, this.base.version === 2 ? 'memory.peak' : 'memory.max_usage_in_bytes')) : null,
      pids: pids ? num(path.join(pids, 'pids.peak')) : null,
    };
  }

  /** Kills every process in the group (cgroup.kill where the kernel has it, else each listed pid). */
  kill(): void {
    const dir = this.dirs.pids ?? this.dirs.memory;
    if (!dir) return;
    if (this.base.version === 2 && existsSync(path.join(dir, 'cgroup.kill'))) {
      try {
        write(path.join(dir, 'cgroup.kill'), '1');
        return;
      } catch {
        /* below */
      }
    }
    for (let round = 0; round < 20; round++) {
      const pids = (read(path.join(dir, 'cgroup.procs')) ?? '').split('\n').filter(Boolean);
      if (pids.length === 0) return;
      for (const p of pids) {
        try {
          process.kill(Number(p), 'SIGKILL');
        } catch {
          /* gone */
        }
      }
    }
  }

  /** Removes the group; false while a process is still in it (the next probe's sweep removes it). */
  remove(): boolean {
    let ok = true;
    for (const d of new Set(Object.values(this.dirs))) {
      try {
        rmdirSync(d);
      } catch (e) {
        if ((e as NodeJS.ErrnoException).code !== 'ENOENT') ok = false;
      }
    }
    return ok;
  }
}
