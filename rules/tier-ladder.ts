/**
 * The model-tier ladder (seed 002 "Tiered Agent Escalation Triggers"; spec §6 notes the original
 * only had it as agent guidance). Owns the LOW/MEDIUM/HIGH levels and their tier mapping, the
 * always-HIGH PRD patterns, the dependency-manifest list, and the carried `LadderState`: after each
 * iteration `observeLadder` decides whether the level climbs, steps down, or hands over to a human.
 *
 * Rules:
 *   - Knob off (`tierLadder` false): the state is returned untouched and nothing changes.
 *   - Failures are counted per level and reset whenever the level changes or an iteration
 *     succeeds, so they are consecutive failures at the current level. After counting a failure:
 *       LOW    with failuresAtLevel > tierLowMaxFailures    (2) -> MEDIUM (3rd failure);
 *       MEDIUM with failuresAtLevel > tierMediumMaxFailures (3) -> HIGH   (4th failure);
 *       HIGH   with failuresAtLevel > tierHighMaxFailures   (5) -> escalateHuman (6th failure),
 *       once: `humanEscalated` latches until a successful iteration re-arms it.
 *   - Scope triggers, on any iteration (successful or failed) while at LOW: more than 5 files
 *     modified, more than 200 lines changed, a dependency manifest changed, or more than 3 failing
 *     tests -> MEDIUM; the trigger names every reason that fired. A failure climb takes precedence
 *     (at most one change per iteration).
 *   - Structural triggers (rules/structural-change.ts), at LOW or MEDIUM when nothing else moved the
 *     level: the core, an API contract or more than 3 services changed -> one level up.
 *   - De-escalation: `tierDeescalateSuccesses` (5) consecutive successful iterations that each
 *     modified at most 1 file step the level down by one (HIGH -> MEDIUM -> LOW), unless the PRD
 *     pinned HIGH. A success touching more files, or any failure, resets the streak.
 *   - An idle iteration (exit 0 but the tree did not change; observed when `changed` is given) is
 *     neither a success nor a failure: it resets the success streak and leaves the failure count
 *     as it was, so an agent that does nothing is never stepped down. (Runs from before
 *     `vigil-completion-rule-v1` give no `changed` and count it as a single-file success.)
 *   - Every level change resets failuresAtLevel and successStreak; `changes` keeps the last 20.
 *   - An always-HIGH PRD (security, architecture, production, compliance) starts and stays at HIGH:
 *     failures may still hand over to a human, but the ladder never steps down.
 *
 * Pure: no clocks, randomness, environment or I/O; the input state is never mutated.
 */

import { structuralReasons, type StructuralFacts } from './structural-change.js';

type TierName = 'fast' | 'development' | 'planning';

export type Level = 'LOW' | 'MEDIUM' | 'HIGH';

export const LEVEL_TIER: Record<Level, TierName> = { LOW: 'fast', MEDIUM: 'development', HIGH: 'planning' };

export function levelOfTier(t: TierName): Level {
  switch (t) {
    case 'fast':
      return 'LOW';
    case 'development':
      return 'MEDIUM';
    case 'planning':
      return 'HIGH';
  }
}

/** The seed's always-HIGH patterns, verbatim, matched case-insensitively anywhere in the PRD. */
export const ALWAYS_HIGH_PATTERNS: readonly RegExp[] = [
  /(auth|security|encrypt|secret|credential|token|password)/i,
  /(architecture|system.design|schema.migration)/i,
  /(production|incident|outage|rollback)/i,
  /(compliance|gdpr|hipaa|soc2|pci)/i,
];

/** The category of each pattern of ALWAYS_HIGH_PATTERNS, same order. */
export const ALWAYS_HIGH_CATEGORIES = ['security', 'architecture', 'production', 'compliance'] as const;

export function alwaysHigh(prdText: string): string | null {
  for (let i = 0; i < ALWAYS_HIGH_PATTERNS.length; i++) {
    if (ALWAYS_HIGH_PATTERNS[i]?.test(prdText)) return ALWAYS_HIGH_CATEGORIES[i] ?? null;
  }
  return null;
}

/** Scope triggers at LOW (seed 002 LOW -> MEDIUM table). */
export const SCOPE_LIMITS = { filesModified: 5, linesChanged: 200, testFailures: 3 } as const;

export const LADDER_CHANGES_KEPT = 20;

export interface TierChange {
  iteration: number;
  from: Level;
  to: Level;
  trigger: string;
}

export interface LadderState {
  level: Level;
  failuresAtLevel: number;
  successStreak: number;
  pinnedHigh: boolean;
  humanEscalated: boolean;
  /** The most recent level changes, oldest first, at most LADDER_CHANGES_KEPT. */
  changes: TierChange[];
}

/**
 * The ladder at run start: the configured tier's level, or HIGH pinned when the PRD matched an
 * always-HIGH category (recorded as a change at iteration 0 when that differs from the tier).
 */
export function initialLadder(startTier: TierName, alwaysHighCategory: string | null): LadderState {
  const start = levelOfTier(startTier);
  if (alwaysHighCategory === null) {
    return { level: start, failuresAtLevel: 0, successStreak: 0, pinnedHigh: false, humanEscalated: false, changes: [] };
  }
  const changes: TierChange[] =
    start === 'HIGH' ? [] : [{ iteration: 0, from: start, to: 'HIGH', trigger: `always-HIGH PRD (${alwaysHighCategory})` }];
  return { level: 'HIGH', failuresAtLevel: 0, successStreak: 0, pinnedHigh: true, humanEscalated: false, changes };
}

export interface LadderObservation {
  iteration: number;
  failed: boolean;
  filesModified: number;
  linesChanged: number;
  dependencyManifestChanged: boolean;
  /** Failing tests in the latest run; null when there was no test run. */
  testFailures: number | null;
  /** Whether the iteration changed the tree; absent: not observed (older runs), an exit 0 is a success. */
  changed?: boolean;
  /** What the changed paths say about the change's structure; absent: not observed (older runs). */
  structural?: StructuralFacts;
}

export interface LadderKnobs {
  tierLadder: boolean;
  tierLowMaxFailures: number;
  tierMediumMaxFailures: number;
  tierHighMaxFailures: number;
  tierDeescalateSuccesses: number;
}

const STEP_UP: Record<Level, Level | null> = { LOW: 'MEDIUM', MEDIUM: 'HIGH', HIGH: null };
const STEP_DOWN: Record<Level, Level | null> = { LOW: null, MEDIUM: 'LOW', HIGH: 'MEDIUM' };

function maxFailures(level: Level, k: LadderKnobs): number {
  if (level === 'LOW') return k.tierLowMaxFailures;
  if (level === 'MEDIUM') return k.tierMediumMaxFailures;
  return k.tierHighMaxFailures;
}

function scopeReasons(o: LadderObservation): string[] {
  const reasons: string[] = [];
  if (o.filesModified > SCOPE_LIMITS.filesModified) reasons.push(`${o.filesModified} files modified (> ${SCOPE_LIMITS.filesModified})`);
  if (o.linesChanged > SCOPE_LIMITS.linesChanged) reasons.push(`${o.linesChanged} lines changed (> ${SCOPE_LIMITS.linesChanged})`);
  if (o.dependencyManifestChanged) reasons.push('a dependency manifest changed');
  if (o.testFailures !== null && o.testFailures > SCOPE_LIMITS.testFailures) {
    reasons.push(`${o.testFailures} failing tests (> ${SCOPE_LIMITS.testFailures})`);
  }
  return reasons;
}

export function observeLadder(
  s: LadderState,
  o: LadderObservation,
  k: LadderKnobs,
): { state: LadderState; change: TierChange | null; escalateHuman: boolean } {
  if (!k.tierLadder) return { state: s, change: null, escalateHuman: false };

  let failuresAtLevel: number;
  let successStreak: number;
  let humanEscalated = s.humanEscalated;
  let escalateHuman = false;
  let to: Level | null = null;
  let trigger = '';

  if (o.failed) {
    failuresAtLevel = s.failuresAtLevel + 1;
    successStreak = 0;
    if (failuresAtLevel > maxFailures(s.level, k)) {
      const up = STEP_UP[s.level];
      if (up !== null) {
        to = up;
        trigger = `${failuresAtLevel} consecutive failures at ${s.level}`;
      } else if (!humanEscalated) {
        escalateHuman = true;
        humanEscalated = true;
      }
    }
  } else if (o.changed === false) {
    // Idle: no work was done, so nothing is learned about the task's difficulty.
    failuresAtLevel = s.failuresAtLevel;
    successStreak = 0;
  } else {
    failuresAtLevel = 0;
    humanEscalated = false;
    successStreak = o.filesModified <= 1 ? s.successStreak + 1 : 0;
    const down = STEP_DOWN[s.level];
    if (successStreak >= k.tierDeescalateSuccesses && down !== null && !s.pinnedHigh) {
      to = down;
      trigger = `${successStreak} consecutive single-file successes at ${s.level}`;
    }
  }

  if (to === null && s.level === 'LOW') {
    const reasons = scopeReasons(o);
    if (reasons.length > 0) {
      to = 'MEDIUM';
      trigger = `${reasons.join('; ')} at LOW`;
    }
  }

  // Structural triggers (seed 002's MEDIUM -> HIGH table): one level up from LOW or MEDIUM.
  const up = STEP_UP[s.level];
  if (to === null && up !== null) {
    const reasons = structuralReasons(o.structural);
    if (reasons.length > 0) {
      to = up;
      trigger = `${reasons.join('; ')} at ${s.level}`;
    }
  }

  if (to === null) {
    return {
      state: { ...s, failuresAtLevel, successStreak, humanEscalated, changes: [...s.changes] },
      change: null,
      escalateHuman,
    };
  }

  const change: TierChange = { iteration: o.iteration, from: s.level, to, trigger };
  const changes = [...s.changes, change];
  return {
    state: {
      level: to,
      failuresAtLevel: 0,
      successStreak: 0,
      pinnedHigh: s.pinnedHigh,
      humanEscalated,
      changes: changes.slice(Math.max(0, changes.length - LADDER_CHANGES_KEPT)),
    },
    change,
    escalateHuman,
  };
}

/** Dependency manifests and lock files, by basename. */
export const DEPENDENCY_MANIFESTS: readonly string[] = [
  'package.json',
  'package-lock.json',
  'npm-shrinkwrap.json',
  'yarn.lock',
  'pnpm-lock.yaml',
  'bun.lockb',
  'requirements.txt',
  'requirements-dev.txt',
  'Pipfile',
  'Pipfile.lock',
  'pyproject.toml',
  'poetry.lock',
  'setup.py',
  'setup.cfg',
  'go.mod',
  'go.sum',
  'Cargo.toml',
  'Cargo.lock',
  'Gemfile',
  'Gemfile.lock',
  'pom.xml',
  'build.gradle',
  'build.gradle.kts',
  'composer.json',
  'composer.lock',
  'mix.exs',
  'mix.lock',
  'Package.swift',
  'Package.resolved',
];

const MANIFEST_SET: ReadonlySet<string> = new Set(DEPENDENCY_MANIFESTS);

export function isDependencyManifest(path: string): boolean {
  const base = path.split(/[\\/]/).pop() ?? '';
  return MANIFEST_SET.has(base);
}
