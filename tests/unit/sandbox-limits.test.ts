/**
 * The sandbox's limits without the sandbox (lib/sandbox-limits.ts, sandbox-cgroups.ts): the
 * reason a limit gives, the niceness the fallback uses for a CPU weight, the shell that puts a call
 * in its groups (run for real, with plain files standing in for `cgroup.procs`), the parsing of
 * /proc's cgroup files, the files a v2 group is given (on a folder standing in for cgroupfs, since
 * this machine's v2 hierarchy may offer no controller), and — where this machine lets the tests
 * make cgroups — a real call group that holds a fork bomb and a memory hog, and lets an honest
 * command through. The calls in the real sandbox are tests/unit/sandbox-limits-call.test.ts's.
 */
import { execFileSync, spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { CallGroup, candidates, cgroupMounts, cgroupProbe, counter, GROUP_NAME, ownCgroup } from '../../lib/sandbox-cgroups.js';
import { CallLimiter, limitedCommand, limitReason, niceFor, type LimitsOutcome } from '../../lib/sandbox-limits.js';

const tmp = mkdtempSync(path.join(os.tmpdir(), 'vigil-limits-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

describe('limitReason', () => {
  it('names who, what it reached and the knob that set the limit', () => {
    expect(limitReason({ kind: 'pids', used: 4096, limit: 4096, watched: false }, 'the agent')).toBe(
      'the agent started 4096 processes: pid limit (sandboxPids=4096, threads count)',
    );
    expect(limitReason({ kind: 'memory', used: 4 * 1024 ** 3, limit: 4096, watched: false }, 'the test run')).toBe(
      'the test run used 4.0 GiB: memory limit (sandboxMemoryMb=4096)',
    );
    expect(limitReason({ kind: 'memory', used: 300 * 1024 ** 2, limit: 256, watched: false }, 'the gate tool')).toBe(
      'the gate tool used 300 MiB: memory limit (sandboxMemoryMb=256)',
    );
    // Where the kernel keeps no peak, the limit stands for it.
    expect(limitReason({ kind: 'pids', used: null, limit: 1024, watched: false }, 'the agent')).toMatch(
      /^the agent started 1024 processes/,
    );
    // The fallback's watch says it is one: the call may have gone past the limit between two looks.
    expect(limitReason({ kind: 'pids', used: 131, limit: 100, watched: true }, 'the agent')).toBe(
      "the agent started 131 processes: pid limit (sandboxPids=100, threads count; seen by Vigil's watch, no cgroup here)",
    );
  });
});

describe('niceFor', () => {
  it('maps a CPU weight to the niceness of the same share (100 is nice 0; never below 0, never above 19)', () => {
    expect([10_000, 100, 80, 50, 20, 10, 1].map(niceFor)).toEqual([0, 0, 1, 3, 7, 10, 19]);
  });
});

describe('limitedCommand', () => {
  const run = (c: { file: string; args: string[] }): { out: string; code: number } => {
    try {
      return { out: execFileSync(c.file, c.args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] }), code: 0 };
    } catch (e) {
      return { out: String((e as { stdout?: string }).stdout ?? ''), code: (e as { status: number }).status };
    }
  };

  it('joins every group with its own pid before it execs the command, whose words pass untouched', () => {
    const procs = [path.join(tmp, 'a.procs'), path.join(tmp, 'b.procs')];
    for (const p of procs) writeFileSync(p, '');
    const c = limitedCommand('/bin/sh', ['-c', 'echo "$$|$1|$2"', 'x', 'two words', '--'], { procs, dataKb: null, nice: null });
    expect(c.file).toBe('/bin/sh');
    const { out, code } = run(c);
    expect(code).toBe(0);
    const [pid, one, two] = out.trim().split('|');
    // The command is the same process that joined (exec), so nothing it starts is outside the group.
    for (const p of procs) expect(readFileSync(p, 'utf8').trim()).toBe(pid);
    expect([one, two]).toEqual(['two words', '--']);
  });

  it('refuses to run the command when a group cannot be joined (exit 125), rather than run it unlimited', () => {
    const c = limitedCommand('/bin/echo', ['ran'], { procs: [path.join(tmp, 'missing', 'cgroup.procs')], dataKb: null, nice: null });
    expect(run(c)).toEqual({ out: '', code: 125 });
  });

  it('the fallback: RLIMIT_DATA set, the command run through nice', () => {
    const nice = existsSync('/usr/bin/nice') ? '/usr/bin/nice' : '/bin/nice';
    const c = limitedCommand('/bin/sh', ['-c', 'ulimit -d; cut -d" " -f19 /proc/self/stat'], {
      procs: [],
      dataKb: 512 * 1024,
      nice: { bin: nice, n: 3 },
    });
    const { out, code } = run(c);
    expect(code).toBe(0);
    const [data, niceness] = out.trim().split('\n');
    expect(data).toBe(String(512 * 1024));
    expect(Number(niceness)).toBeGreaterThanOrEqual(3);
  });
});

describe("reading the machine's cgroups", () => {
  it('finds the v2 mount and the v1 hierarchy of each controller', () => {
    const hybrid = [
      'cgroup /sys/fs/cgroup/memory cgroup rw,nosuid,relatime,memory 0 0',
      'cgroup /sys/fs/cgroup/cpu,cpuacct cgroup rw,relatime,cpu,cpuacct 0 0',
      'cgroup /sys/fs/cgroup/pids cgroup rw,relatime,pids 0 0',
      'cgroup2 /sys/fs/cgroup/unified cgroup2 rw,nosuid,relatime 0 0',
      'proc /proc proc rw 0 0',
    ].join('\n');
    expect(cgroupMounts(hybrid)).toEqual({
      v2: '/sys/fs/cgroup/unified',
      v1: { memory: '/sys/fs/cgroup/memory', cpu: '/sys/fs/cgroup/cpu,cpuacct', pids: '/sys/fs/cgroup/pids' },
    });
    expect(cgroupMounts('cgroup2 /sys/fs/cgroup cgroup2 rw,nsdelegate 0 0\n')).toEqual({ v2: '/sys/fs/cgroup', v1: {} });
  });

  it("reads this process's group, and where vigil-sandbox may go: the named one, the root, beside its own", () => {
    const text = '9:name=systemd:/\n4:memory:/worker/a\n1:cpu,cpuacct:/\n0::/system.slice/vigil.service/worker\n';
    expect(ownCgroup(null, text)).toBe('/system.slice/vigil.service/worker');
    expect(ownCgroup('memory', text)).toBe('/worker/a');
    expect(ownCgroup('cpu', text)).toBe('/');
    expect(ownCgroup('pids', text)).toBeNull();
    expect(candidates('/sys/fs/cgroup', '/system.slice/vigil.service/worker', undefined)).toEqual([
      `/sys/fs/cgroup/${GROUP_NAME}`,
      `/sys/fs/cgroup/system.slice/vigil.service/${GROUP_NAME}`,
    ]);
    expect(candidates('/sys/fs/cgroup', '/', ' /vigil.slice/sandbox ')).toEqual([
      '/sys/fs/cgroup/vigil.slice/sandbox',
      `/sys/fs/cgroup/${GROUP_NAME}`,
    ]);
    // A named group cannot climb out of the hierarchy.
    expect(candidates('/sys/fs/cgroup', '/', '../../etc')[0]).toBe('/sys/fs/cgroup/etc');
    expect(counter('low 0\nhigh 0\nmax 12\noom 1\noom_kill 1\n', 'oom_kill')).toBe(1);
    expect(counter('max 3\n', 'max')).toBe(3);
    expect(counter(null, 'max')).toBe(0);
  });

  it('gives a v2 call group its limits, no swap and group OOM kills (on a folder standing in for cgroupfs)', () => {
    // Not the kernel: these are the files a v2 group is written, checked where a real v2
    // hierarchy with controllers is not at hand (the real groups are tested below and in the sandbox).
    const base = path.join(tmp, 'v2', GROUP_NAME);
    mkdirSync(base, { recursive: true });
    const g = CallGroup.open({ version: 2, dirs: { memory: base, pids: base, cpu: base } }, 'call-1-x', {
      pids: 4096,
      memoryBytes: 4096 * 1024 * 1024,
      cpuWeight: 50,
    });
    const dir = path.join(base, 'call-1-x');
    const file = (f: string): string => readFileSync(path.join(dir, f), 'utf8');
    expect([file('pids.max'), file('memory.max'), file('memory.oom.group'), file('cpu.weight')]).toEqual(['4096', '4294967296', '1', '50']);
    expect(readFileSync(path.join(base, 'cpu.weight'), 'utf8')).toBe('50');
    expect(g.procsFiles()).toEqual([path.join(dir, 'cgroup.procs')]);
    writeFileSync(path.join(dir, 'memory.events'), 'low 0\nhigh 0\nmax 40\noom 1\noom_kill 1\n');
    writeFileSync(path.join(dir, 'pids.events'), 'max 0\n');
    expect(g.events()).toEqual({ pidsMax: 0, oomKills: 1 });
    // Limits at 0 are none.
    const off = CallGroup.open({ version: 2, dirs: { memory: base, pids: base } }, 'call-1-y', { pids: 0, memoryBytes: 0, cpuWeight: 100 });
    expect(readFileSync(path.join(base, 'call-1-y', 'pids.max'), 'utf8')).toBe('max');
    expect(readFileSync(path.join(base, 'call-1-y', 'memory.max'), 'utf8')).toBe('max');
    expect(off.dirs.cpu).toBeUndefined();
  });
});

/** Runs `file args` in a call group of `limits` as the supervisor does (no bubblewrap): its outcome. */
async function limited(
  limits: { pids: number; memoryMb: number },
  file: string,
  args: string[],
): Promise<LimitsOutcome & { ms: number; group: string; made: boolean }> {
  const token = `t${Date.now().toString(36)}${Math.random().toString(36).slice(2)}`;
  const l = new CallLimiter({ ...limits, cpuWeight: 50, subject: 'the agent' }, token);
  // The group's name, as the limiter makes it (other test files' calls may have groups beside it).
  const group = `call-${process.pid}-${token.slice(0, 12)}`;
  const made = Object.values(cgroupProbe().base?.dirs ?? {}).every((d) => existsSync(path.join(d, group)));
  const w = l.wrap(file, args);
  const started = Date.now();
  const child = spawn(w.file, w.args, { stdio: 'ignore', detached: true });
  l.started(child.pid as number);
  const timer = setInterval(() => {
    if (!l.check()) return;
    try {
      process.kill(-(child.pid as number), 'SIGKILL');
    } catch {
      /* gone */
    }
    l.kill();
  }, l.intervalMs);
  await new Promise((r) => child.once('exit', r));
  clearInterval(timer);
  return { ...(await l.close()), ms: Date.now() - started, group, made };
}

describe.runIf(cgroupProbe().base !== null)('a call group on this machine', () => {
  it('ends a fork bomb at its pid limit, and removes the group', async () => {
    const before = cgroupProbe().base;
    const r = await limited({ pids: 64, memoryMb: 512 }, '/bin/sh', ['-c', 'b(){ b | b & }; b; sleep 60']);
    expect(r.hit).toMatchObject({ kind: 'pids', limit: 64, watched: false });
    expect(r.reason).toMatch(/^the agent started 6\d processes: pid limit \(sandboxPids=64/);
    expect(r.applied).toMatch(/^cgroup v[12]: 64 tasks, 512 MiB/);
    expect(r.ms).toBeLessThan(10_000);
    expect(r.made).toBe(true);
    for (const d of Object.values(before?.dirs ?? {})) {
      expect(existsSync(d)).toBe(true);
      expect(existsSync(path.join(d, r.group))).toBe(false);
    }
  });

  it('ends a memory hog at its memory limit (the OOM killer), with what it used', async () => {
    const hog = 'const a = []; for (;;) a.push(Buffer.alloc(16 << 20, 1));';
    const r = await limited({ pids: 64, memoryMb: 256 }, process.execPath, ['-e', hog]);
    expect(r.hit).toMatchObject({ kind: 'memory', limit: 256, watched: false });
    expect(r.reason).toMatch(/^the agent used (2\d\d) MiB: memory limit \(sandboxMemoryMb=256\)$/);
    expect(Number(/used (\d+)/.exec(r.reason ?? '')?.[1])).toBeLessThanOrEqual(257);
  });

  it('lets an honest command through: 40 processes and 128 MiB under 64 tasks and 256 MiB', async () => {
    const honest = "for i in $(seq 40); do sleep 1 & done; node -e 'const b = Buffer.alloc(128 << 20, 1); console.log(b.length)'; wait";
    const r = await limited({ pids: 64, memoryMb: 256 }, '/bin/sh', ['-c', honest]);
    expect(r.hit).toBeNull();
    expect(r.reason).toBeNull();
  });
});

describe('the fallback, forced', () => {
  it('makes no cgroup and says what it does instead', () => {
    expect(cgroupProbe({ fallback: true }).base).toBeNull();
    const l = new CallLimiter({ pids: 4096, memoryMb: 4096, cpuWeight: 50, subject: 'the agent', fallback: true }, 'fallback-probe');
    expect(l.applied).toMatch(
      new RegExp(
        [
          /^no cgroup \(VIGIL_SANDBOX_LIMITS=fallback: cgroups are not used\): 4096 MiB per process \(RLIMIT_DATA/.source,
          /\); 4096 tasks and 4096 MiB for the call watched twice a second/.source,
        ].join(''),
      ),
    );
    expect(l.wrap('/bin/true', []).args.slice(0, 2)[1]).toContain('ulimit -d 4194304');
  });
});
