/**
 * Attempts from a stuck point (knob `onStuck=fork`, docs/attempts.md): whether a run stuck at a
 * safety valve forks, from which checkpoint, what each fork runs with, which fork continues the
 * run, and what the run says of it. Pure: the checkpoints, the knobs and the forks' outcomes come
 * in as values.
 */
import { parseForkWith, type ForkVariation } from '../schemas/knobs-fork.js';
import type { CheckpointRecord } from '../schemas/run.js';
import { attemptApproved, cycled } from './attempts.js';
import { fromWhat } from './fork-lines.js';

export { forkOutcomeReason, forkStatusLines } from './fork-lines.js';

type Tier = 'planning' | 'development' | 'fast';

/**
 * Whether a run whose valve fires forks instead of ending `force_stopped`: only with
 * `onStuck=fork` (absent from an older run's knobs, which parse to `stop`), never a fork itself
 * (a fork that gets stuck ends as a stuck run ends), and once per run.
 */
export function forksWhenStuck(knobs: { onStuck?: string }, run: { isFork: boolean; forkedAlready: boolean }): boolean {
  return knobs.onStuck === 'fork' && !run.isFork && !run.forkedAlready;
}

/** Where the forks start: a checkpoint (iteration ≥ 1) or the run start (iteration 0, its HEAD as commit). */
export interface ForkPoint {
  iteration: number;
  commit: string | null;
  tree: string;
  why: string;
}

/**
 * The last good checkpoint: the latest whose tests passed; else the latest whose tests did not
 * fail (not run, or inconclusive); else, every checkpoint failing its tests (or none kept), the
 * run start. Null when the run has no start recorded (it never inspected its repository).
 */
export function forkPoint(
  checkpoints: readonly Pick<CheckpointRecord, 'iteration' | 'commit' | 'tree' | 'tests'>[],
  runStart: { sha: string | null; treeHash: string } | null,
): ForkPoint | null {
  const latest = <T>(xs: readonly T[]): T | undefined => xs.at(-1);
  const passed = latest(checkpoints.filter((c) => c.tests === 'pass'));
  if (passed)
    return { iteration: passed.iteration, commit: passed.commit, tree: passed.tree, why: 'the latest checkpoint whose tests passed' };
  const unfailed = latest(checkpoints.filter((c) => c.tests !== 'fail'));
  if (unfailed)
    return {
      iteration: unfailed.iteration,
      commit: unfailed.commit,
      tree: unfailed.tree,
      why: `the latest checkpoint whose tests did not fail (tests ${unfailed.tests ?? 'not run'})`,
    };
  if (!runStart) return null;
  const why = checkpoints.length ? 'the run start: every checkpoint kept fails its tests' : 'the run start: the run kept no checkpoint';
  return { iteration: 0, commit: runStart.sha, tree: runStart.treeHash, why };
}

/** What fork n runs with. */
export interface ForkConfig {
  n: number;
  provider: string;
  model: string;
  tier: Tier;
}

/**
 * Each of the `forkAttempts` forks' agent, model and tier: the `forkWith` entries cycled (fork n
 * the ((n-1) mod length)-th), what an entry leaves out being the run's. An entry that changes the
 * agent and names no model takes that agent's own model for the tier (the run's model is its own
 * agent's name for one). An unreadable `forkWith` (the schema refuses it first) counts as empty.
 */
export function forkConfigs(knobs: { forkAttempts: number; forkWith: string; provider: string; model: string; tier: Tier }): ForkConfig[] {
  const parsed = parseForkWith(knobs.forkWith);
  const variations: ForkVariation[] = parsed.ok ? parsed.variations : [];
  const out: ForkConfig[] = [];
  for (let n = 1; n <= knobs.forkAttempts; n++) {
    const v = cycled(variations, n) ?? {};
    const provider = v.provider ?? knobs.provider;
    const model = v.model ?? (v.provider && v.provider !== knobs.provider ? '' : knobs.model);
    out.push({ n, provider, model, tier: v.tier ?? knobs.tier });
  }
  return out;
}

/** A fork that ended, in the order the forks ended. */
export interface ForkEnd {
  n: number;
  status: string;
}

export type ForkVerdict = { kind: 'wait' } | { kind: 'won'; n: number } | { kind: 'none' };

/**
 * Which fork continues the run: the first to end approved (`council_approved`,
 * `completion_promise_fulfilled`, `already_satisfied`: each fork's own completion check and
 * valves decided it), whatever the others are doing; none while some still run and none is
 * approved; `none` once all `k` ended without approval.
 */
export function forkVerdict(ended: readonly ForkEnd[], k: number): ForkVerdict {
  const first = ended.find(attemptApproved);
  if (first) return { kind: 'won', n: first.n };
  return ended.length >= k ? { kind: 'none' } : { kind: 'wait' };
}

/** What a fork's first prompt says of the stuck point it starts from. */
export function forkDirective(o: { parentId: string; n: number; k: number; from: ForkPoint; stuck: string; findings: string }): string {
  const findings = o.findings.trim() ? `\nWhat refused its last completion check:\n${o.findings.trim().slice(0, 2500)}` : '';
  return (
    `You are fork ${o.n} of ${o.k} of run ${o.parentId}, which got stuck: ${o.stuck.slice(0, 800)}. This working tree is ` +
    `${fromWhat(o.from)} of that run (${o.from.why}). Take a different approach from the one that got stuck, finish the ` +
    `PRD's work, and claim completion only once the tests pass.${findings}`
  ).slice(0, 4000);
}
