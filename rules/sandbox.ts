/**
 * What a run remembers of its sandbox: how its latest call ran, the escape attempts the sandbox
 * refused its calls — the builder's, the test runs, the gate tools and every reviewing role's
 * (docs/security.md, The agent's sandbox) — and the calls a limit ended. A refused attempt or a
 * limit hit is a finding a person should see: status, watch and the Web UI's card show them with
 * the call that made them.
 *
 * Sandbox-safe: pure functions, no I/O.
 */
import {
  MAX_RUN_DENIALS,
  MAX_RUN_LIMIT_HITS,
  type SandboxDenial,
  type SandboxDenialSeen,
  type SandboxLimits,
  type SandboxReport,
  type SandboxState,
} from '../schemas/sandbox.js';
import { addFetchCounts, emptyFetchCounts } from './package-fetches.js';

/** Where a report came from: the iteration and the role of the call (builder, tests, gates, reviewer, council, ...). */
export interface SandboxSource {
  iteration: number;
  role: string;
}

/**
 * The run's sandbox state after one more call's report: the call's isolation becomes the latest,
 * its refusals join the list (an attempt already listed for the same role, kind and target adds
 * to its count and moves to the end). A full list drops the oldest attempt of a role listed more
 * than once, so every role that tried stays listed; the total counts them all.
 */
export function noteSandbox(state: SandboxState, report: SandboxReport | null | undefined, from: SandboxSource): SandboxState {
  if (!report) return state;
  const { denied, ...last } = report;
  let list = state.denied;
  let total = state.deniedTotal;
  for (const d of denied) {
    total += d.count;
    const same = list.find((x) => x.role === from.role && x.kind === d.kind && x.target === d.target);
    const seen: SandboxDenialSeen = same
      ? { ...same, count: same.count + d.count, iteration: from.iteration }
      : { ...d, iteration: from.iteration, role: from.role.slice(0, 40) };
    list = [...list.filter((x) => x !== same), seen];
  }
  // Full: the oldest attempt of a role listed more than once goes first, so every role that tried stays listed.
  while (list.length > MAX_RUN_DENIALS) {
    const roles = new Map<string, number>();
    for (const x of list) roles.set(x.role, (roles.get(x.role) ?? 0) + 1);
    const i = list.findIndex((x) => (roles.get(x.role) ?? 0) > 1);
    list = list.filter((_, j) => j !== (i === -1 ? 0 : i));
  }
  // A call a limit ended is a finding too: kept (the newest few) with the call that hit it.
  const hit = report.limitHit
    ? {
        limitHits: [...(state.limitHits ?? []), { iteration: from.iteration, role: from.role.slice(0, 40), reason: report.limitHit }].slice(
          -MAX_RUN_LIMIT_HITS,
        ),
        limitHitsTotal: (state.limitHitsTotal ?? 0) + 1,
      }
    : {};
  // Package fetches: counted over the run (each is a line of the run's fetch log).
  const packages = report.packages ? { packages: addFetchCounts(state.packages ?? emptyFetchCounts(), report.packages) } : {};
  return {
    ...state,
    last: lastOf(last),
    denied: list,
    deniedTotal: total,
    unsandboxedCalls: state.unsandboxedCalls + (report.applied ? 0 : 1),
    ...hit,
    ...packages,
  };
}

/** The latest call's isolation, without its fetch counts (the run's are in `packages`). */
function lastOf(last: Omit<SandboxReport, 'denied'>): Omit<SandboxReport, 'denied' | 'packages'> {
  const { packages: _counted, ...rest } = last;
  return rest;
}

/** The refusals of several reports (the builder's call and the test run on its tree), merged by kind and target, at most `max`. */
export function mergedDenials(reports: readonly (SandboxReport | null | undefined)[], max = 10): SandboxDenial[] {
  const out: SandboxDenial[] = [];
  for (const r of reports) {
    for (const d of r?.denied ?? []) {
      const same = out.find((x) => x.kind === d.kind && x.target === d.target);
      if (same) same.count += d.count;
      else if (out.length < max) out.push({ ...d });
    }
  }
  return out;
}

/**
 * What a call's input says of the run's sandbox knobs: the mode when the run chose one other than
 * the default (auto defers to the worker's setting, so an operator's VIGIL_SANDBOX=off or strict
 * on the worker decides for runs that did not ask), whether the registries are open, always (so
 * that sandboxRegistries=false closes them whatever the worker's VIGIL_SANDBOX_REGISTRIES says;
 * an activity input, not a command: histories replay alike), and the limits, always (a few
 * numbers; the worker has no setting of its own for them).
 */
export function sandboxArgs(k: {
  sandbox: 'auto' | 'strict' | 'off';
  sandboxRegistries: boolean;
  sandboxPids: number;
  sandboxMemoryMb: number;
  sandboxCpuWeight: number;
}): {
  sandbox?: 'strict' | 'off';
  sandboxRegistries: boolean;
  sandboxLimits: SandboxLimits;
} {
  return {
    ...(k.sandbox !== 'auto' ? { sandbox: k.sandbox } : {}),
    sandboxRegistries: k.sandboxRegistries,
    sandboxLimits: { pids: k.sandboxPids, memoryMb: k.sandboxMemoryMb, cpuWeight: k.sandboxCpuWeight },
  };
}
