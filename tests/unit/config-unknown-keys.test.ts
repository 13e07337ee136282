/**
 * cli/config.ts with many unknown keys: the error names the first few keys of each source and
 * counts the rest, and is made fast (a config file of 10,000 stray keys once took seconds and
 * 19 MB of error text).
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { ConfigError, MAX_UNKNOWN_KEYS_SHOWN, resolveKnobs, type ResolveKnobsOptions } from '../../cli/config.js';
import { KNOB_NAMES } from '../../schemas/knobs.js';

const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) fs.rmSync(d, { recursive: true, force: true });
});

function withConfig(content: Record<string, unknown>): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'vigil-config-keys-'));
  dirs.push(dir);
  fs.writeFileSync(path.join(dir, 'vigil.config.json'), JSON.stringify(content));
  return dir;
}

function configError(opts: Partial<ResolveKnobsOptions>): ConfigError {
  try {
    resolveKnobs({ flags: {}, sets: [], env: {}, cwd: opts.cwd ?? withConfig({}), ...opts });
  } catch (err) {
    if (err instanceof ConfigError) return err;
    throw err;
  }
  throw new Error('expected a ConfigError');
}

describe('resolveKnobs: many unknown keys', () => {
  it('reports 10,000 unknown keys in a config file as the first five and a count, in well under a second', () => {
    const content: Record<string, unknown> = { maxIterations: 0 };
    for (let i = 0; i < 10_000; i++) content[`strayKnob${i}`] = i;
    const cwd = withConfig(content);
    const file = path.join(cwd, 'vigil.config.json');

    const started = performance.now();
    const err = configError({ cwd });
    const ms = performance.now() - started;

    expect(MAX_UNKNOWN_KEYS_SHOWN).toBe(5);
    expect(err.problems).toHaveLength(1 + 5 + 1);
    expect(err.problems[0]).toContain(`invalid value for knob "maxIterations" (from ${file})`);
    expect(err.problems[1]).toBe(`unknown knob "strayKnob0" (from ${file}); valid knobs are: ${KNOB_NAMES.join(', ')}`);
    for (let i = 1; i < 5; i++) expect(err.problems[1 + i]).toBe(`unknown knob "strayKnob${i}" (from ${file}); see the valid knobs above`);
    expect(err.problems[6]).toBe(`9,995 more unknown knobs (from ${file}); \`vigil config --explain\` lists the valid ones`);
    expect(err.message.length).toBeLessThan(4_000);
    expect(ms).toBeLessThan(1_000);
  });

  it('still suggests a close match for each key it names', () => {
    const cwd = withConfig({ maxIteration: 3, tiers: 'fast', ...Object.fromEntries(Array.from({ length: 20 }, (_, i) => [`zz${i}`, i])) });
    const err = configError({ cwd });
    expect(err.problems[0]).toMatch(/^unknown knob "maxIteration" .*did you mean "maxIterations"\?$/);
    expect(err.problems[1]).toMatch(/^unknown knob "tiers" .*did you mean "tier"\?$/);
    expect(err.problems[2]).toMatch(/^unknown knob "zz0" .*valid knobs are: /);
    expect(err.problems.at(-1)).toMatch(/^17 more unknown knobs \(from /);
  });

  it('bounds each source on its own, and a huge key is shown cut short, without a slow search for a suggestion', () => {
    const huge = 'k'.repeat(1_000_000);
    const cwd = withConfig({ [huge]: 1 });
    const started = performance.now();
    const err = configError({ cwd, sets: Array.from({ length: 7 }, (_, i) => `nope${i}=1`) });
    expect(performance.now() - started).toBeLessThan(1_000);
    expect(err.problems.filter((p) => p.includes('(from --set nope'))).toHaveLength(5);
    expect(err.problems).toContain('2 more unknown knobs (from --set); `vigil config --explain` lists the valid ones');
    const last = err.problems.at(-1) as string;
    expect(last).toMatch(/^unknown knob "k{90,}… \(from .*vigil\.config\.json\); see the valid knobs above$/);
    expect(last.length).toBeLessThan(400);
  });
});
