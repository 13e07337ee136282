/**
 * The knobs in sections and the named profiles (schemas/knob-sections.ts, schemas/knob-profiles.ts):
 * every knob in exactly one section, about twenty first-class, each profile's values valid; a
 * profile sits under every knob set on purpose (file, environment, flag) and `vigil config
 * --explain` names it as the source; the explanation shows the first-class knobs and those set
 * anywhere, and says how many it left out.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { ConfigError, explainKnobs, explainKnobsJson, resolveKnobs, type ResolveKnobsOptions } from '../../cli/config.js';
import { KNOB_PROFILE_NAMES, KNOB_PROFILES } from '../../schemas/knob-profiles.js';
import { FIRST_CLASS_KNOBS, isFirstClass, KNOB_SECTIONS, sectionOf } from '../../schemas/knob-sections.js';
import { defaultKnobs, KNOB_NAMES, KnobsSchema, type KnobName } from '../../schemas/knobs.js';

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) fs.rmSync(d, { recursive: true, force: true });
});
function tempDir(): string {
  const d = fs.mkdtempSync(path.join(os.tmpdir(), 'vigil-knob-sections-'));
  dirs.push(d);
  return d;
}
function resolve(opts: Partial<ResolveKnobsOptions> = {}) {
  return resolveKnobs({ flags: {}, sets: [], env: {}, cwd: opts.cwd ?? tempDir(), ...opts });
}

describe('sections', () => {
  it('hold every knob exactly once, and no name that is not a knob', () => {
    const listed = KNOB_SECTIONS.flatMap((s) => s.knobs);
    expect([...listed].sort()).toEqual([...KNOB_NAMES].sort());
    expect(new Set(listed).size).toBe(listed.length);
    for (const k of KNOB_NAMES) expect(sectionOf(k).knobs).toContain(k);
  });

  it('have unique ids and titles, and an intro each', () => {
    expect(new Set(KNOB_SECTIONS.map((s) => s.id)).size).toBe(KNOB_SECTIONS.length);
    expect(new Set(KNOB_SECTIONS.map((s) => s.title)).size).toBe(KNOB_SECTIONS.length);
    for (const s of KNOB_SECTIONS) expect(s.intro.length, s.id).toBeGreaterThan(20);
    for (const id of ['gates', 'council', 'review', 'tiers', 'notify', 'memory', 'breaker', 'sandbox', 'delivery']) {
      expect(KNOB_SECTIONS.map((s) => s.id)).toContain(id);
    }
  });

  it('mark about twenty knobs first-class, each a knob, the rest advanced', () => {
    expect(FIRST_CLASS_KNOBS.length).toBeGreaterThanOrEqual(16);
    expect(FIRST_CLASS_KNOBS.length).toBeLessThanOrEqual(24);
    expect(new Set(FIRST_CLASS_KNOBS).size).toBe(FIRST_CLASS_KNOBS.length);
    for (const k of FIRST_CLASS_KNOBS) expect(KNOB_NAMES).toContain(k);
    expect(KNOB_NAMES.filter(isFirstClass)).toHaveLength(FIRST_CLASS_KNOBS.length);
  });
});

describe('profiles', () => {
  it.each(KNOB_PROFILE_NAMES)('%s sets only knobs, each to a value its schema accepts, none at its default', (name) => {
    const defaults = defaultKnobs();
    for (const [k, v] of Object.entries(KNOB_PROFILES[name].knobs)) {
      expect(KNOB_NAMES, k).toContain(k);
      expect(KnobsSchema.shape[k as KnobName].safeParse(v).success, k).toBe(true);
      expect(v, `${name} sets ${k} to its default`).not.toEqual(defaults[k as KnobName]);
    }
  });

  it('default is the registry defaults; minimal turns the judges off but the evidence gate; strict tightens them', () => {
    expect(resolve({ profile: 'default' }).knobs).toEqual(defaultKnobs());
    const minimal = resolve({ profile: 'minimal' }).knobs;
    expect(minimal).toMatchObject({ councilEnabled: false, qualityGates: false, codeReview: false, prdChecklist: false });
    // Honest: a claim still needs a diff, green tests and no secret.
    expect(minimal).toMatchObject({ evidenceGate: true, evidenceSecretScan: true, evidenceNoTestsAffirmative: false, sandbox: 'auto' });
    const strict = resolve({ profile: 'strict' }).knobs;
    const d = defaultKnobs();
    expect(strict.councilSize).toBeGreaterThan(d.councilSize);
    expect(strict.councilThreshold).toBe(strict.councilSize);
    expect(strict.reviewMergeabilityMin).toBeGreaterThan(d.reviewMergeabilityMin);
    expect(strict.affectedTestsFullEvery).toBe(1);
    // Strict never turns a judge off.
    for (const k of ['councilEnabled', 'qualityGates', 'codeReview', 'prdChecklist', 'evidenceGate'] as const) expect(strict[k]).toBe(true);
  });
});

describe('a profile under the knobs set on purpose', () => {
  it('gives its values, each with the profile as the source', () => {
    const r = resolve({ profile: 'minimal' });
    expect(r.knobs).toEqual({ ...defaultKnobs(), ...KNOB_PROFILES.minimal.knobs });
    expect(r.sources.councilEnabled).toEqual({ source: 'profile', detail: 'minimal (--knob-profile)' });
    expect(r.sources.maxIterations).toEqual({ source: 'default', detail: 'default' });
  });

  it('loses to the config file, the environment, --set and a dedicated flag', () => {
    const cwd = tempDir();
    const file = path.join(cwd, 'vigil.config.json');
    fs.writeFileSync(file, JSON.stringify({ councilSize: 4 }));
    const r = resolve({
      cwd,
      profile: 'strict',
      env: { VIGIL_COUNCIL_THRESHOLD: '3' },
      sets: ['reviewComplexity=simple'],
    });
    expect(r.knobs).toMatchObject({ councilSize: 4, councilThreshold: 3, reviewComplexity: 'simple', reviewMergeabilityMin: 80 });
    expect(r.sources.councilSize).toEqual({ source: 'file', detail: file });
    expect(r.sources.councilThreshold).toEqual({ source: 'env', detail: 'VIGIL_COUNCIL_THRESHOLD' });
    expect(r.sources.reviewComplexity.source).toBe('flag');
    expect(r.sources.reviewMergeabilityMin).toEqual({ source: 'profile', detail: 'strict (--knob-profile)' });
  });

  it('is named by VIGIL_KNOB_PROFILE when no flag names one; the flag wins', () => {
    expect(resolve({ env: { VIGIL_KNOB_PROFILE: 'minimal' } }).sources.codeReview).toEqual({
      source: 'profile',
      detail: 'minimal (VIGIL_KNOB_PROFILE)',
    });
    const both = resolve({ env: { VIGIL_KNOB_PROFILE: 'minimal' }, profile: 'strict' });
    expect(both.knobs.codeReview).toBe(true);
    expect(both.knobs.councilSize).toBe(5);
  });

  it('refuses a profile that does not exist, naming the ones that do', () => {
    let err: unknown;
    try {
      resolve({ env: { VIGIL_KNOB_PROFILE: 'lenient' } });
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(ConfigError);
    expect((err as ConfigError).problems).toEqual([
      'unknown knob profile "lenient" (from VIGIL_KNOB_PROFILE); the profiles are minimal, default, strict',
    ]);
  });
});

describe('vigil config --explain', () => {
  const line = (text: string, knob: string): string => text.split('\n').find((l) => l.startsWith(`${knob} `)) ?? '';

  it('shows the first-class knobs and every knob set anywhere, and says how many it left out', () => {
    const r = resolve({ profile: 'strict', env: { VIGIL_GATE_PAUSE_AFTER: '4' } });
    const text = explainKnobs(r, { width: 120 });
    for (const k of FIRST_CLASS_KNOBS) expect(line(text, k), k).not.toBe('');
    expect(line(text, 'councilThreshold')).toMatch(/^councilThreshold +5 +profile strict \(--knob-profile\)$/);
    expect(line(text, 'gatePauseAfter')).toMatch(/^gatePauseAfter +4 +env VIGIL_GATE_PAUSE_AFTER$/);
    expect(line(text, 'breakerFailures')).toBe('');
    const shown = KNOB_NAMES.filter((k) => line(text, k) !== '').length;
    expect(shown).toBe(FIRST_CLASS_KNOBS.length + 5); // strict's four advanced knobs and gatePauseAfter
    expect(text).toContain(`${KNOB_NAMES.length - shown} advanced knobs at their defaults are not shown`);
    expect(text.split('\n').slice(-1)).toEqual(['Every knob: vigil config --explain --all']);
  });

  it('with all, shows every knob and hides none', () => {
    const text = explainKnobs(resolve(), { width: 120, all: true });
    for (const k of KNOB_NAMES) expect(line(text, k), k).not.toBe('');
    expect(text).not.toContain('not shown');
  });

  it('--json has every knob with its section and mark, the profile as a source', () => {
    const rows = explainKnobsJson(resolve({ profile: 'minimal' }));
    expect(rows).toHaveLength(KNOB_NAMES.length);
    expect(rows.find((x) => x.name === 'qualityGates')).toMatchObject({
      value: false,
      source: 'profile',
      detail: 'minimal (--knob-profile)',
      section: 'gates',
      firstClass: true,
    });
    expect(rows.find((x) => x.name === 'breakerFailures')).toMatchObject({ section: 'breaker', firstClass: false });
  });
});
