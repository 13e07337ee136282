/**
 * What a run remembers of its sandbox (rules/sandbox.ts): the latest call's
 * isolation, the refused attempts merged by role, kind and target and bounded, the calls a limit
 * ended, the lines status prints, and which knobs a call's input carries.
 */
import { describe, expect, it } from 'vitest';
import { RunAgentInputSchema } from '../../schemas/activities.js';
import { defaultKnobs } from '../../schemas/knobs.js';
import { MAX_RUN_DENIALS, MAX_RUN_LIMIT_HITS, SandboxStateSchema, type SandboxReport, type SandboxState } from '../../schemas/sandbox.js';
import { mergedDenials, noteSandbox, sandboxArgs } from '../../rules/sandbox.js';
import { deniedLines, sandboxLine } from '../../rules/ui.js';

const empty: SandboxState = SandboxStateSchema.parse({ last: null, denied: [], deniedTotal: 0, unsandboxedCalls: 0 });
const applied = (denied: SandboxReport['denied'] = []): SandboxReport => ({
  mode: 'auto',
  applied: true,
  isolation: 'bubblewrap 0.8.0; repository writable; network: api.anthropic.com:443',
  reason: null,
  denied,
});

describe('noteSandbox', () => {
  it('keeps the latest isolation and counts nothing when nothing was refused', () => {
    const s = noteSandbox(empty, applied(), { iteration: 1, role: 'builder' });
    expect(s.last).toEqual({ mode: 'auto', applied: true, isolation: applied().isolation, reason: null });
    expect(s.denied).toEqual([]);
    expect(s.deniedTotal).toBe(0);
    expect(s.unsandboxedCalls).toBe(0);
  });

  it('leaves the state as it was for a call that reported nothing (a run from before reports)', () => {
    expect(noteSandbox(empty, null, { iteration: 1, role: 'builder' })).toBe(empty);
    expect(noteSandbox(empty, undefined, { iteration: 1, role: 'tests' })).toBe(empty);
  });

  it('merges a repeated attempt by role, kind and target, moving it to the newest, and counts every one', () => {
    let s = noteSandbox(
      empty,
      applied([
        { kind: 'connect', target: '127.0.0.1:7233', count: 2 },
        { kind: 'write', target: '/etc/x', count: 1 },
      ]),
      { iteration: 1, role: 'builder' },
    );
    s = noteSandbox(s, applied([{ kind: 'connect', target: '127.0.0.1:7233', count: 1 }]), { iteration: 3, role: 'builder' });
    s = noteSandbox(s, applied([{ kind: 'connect', target: '127.0.0.1:7233', count: 1 }]), { iteration: 3, role: 'reviewer' });
    expect(s.deniedTotal).toBe(5);
    expect(s.denied).toEqual([
      { kind: 'write', target: '/etc/x', count: 1, iteration: 1, role: 'builder' },
      { kind: 'connect', target: '127.0.0.1:7233', count: 3, iteration: 3, role: 'builder' },
      { kind: 'connect', target: '127.0.0.1:7233', count: 1, iteration: 3, role: 'reviewer' },
    ]);
    expect(SandboxStateSchema.safeParse(s).success).toBe(true);
  });

  it('keeps the newest attempts when there are more than it keeps, and still counts them all', () => {
    let s = empty;
    for (let i = 1; i <= MAX_RUN_DENIALS + 5; i++)
      s = noteSandbox(s, applied([{ kind: 'access', target: `/secret/${i}`, count: 1 }]), { iteration: i, role: 'builder' });
    expect(s.denied).toHaveLength(MAX_RUN_DENIALS);
    expect(s.denied[0]?.target).toBe('/secret/6');
    expect(s.deniedTotal).toBe(MAX_RUN_DENIALS + 5);
    expect(SandboxStateSchema.safeParse(s).success).toBe(true);
    expect(deniedLines(s, 3)).toEqual([
      `access /secret/${MAX_RUN_DENIALS + 5} (builder, iteration ${MAX_RUN_DENIALS + 5})`,
      `access /secret/${MAX_RUN_DENIALS + 4} (builder, iteration ${MAX_RUN_DENIALS + 4})`,
      `access /secret/${MAX_RUN_DENIALS + 3} (builder, iteration ${MAX_RUN_DENIALS + 3})`,
      `… ${MAX_RUN_DENIALS + 2} more refused attempts (each call's log has them)`,
    ]);
  });

  it('keeps every role that tried listed when the list is full: a role listed more than once gives up its oldest first', () => {
    let s = noteSandbox(empty, applied([{ kind: 'write', target: '/checklist-tried', count: 1 }]), { iteration: 1, role: 'checklist' });
    for (let i = 1; i <= MAX_RUN_DENIALS + 3; i++)
      s = noteSandbox(s, applied([{ kind: 'access', target: `/b/${i}`, count: 1 }]), { iteration: i, role: 'builder' });
    expect(s.denied).toHaveLength(MAX_RUN_DENIALS);
    expect(s.denied[0]).toMatchObject({ role: 'checklist', target: '/checklist-tried' });
    expect(s.denied.at(-1)?.target).toBe(`/b/${MAX_RUN_DENIALS + 3}`);
    expect(s.deniedTotal).toBe(MAX_RUN_DENIALS + 4);
  });

  it('counts the calls that ran outside the sandbox and says so in its line', () => {
    const off: SandboxReport = {
      mode: 'off',
      applied: false,
      isolation: 'none',
      reason: 'sandbox=off: the run or the worker turned it off',
      denied: [],
    };
    let s = noteSandbox(empty, off, { iteration: 1, role: 'builder' });
    s = noteSandbox(s, off, { iteration: 1, role: 'tests' });
    expect(s.unsandboxedCalls).toBe(2);
    expect(sandboxLine(s, 'off')).toBe(
      'sandbox=off: NOT isolated — sandbox=off: the run or the worker turned it off (2 calls ran outside it)',
    );
  });
});

describe('the lines status prints', () => {
  it('says how the latest call ran and how many attempts were refused', () => {
    expect(sandboxLine(empty, 'auto')).toBe('sandbox=auto: no call has run yet');
    const s = noteSandbox(empty, applied([{ kind: 'connect', target: 'example.com:443', count: 1 }]), { iteration: 2, role: 'council' });
    expect(sandboxLine(s, 'auto')).toBe(`sandbox=auto: ${applied().isolation}; 1 escape attempt refused`);
    expect(deniedLines(s)).toEqual(['connect example.com:443 (council, iteration 2)']);
  });
});

describe('mergedDenials', () => {
  it("merges the builder's and its test run's refusals by kind and target, bounded", () => {
    const a = applied([{ kind: 'connect', target: 'x:1', count: 1 }]);
    const b = applied([
      { kind: 'connect', target: 'x:1', count: 2 },
      { kind: 'write', target: '/w', count: 1 },
    ]);
    expect(mergedDenials([a, null, b])).toEqual([
      { kind: 'connect', target: 'x:1', count: 3 },
      { kind: 'write', target: '/w', count: 1 },
    ]);
    expect(mergedDenials([b], 1)).toEqual([{ kind: 'connect', target: 'x:1', count: 2 }]);
    // The inputs are not changed.
    expect(a.denied[0]?.count).toBe(1);
  });
});

describe('sandboxArgs', () => {
  const limits = { sandboxPids: 4096, sandboxMemoryMb: 4096, sandboxCpuWeight: 50 };
  const sandboxLimits = { pids: 4096, memoryMb: 4096, cpuWeight: 50 };
  it("passes a run's strict or off, and leaves the default auto to the worker; the registries always, open or closed", () => {
    // Closed is said, not left to the worker's VIGIL_SANDBOX_REGISTRIES: false closes them.
    expect(sandboxArgs({ sandbox: 'auto', sandboxRegistries: false, ...limits })).toEqual({ sandboxRegistries: false, sandboxLimits });
    expect(sandboxArgs({ sandbox: 'off', sandboxRegistries: false, ...limits })).toEqual({
      sandbox: 'off',
      sandboxRegistries: false,
      sandboxLimits,
    });
    expect(sandboxArgs(defaultKnobs()).sandboxRegistries).toBe(true);
    expect(sandboxArgs({ sandbox: 'strict', sandboxRegistries: true, ...limits })).toEqual({
      sandbox: 'strict',
      sandboxRegistries: true,
      sandboxLimits,
    });
  });

  it("always passes the run's limits, as the knobs resolved them (the default knobs and a run's own)", () => {
    const d = defaultKnobs();
    expect(sandboxArgs(d).sandboxLimits).toEqual({ pids: d.sandboxPids, memoryMb: d.sandboxMemoryMb, cpuWeight: d.sandboxCpuWeight });
    expect(sandboxArgs({ ...d, sandboxPids: 0, sandboxMemoryMb: 1024, sandboxCpuWeight: 10 }).sandboxLimits).toEqual({
      pids: 0,
      memoryMb: 1024,
      cpuWeight: 10,
    });
    // What an activity input accepts of them, and what it refuses.
    expect(RunAgentInputSchema.shape.sandboxLimits.safeParse(sandboxArgs(d).sandboxLimits).success).toBe(true);
    expect(RunAgentInputSchema.shape.sandboxLimits.safeParse({ pids: 5, memoryMb: 4096, cpuWeight: 50 }).success).toBe(false);
  });
});

describe('limit hits in the run state', () => {
  const hit = (reason: string): SandboxReport => ({
    ...applied(),
    limits: 'cgroup v2: 4096 tasks, 4096 MiB, cpu weight 50',
    limitHit: reason,
  });

  it('keeps the calls a limit ended with their role and iteration, counts them all, the newest few listed', () => {
    let s = noteSandbox(empty, hit('the agent started 4096 processes: pid limit'), { iteration: 3, role: 'builder' });
    expect(s.limitHits).toEqual([{ iteration: 3, role: 'builder', reason: 'the agent started 4096 processes: pid limit' }]);
    expect(s.limitHitsTotal).toBe(1);
    expect(s.last?.limitHit).toBe('the agent started 4096 processes: pid limit');
    // A later call that hit nothing keeps the list (and becomes the latest).
    s = noteSandbox(s, applied(), { iteration: 4, role: 'tests' });
    expect(s.limitHits).toHaveLength(1);
    expect(s.last?.limitHit).toBeUndefined();
    for (let i = 5; i < 5 + MAX_RUN_LIMIT_HITS + 2; i++)
      s = noteSandbox(s, hit(`the test run used 4.0 GiB: memory limit (${i})`), { iteration: i, role: 'tests' });
    expect(s.limitHits).toHaveLength(MAX_RUN_LIMIT_HITS);
    expect(s.limitHits?.at(-1)?.reason).toMatch(/\(11\)$/);
    expect(s.limitHitsTotal).toBe(MAX_RUN_LIMIT_HITS + 3);
    expect(SandboxStateSchema.parse(s)).toEqual(s);
  });

  it('adds nothing to a state (and to an older one) for calls that hit no limit', () => {
    const s = noteSandbox(empty, { ...applied(), limits: 'cgroup v1: 4096 tasks', limitHit: null }, { iteration: 1, role: 'builder' });
    expect(s.limitHits).toBeUndefined();
    expect(s.limitHitsTotal).toBeUndefined();
  });
});
