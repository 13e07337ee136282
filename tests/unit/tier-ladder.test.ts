/**
 * Owns the unit tests of rules/tier-ladder.ts (seed 002): the failure climb
 * LOW -> MEDIUM -> HIGH -> human, the scope triggers at LOW, the always-HIGH PRD patterns and pin,
 * de-escalation after single-file successes, the bounded change log, the dependency-manifest
 * list, and the knob-off no-op.
 */
import { describe, expect, it } from 'vitest';
import {
  ALWAYS_HIGH_PATTERNS,
  DEPENDENCY_MANIFESTS,
  LEVEL_TIER,
  alwaysHigh,
  initialLadder,
  isDependencyManifest,
  levelOfTier,
  observeLadder,
  type LadderKnobs,
  type LadderObservation,
  type LadderState,
  type Level,
  type TierChange,
} from '../../rules/tier-ladder.js';
import { structuralFacts } from '../../rules/structural-change.js';

const KNOBS: LadderKnobs = {
  tierLadder: true,
  tierLowMaxFailures: 2,
  tierMediumMaxFailures: 3,
  tierHighMaxFailures: 5,
  tierDeescalateSuccesses: 5,
};

function fail(iteration: number, over: Partial<LadderObservation> = {}): LadderObservation {
  return { iteration, failed: true, filesModified: 1, linesChanged: 10, dependencyManifestChanged: false, testFailures: null, ...over };
}

function ok(iteration: number, over: Partial<LadderObservation> = {}): LadderObservation {
  return { iteration, failed: false, filesModified: 1, linesChanged: 10, dependencyManifestChanged: false, testFailures: 0, ...over };
}

function deepFreeze<T>(value: T): T {
  if (value !== null && typeof value === 'object') {
    for (const v of Object.values(value)) deepFreeze(v);
    Object.freeze(value);
  }
  return value;
}

function at(level: Level, over: Partial<LadderState> = {}): LadderState {
  return { level, failuresAtLevel: 0, successStreak: 0, pinnedHigh: false, humanEscalated: false, changes: [], ...over };
}

/** Feeds observations in order from `start`; returns every result. */
function run(start: LadderState, observations: LadderObservation[], k: LadderKnobs = KNOBS) {
  let state = start;
  return observations.map((o) => {
    const r = observeLadder(deepFreeze(state), o, k);
    state = r.state;
    return r;
  });
}

describe('levels and tiers', () => {
  it('maps LOW/MEDIUM/HIGH to fast/development/planning and back', () => {
    expect(LEVEL_TIER).toEqual({ LOW: 'fast', MEDIUM: 'development', HIGH: 'planning' });
    for (const level of ['LOW', 'MEDIUM', 'HIGH'] as const) expect(levelOfTier(LEVEL_TIER[level])).toBe(level);
  });

  it('starts at the configured tier, unpinned, with no history', () => {
    expect(initialLadder('fast', null)).toEqual(at('LOW'));
    expect(initialLadder('development', null)).toEqual(at('MEDIUM'));
    expect(initialLadder('planning', null)).toEqual(at('HIGH'));
  });

  it('an always-HIGH PRD pins HIGH whatever the configured tier', () => {
    const s = initialLadder('fast', 'security');
    expect(s.level).toBe('HIGH');
    expect(s.pinnedHigh).toBe(true);
    expect(s.changes).toEqual<TierChange[]>([{ iteration: 0, from: 'LOW', to: 'HIGH', trigger: 'always-HIGH PRD (security)' }]);
    expect(initialLadder('planning', 'compliance')).toEqual(at('HIGH', { pinnedHigh: true }));
  });
});

describe('failure climb', () => {
  it('LOW -> MEDIUM at the 3rd consecutive failure, not before', () => {
    const results = run(at('LOW'), [fail(1), fail(2), fail(3)]);
    expect(results.map((r) => r.change)).toEqual([
      null,
      null,
      { iteration: 3, from: 'LOW', to: 'MEDIUM', trigger: '3 consecutive failures at LOW' },
    ]);
    expect(results.map((r) => r.state.failuresAtLevel)).toEqual([1, 2, 0]);
    expect(results[2]!.state.level).toBe('MEDIUM');
  });

  it('MEDIUM -> HIGH at the 4th failure at MEDIUM (failures reset on the level change)', () => {
    const results = run(at('LOW'), [fail(1), fail(2), fail(3), fail(4), fail(5), fail(6), fail(7)]);
    expect(results.map((r) => r.state.level)).toEqual(['LOW', 'LOW', 'MEDIUM', 'MEDIUM', 'MEDIUM', 'MEDIUM', 'HIGH']);
    expect(results[6]!.change).toEqual({ iteration: 7, from: 'MEDIUM', to: 'HIGH', trigger: '4 consecutive failures at MEDIUM' });
    expect(results[6]!.state.changes.map((c) => `${c.from}->${c.to}`)).toEqual(['LOW->MEDIUM', 'MEDIUM->HIGH']);
  });

  it('hands over to a human at the 6th failure at HIGH, and only once', () => {
    const results = run(
      at('HIGH'),
      Array.from({ length: 10 }, (_, i) => fail(i + 1)),
    );
    expect(results.map((r) => r.escalateHuman)).toEqual([false, false, false, false, false, true, false, false, false, false]);
    expect(results.every((r) => r.change === null && r.state.level === 'HIGH')).toBe(true);
    expect(results[5]!.state.humanEscalated).toBe(true);
    expect(results.at(-1)!.state.humanEscalated).toBe(true);
  });

  it('a success re-arms the human hand-over and resets the failure count', () => {
    const results = run(at('HIGH'), [
      ...Array.from({ length: 6 }, (_, i) => fail(i + 1)),
      ok(7),
      ...Array.from({ length: 6 }, (_, i) => fail(i + 8)),
    ]);
    expect(results.filter((r) => r.escalateHuman).length).toBe(2);
    expect(results[6]!.state).toMatchObject({ humanEscalated: false, failuresAtLevel: 0 });
    expect(results.at(-1)!.escalateHuman).toBe(true);
  });

  it('a success in between breaks the consecutive failures', () => {
    const results = run(at('LOW'), [fail(1), fail(2), ok(3), fail(4), fail(5)]);
    expect(results.every((r) => r.change === null)).toBe(true);
    expect(results.at(-1)!.state).toMatchObject({ level: 'LOW', failuresAtLevel: 2 });
  });

  it('follows the knobs', () => {
    const k = { ...KNOBS, tierLowMaxFailures: 0 };
    expect(observeLadder(at('LOW'), fail(1), k).change?.trigger).toBe('1 consecutive failures at LOW');
  });
});

describe('scope triggers at LOW', () => {
  it.each<[string, Partial<LadderObservation>, string]>([
    ['more than 5 files', { filesModified: 6 }, '6 files modified (> 5) at LOW'],
    ['more than 200 lines', { linesChanged: 201 }, '201 lines changed (> 200) at LOW'],
    ['a dependency manifest', { dependencyManifestChanged: true }, 'a dependency manifest changed at LOW'],
    ['more than 3 failing tests', { testFailures: 4 }, '4 failing tests (> 3) at LOW'],
  ])('%s climbs LOW -> MEDIUM on a successful iteration', (_name, over, trigger) => {
    const r = observeLadder(at('LOW'), ok(4, over), KNOBS);
    expect(r.change).toEqual({ iteration: 4, from: 'LOW', to: 'MEDIUM', trigger });
    expect(r.state.level).toBe('MEDIUM');
  });

  it('also fires on a failed iteration below the failure limit', () => {
    const r = observeLadder(at('LOW'), fail(1, { linesChanged: 500 }), KNOBS);
    expect(r.change?.to).toBe('MEDIUM');
    expect(r.change?.trigger).toBe('500 lines changed (> 200) at LOW');
    expect(r.state.failuresAtLevel).toBe(0);
  });

  it('names every reason that fired', () => {
    const r = observeLadder(at('LOW'), ok(2, { filesModified: 9, dependencyManifestChanged: true }), KNOBS);
    expect(r.change?.trigger).toBe('9 files modified (> 5); a dependency manifest changed at LOW');
  });

  it('does not fire at the thresholds themselves, or with no test run', () => {
    const r = observeLadder(at('LOW'), ok(1, { filesModified: 5, linesChanged: 200, testFailures: 3 }), KNOBS);
    expect(r.change).toBeNull();
    expect(observeLadder(at('LOW'), ok(1, { testFailures: null }), KNOBS).change).toBeNull();
  });

  it('does not apply above LOW', () => {
    for (const level of ['MEDIUM', 'HIGH'] as const) {
      const r = observeLadder(
        at(level),
        ok(1, { filesModified: 40, linesChanged: 4000, dependencyManifestChanged: true, testFailures: 20 }),
        KNOBS,
      );
      expect(r.change).toBeNull();
      expect(r.state.level).toBe(level);
    }
  });

  it('yields to a failure climb in the same iteration (one change per iteration)', () => {
    const r = observeLadder(at('LOW', { failuresAtLevel: 2 }), fail(3, { filesModified: 8 }), KNOBS);
    expect(r.change?.trigger).toBe('3 consecutive failures at LOW');
    expect(r.state.changes).toHaveLength(1);
  });
});

describe('always-HIGH PRDs', () => {
  it.each([
    ['security', 'Add OAuth login and store the session token securely.'],
    ['architecture', 'Redesign the system architecture around an event bus.'],
    ['production', 'Fix the production outage in the billing job and prepare a rollback.'],
    ['compliance', 'Make the data export GDPR ready.'],
  ])('%s', (category, prd) => {
    expect(alwaysHigh(prd)).toBe(category);
  });

  it('matches case-insensitively', () => {
    expect(alwaysHigh('HIPAA audit trail')).toBe('compliance');
    expect(alwaysHigh('SCHEMA MIGRATION for orders')).toBe('architecture');
  });

  it('a benign PRD is not always-HIGH', () => {
    expect(alwaysHigh('Add a dark-mode toggle to the settings page and a CSV export of the report table.')).toBeNull();
    expect(alwaysHigh('')).toBeNull();
  });

  it('keeps the seed four patterns, case-insensitive and stateless', () => {
    expect(ALWAYS_HIGH_PATTERNS).toHaveLength(4);
    for (const p of ALWAYS_HIGH_PATTERNS) {
      expect(p.flags).toContain('i');
      expect(p.flags).not.toContain('g');
    }
    expect(alwaysHigh('encrypt')).toBe('security');
    expect(alwaysHigh('encrypt')).toBe('security');
  });

  it('the first matching category wins', () => {
    expect(alwaysHigh('security incident in production')).toBe('security');
  });

  it('a pinned ladder never steps down but still hands over to a human', () => {
    const pinned = initialLadder('fast', 'production');
    const successes = run(
      pinned,
      Array.from({ length: 12 }, (_, i) => ok(i + 1)),
    );
    expect(successes.every((r) => r.change === null && r.state.level === 'HIGH')).toBe(true);
    const failures = run(
      pinned,
      Array.from({ length: 6 }, (_, i) => fail(i + 1)),
    );
    expect(failures.at(-1)!.escalateHuman).toBe(true);
  });
});

describe('de-escalation', () => {
  it('five single-file successes step down one level', () => {
    const results = run(
      at('HIGH'),
      Array.from({ length: 5 }, (_, i) => ok(i + 1)),
    );
    expect(results.slice(0, 4).every((r) => r.change === null)).toBe(true);
    expect(results[4]!.change).toEqual({
      iteration: 5,
      from: 'HIGH',
      to: 'MEDIUM',
      trigger: '5 consecutive single-file successes at HIGH',
    });
    expect(results[4]!.state).toMatchObject({ level: 'MEDIUM', successStreak: 0 });
  });

  it('steps one level per streak: HIGH -> MEDIUM -> LOW, then stays at LOW', () => {
    const results = run(
      at('HIGH'),
      Array.from({ length: 15 }, (_, i) => ok(i + 1, { filesModified: i % 2 })),
    );
    expect(results.filter((r) => r.change !== null).map((r) => [r.change!.iteration, r.change!.to])).toEqual([
      [5, 'MEDIUM'],
      [10, 'LOW'],
    ]);
    expect(results.at(-1)!.state.level).toBe('LOW');
  });

  it('a multi-file success resets the streak', () => {
    const results = run(at('MEDIUM'), [ok(1), ok(2), ok(3), ok(4), ok(5, { filesModified: 2 }), ok(6), ok(7), ok(8), ok(9)]);
    expect(results.map((r) => r.state.successStreak)).toEqual([1, 2, 3, 4, 0, 1, 2, 3, 4]);
    expect(results.every((r) => r.change === null)).toBe(true);
    expect(observeLadder(results.at(-1)!.state, ok(10), KNOBS).change?.to).toBe('LOW');
  });

  it('a failure resets the streak', () => {
    const results = run(at('MEDIUM'), [ok(1), ok(2), ok(3), ok(4), fail(5), ok(6)]);
    expect(results.map((r) => r.state.successStreak)).toEqual([1, 2, 3, 4, 0, 1]);
    expect(results.every((r) => r.change === null)).toBe(true);
  });

  it('an idle agent (exit 0, no change) is never stepped down, however long it idles', () => {
    const idle = (i: number) => ok(i, { changed: false, filesModified: 0, linesChanged: 0 });
    const results = run(
      at('MEDIUM'),
      Array.from({ length: 25 }, (_, i) => idle(i + 1)),
    );
    expect(results.every((r) => r.change === null)).toBe(true);
    expect(results.every((r) => r.state.successStreak === 0 && r.state.level === 'MEDIUM')).toBe(true);
  });

  it('an idle iteration breaks a streak of single-file successes and keeps the failures counted', () => {
    const results = run(at('MEDIUM'), [
      ok(1, { changed: true }),
      ok(2, { changed: true }),
      fail(3),
      ok(4, { changed: false, filesModified: 0 }),
      fail(5),
    ]);
    expect(results.map((r) => r.state.successStreak)).toEqual([1, 2, 0, 0, 0]);
    expect(results.map((r) => r.state.failuresAtLevel)).toEqual([0, 0, 1, 1, 2]);
  });

  it('an idle iteration leaves a human hand-over latched (no success re-arms it)', () => {
    const r = observeLadder(at('HIGH', { failuresAtLevel: 6, humanEscalated: true }), ok(9, { changed: false, filesModified: 0 }), KNOBS);
    expect(r.state).toMatchObject({ humanEscalated: true, failuresAtLevel: 6, level: 'HIGH' });
  });

  it('without the changed fact (runs from before it) an exit 0 with no file counts as a single-file success, as it did', () => {
    const results = run(
      at('MEDIUM'),
      Array.from({ length: 5 }, (_, i) => ok(i + 1, { filesModified: 0, linesChanged: 0 })),
    );
    expect(results[4]!.change?.to).toBe('LOW');
  });
});

describe('bookkeeping', () => {
  it('keeps only the last 20 changes', () => {
    // Three failures climb LOW -> MEDIUM; five single-file successes step back down.
    const cycle = (base: number) => [
      fail(base + 1),
      fail(base + 2),
      fail(base + 3),
      ...Array.from({ length: 5 }, (_, i) => ok(base + 4 + i)),
    ];
    const observations = Array.from({ length: 15 }, (_, c) => cycle(c * 8)).flat();
    const results = run(at('LOW'), observations);
    const changes = results.at(-1)!.state.changes;
    expect(results.filter((r) => r.change !== null)).toHaveLength(30);
    expect(changes).toHaveLength(20);
    expect(changes.at(-1)).toEqual(results.filter((r) => r.change !== null).at(-1)!.change);
    expect(changes[0]!.iteration).toBe(5 * 8 + 3);
  });

  it('never mutates the input state', () => {
    const s = deepFreeze(at('LOW', { failuresAtLevel: 2, changes: [{ iteration: 0, from: 'MEDIUM', to: 'LOW', trigger: 'x' }] }));
    const snapshot = structuredClone(s);
    const r = observeLadder(s, fail(3), KNOBS);
    expect(s).toEqual(snapshot);
    expect(r.state.changes).toHaveLength(2);
    expect(r.state.changes).not.toBe(s.changes);
  });

  it('knob off returns the same state object and changes nothing', () => {
    const off = { ...KNOBS, tierLadder: false };
    const s = deepFreeze(at('LOW', { failuresAtLevel: 2 }));
    for (const o of [fail(3), ok(3, { filesModified: 30, dependencyManifestChanged: true }), ok(4)]) {
      const r = observeLadder(s, o, off);
      expect(r.state).toBe(s);
      expect(r.change).toBeNull();
      expect(r.escalateHuman).toBe(false);
    }
    const high = deepFreeze(at('HIGH', { failuresAtLevel: 5 }));
    expect(observeLadder(high, fail(9), off)).toEqual({ state: high, change: null, escalateHuman: false });
  });
});

describe('dependency manifests', () => {
  it.each([
    'package.json',
    'package-lock.json',
    'requirements.txt',
    'pyproject.toml',
    'go.mod',
    'go.sum',
    'Cargo.toml',
    'Cargo.lock',
    'Gemfile',
    'pom.xml',
    'build.gradle',
  ])('lists %s', (name) => {
    expect(DEPENDENCY_MANIFESTS).toContain(name);
    expect(isDependencyManifest(name)).toBe(true);
  });

  it('matches by basename at any depth, with either separator', () => {
    expect(isDependencyManifest('packages/web/package.json')).toBe(true);
    expect(isDependencyManifest('services\\api\\go.mod')).toBe(true);
  });

  it('does not match look-alikes', () => {
    for (const path of [
      'src/package.json.ts',
      'docs/requirements.txt.md',
      'my-package.json',
      'gemfile.md',
      'src/index.ts',
      '',
      'package.json/readme',
    ]) {
      expect(isDependencyManifest(path)).toBe(false);
    }
  });
});

describe('structural triggers (seed 002, MEDIUM -> HIGH)', () => {
  const facts = (...paths: string[]) => structuralFacts(paths);

  it('reads the core, API contracts and services from the changed paths', () => {
    expect(
      facts(
        'src/core/engine.ts',
        'core/db.py',
        'api/openapi.yaml',
        'proto/orders.proto',
        'schema.graphql',
        'services/orders/main.go',
        'services/orders/db.go',
        'apps/web/src/app.tsx',
        'packages/ui/index.ts',
        'cmd/worker/main.go',
        'README.md',
      ),
    ).toEqual({
      corePaths: ['src/core/engine.ts', 'core/db.py'],
      contracts: ['api/openapi.yaml', 'proto/orders.proto', 'schema.graphql'],
      services: ['apps/web', 'cmd/worker', 'packages/ui', 'services/orders'],
    });
    // Not core: a name that only contains it; not a service: a file at the root of services/.
    expect(facts('src/hardcore.ts', 'lib/scoring.ts', 'services/README.md', 'docs/api.md')).toEqual({
      corePaths: [],
      contracts: [],
      services: [],
    });
  });

  it.each<[string, string[], string]>([
    ['the core', ['src/core/engine.ts'], 'core changed (src/core/engine.ts) at MEDIUM'],
    ['an API contract', ['api/openapi.json'], 'an API contract changed (api/openapi.json) at MEDIUM'],
    [
      'more than 3 services',
      ['services/a/x.go', 'services/b/x.go', 'services/c/x.go', 'apps/d/x.ts'],
      '4 services changed (> 3) at MEDIUM',
    ],
  ])('%s climbs MEDIUM -> HIGH', (_name, paths, trigger) => {
    const r = observeLadder(at('MEDIUM'), ok(6, { structural: facts(...paths) }), KNOBS);
    expect(r.change).toEqual({ iteration: 6, from: 'MEDIUM', to: 'HIGH', trigger });
  });

  it('climbs one level from LOW, where the scope triggers speak first', () => {
    expect(observeLadder(at('LOW'), ok(2, { structural: facts('core/x.py') }), KNOBS).change).toEqual({
      iteration: 2,
      from: 'LOW',
      to: 'MEDIUM',
      trigger: 'core changed (core/x.py) at LOW',
    });
    expect(observeLadder(at('LOW'), ok(2, { filesModified: 8, structural: facts('core/x.py') }), KNOBS).change?.trigger).toBe(
      '8 files modified (> 5) at LOW',
    );
  });

  it('the control: three services, ordinary paths, no facts (older runs) or HIGH move nothing', () => {
    const three = facts('services/a/x', 'services/b/x', 'services/c/x', 'src/app.ts');
    expect(observeLadder(at('MEDIUM'), ok(3, { structural: three }), KNOBS).change).toBeNull();
    expect(observeLadder(at('MEDIUM'), ok(3), KNOBS).change).toBeNull();
    expect(observeLadder(at('HIGH'), ok(3, { structural: facts('core/x.py') }), KNOBS).change).toBeNull();
  });
});
