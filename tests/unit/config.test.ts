/**
 * Owns the unit tests of cli/config.ts: knob resolution (flags and --set > env > config file >
 * defaults), the reported sources, ConfigError messages, requireAgentCommand and the
 * `vigil config --explain` renderings, the loki-mode LOKI_* aliases. Config files live in fresh temp dirs.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import {
  ConfigError,
  explainKnobs,
  explainKnobsJson,
  requireAgentCommand,
  resolveKnobs,
  type ResolveKnobsOptions,
} from '../../cli/config.js';
import { KNOBS, KNOB_NAMES, KnobsSchema, defaultKnobs } from '../../schemas/knobs.js';
import { KNOB_SECTIONS } from '../../schemas/knob-sections.js';
import { LOKI_ALIASES } from '../../cli/loki-aliases.js';

const tempDirs: string[] = [];

function tempDir(): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'vigil-config-test-'));
  tempDirs.push(dir);
  return dir;
}

afterEach(() => {
  for (const dir of tempDirs.splice(0)) fs.rmSync(dir, { recursive: true, force: true });
});

/** Writes `content` (JSON-encoded unless already a string) and returns the absolute path. */
function writeConfig(dir: string, content: unknown, name = 'vigil.config.json'): string {
  const file = path.join(dir, name);
  fs.writeFileSync(file, typeof content === 'string' ? content : JSON.stringify(content, null, 2));
  return file;
}

function resolve(opts: Partial<ResolveKnobsOptions> = {}) {
  return resolveKnobs({ flags: {}, sets: [], env: {}, cwd: opts.cwd ?? tempDir(), ...opts });
}

function configError(opts: Partial<ResolveKnobsOptions>): ConfigError {
  try {
    resolve(opts);
  } catch (err) {
    if (err instanceof ConfigError) return err;
    throw err;
  }
  throw new Error('expected resolveKnobs to throw a ConfigError');
}

describe('resolveKnobs: defaults', () => {
  it('returns the registry defaults when nothing is given', () => {
    const r = resolve();
    expect(r.knobs).toEqual(defaultKnobs());
    expect(KnobsSchema.parse(r.knobs)).toEqual(r.knobs);
    for (const k of KNOB_NAMES) expect(r.sources[k]).toEqual({ source: 'default', detail: 'default' });
  });

  it('ignores environment variables that are not knob variables, and undefined ones', () => {
    const r = resolve({ env: { PATH: '/bin', VIGIL_UNRELATED: 'x', VIGIL_MAX_ITERATIONS: undefined } });
    expect(r.knobs).toEqual(defaultKnobs());
  });

  it('ignores flags given as undefined (options the user did not pass)', () => {
    const r = resolve({ flags: { agentCommand: undefined, maxIterations: undefined } });
    expect(r.knobs).toEqual(defaultKnobs());
  });
});

describe('resolveKnobs: precedence', () => {
  function layered(with_: { file?: boolean; env?: boolean; set?: boolean; flag?: boolean }) {
    const cwd = tempDir();
    const file = with_.file ? writeConfig(cwd, { maxIterations: 7 }) : undefined;
    const r = resolve({
      cwd,
      env: with_.env ? { VIGIL_MAX_ITERATIONS: '8' } : {},
      sets: with_.set ? ['maxIterations=9'] : [],
      flags: with_.flag ? { maxIterations: '10' } : {},
    });
    return { r, file };
  }

  it('dedicated flag beats --set, env and file', () => {
    const { r } = layered({ file: true, env: true, set: true, flag: true });
    expect(r.knobs.maxIterations).toBe(10);
    expect(r.sources.maxIterations).toEqual({ source: 'flag', detail: '--max-iterations' });
  });

  it('--set beats env and file', () => {
    const { r } = layered({ file: true, env: true, set: true });
    expect(r.knobs.maxIterations).toBe(9);
    expect(r.sources.maxIterations).toEqual({ source: 'flag', detail: '--set maxIterations=9' });
  });

  it('env beats file', () => {
    const { r } = layered({ file: true, env: true });
    expect(r.knobs.maxIterations).toBe(8);
    expect(r.sources.maxIterations).toEqual({ source: 'env', detail: 'VIGIL_MAX_ITERATIONS' });
  });

  it('file beats default', () => {
    const { r, file } = layered({ file: true });
    expect(r.knobs.maxIterations).toBe(7);
    expect(r.sources.maxIterations).toEqual({ source: 'file', detail: file });
  });

  it('resolves each knob independently', () => {
    const cwd = tempDir();
    const file = writeConfig(cwd, { maxRetries: 3, tier: 'planning', testCommand: 'make test' });
    const r = resolve({
      cwd,
      env: { VIGIL_TIER: 'fast', VIGIL_MAX_WAIT_SECONDS: '120' },
      sets: ['testCommand=npm test'],
      flags: { agentCommand: 'my-agent --yes' },
    });
    expect(r.knobs).toMatchObject({
      maxRetries: 3,
      tier: 'fast',
      maxWaitSeconds: 120,
      testCommand: 'npm test',
      agentCommand: ['my-agent', '--yes'],
      maxIterations: 25,
    });
    expect(r.sources.maxRetries).toEqual({ source: 'file', detail: file });
    expect(r.sources.tier).toEqual({ source: 'env', detail: 'VIGIL_TIER' });
    expect(r.sources.maxWaitSeconds).toEqual({ source: 'env', detail: 'VIGIL_MAX_WAIT_SECONDS' });
    expect(r.sources.testCommand).toEqual({ source: 'flag', detail: '--set testCommand=npm test' });
    expect(r.sources.agentCommand).toEqual({ source: 'flag', detail: '--agent-command' });
    expect(r.sources.maxIterations).toEqual({ source: 'default', detail: 'default' });
  });

  it('reads vigil.config.json from cwd only when no explicit file is given', () => {
    const cwd = tempDir();
    writeConfig(cwd, { maxIterations: 7 });
    const other = writeConfig(cwd, { maxIterations: 11 }, 'other.json');
    expect(resolve({ cwd }).knobs.maxIterations).toBe(7);
    const r = resolve({ cwd, configFile: 'other.json' });
    expect(r.knobs.maxIterations).toBe(11);
    expect(r.sources.maxIterations).toEqual({ source: 'file', detail: other });
  });

  it('accepts an absolute explicit config file path', () => {
    const file = writeConfig(tempDir(), { tier: 'fast' }, 'custom.json');
    const r = resolve({ cwd: tempDir(), configFile: file });
    expect(r.knobs.tier).toBe('fast');
    expect(r.sources.tier.detail).toBe(file);
  });

  it('an empty environment variable counts as set (it can turn promise matching off)', () => {
    const r = resolve({ env: { VIGIL_COMPLETION_PROMISE: '' } });
    expect(r.knobs.completionPromise).toBe('');
    expect(r.sources.completionPromise.source).toBe('env');
  });
});

describe('resolveKnobs: --set', () => {
  it('splits on the first "=" only and keeps the rest of the value', () => {
    const r = resolve({ sets: ['testCommand=FOO=1 npm test -- --grep=x'] });
    expect(r.knobs.testCommand).toBe('FOO=1 npm test -- --grep=x');
  });

  it('trims the key, and lets the knob decide about spaces in the value', () => {
    const r = resolve({ sets: [' maxIterations = 12 ', 'completionPromise=  ALL DONE'] });
    expect(r.knobs.maxIterations).toBe(12);
    expect(r.knobs.completionPromise).toBe('  ALL DONE');
  });

  it('accepts an empty value', () => {
    const r = resolve({ sets: ['completionPromise='] });
    expect(r.knobs.completionPromise).toBe('');
  });

  it('lets the last --set of a key win', () => {
    const r = resolve({ sets: ['maxIterations=3', 'maxIterations=4'] });
    expect(r.knobs.maxIterations).toBe(4);
    expect(r.sources.maxIterations.detail).toBe('--set maxIterations=4');
  });

  it('lets a dedicated flag win over a --set of the same key', () => {
    const r = resolve({ sets: ['agentCommand=from-set'], flags: { agentCommand: 'from-flag' } });
    expect(r.knobs.agentCommand).toEqual(['from-flag']);
    expect(r.sources.agentCommand).toEqual({ source: 'flag', detail: '--agent-command' });
  });

  it('refuses an entry without "="', () => {
    const err = configError({ sets: ['maxIterations'] });
    expect(err.message).toBe(
      'invalid --set "maxIterations": there is no "="; expected the form --set key=value, e.g. --set maxIterations=5',
    );
  });

  it('refuses an empty key', () => {
    for (const entry of ['=5', '  =5']) {
      const err = configError({ sets: [entry] });
      expect(err.message).toContain('the key is empty');
      expect(err.message).toContain('--set key=value');
    }
  });
});

describe('resolveKnobs: agentCommand', () => {
  it('splits a command-line string with quotes and escapes (flag)', () => {
    const r = resolve({ flags: { agentCommand: `claude -p "fix the \\"bug\\"" --model 'opus 4'` } });
    expect(r.knobs.agentCommand).toEqual(['claude', '-p', 'fix the "bug"', '--model', 'opus 4']);
  });

  it('takes a JSON array from env', () => {
    const r = resolve({ env: { VIGIL_AGENT_COMMAND: '["my agent", "--flag=a b"]' } });
    expect(r.knobs.agentCommand).toEqual(['my agent', '--flag=a b']);
  });

  it('takes a JSON array or a command-line string from the config file', () => {
    const a = tempDir();
    writeConfig(a, { agentCommand: ['claude', '-p', 'two words'] });
    expect(resolve({ cwd: a }).knobs.agentCommand).toEqual(['claude', '-p', 'two words']);

    const b = tempDir();
    writeConfig(b, { agentCommand: `claude -p 'two words'` });
    expect(resolve({ cwd: b }).knobs.agentCommand).toEqual(['claude', '-p', 'two words']);
  });

  it('reports an unterminated quote', () => {
    const err = configError({ flags: { agentCommand: 'claude -p "oops' } });
    expect(err.message).toContain('invalid value for knob "agentCommand" (from --agent-command)');
    expect(err.message).toContain('unterminated " quote');
    expect(err.message).toContain(KNOBS.agentCommand.allowed);
  });

  it('reports an array with an empty word or a non-string', () => {
    const dir = tempDir();
    writeConfig(dir, { agentCommand: ['claude', ''] });
    expect(configError({ cwd: dir }).message).toContain('(word 2 is empty)');

    const dir2 = tempDir();
    writeConfig(dir2, { agentCommand: ['claude', 5] });
    expect(configError({ cwd: dir2 }).message).toContain('["claude",5] is not allowed');
  });
});

describe('resolveKnobs: booleans and native file types', () => {
  it('reads booleans from every source', () => {
    const dir = tempDir();
    writeConfig(dir, { legacyTierRotation: true });
    expect(resolve({ cwd: dir }).knobs.legacyTierRotation).toBe(true);
    expect(resolve({ env: { VIGIL_LEGACY_TIER_ROTATION: 'yes' } }).knobs.legacyTierRotation).toBe(true);
    expect(resolve({ cwd: dir, sets: ['legacyTierRotation=off'] }).knobs.legacyTierRotation).toBe(false);
    expect(resolve({ flags: { legacyTierRotation: 'TRUE' } }).knobs.legacyTierRotation).toBe(true);
  });

  it('converts strings in the config file with fromString', () => {
    const dir = tempDir();
    writeConfig(dir, { maxIterations: '5', legacyTierRotation: 'true', tier: 'FAST' });
    expect(resolve({ cwd: dir }).knobs).toMatchObject({ maxIterations: 5, legacyTierRotation: true, tier: 'fast' });
  });

  it('accepts an empty object and a UTF-8 byte order mark', () => {
    const dir = tempDir();
    writeConfig(dir, '\uFEFF{}');
    expect(resolve({ cwd: dir }).knobs).toEqual(defaultKnobs());
  });

  it('refuses values of the wrong JSON type', () => {
    const dir = tempDir();
    const file = writeConfig(dir, { maxIterations: 2.5, legacyTierRotation: 1, tier: null });
    const err = configError({ cwd: dir });
    expect(err.problems).toEqual([
      `invalid value for knob "maxIterations" (from ${file}): 2.5 is not allowed; expected an integer from 1 to 1000000`,
      `invalid value for knob "legacyTierRotation" (from ${file}): 1 is not allowed; expected true or false`,
      `invalid value for knob "tier" (from ${file}): null is not allowed; expected one of planning, development, fast`,
    ]);
  });
});

describe('resolveKnobs: invalid values name key, value, allowed range and source', () => {
  const expected = (source: string) =>
    `invalid value for knob "maxIterations" (from ${source}): "abc" is not allowed; expected an integer from 1 to 1000000`;

  it('from --set', () => {
    const err = configError({ sets: ['maxIterations=abc'] });
    expect(err).toBeInstanceOf(Error);
    expect(err.name).toBe('ConfigError');
    expect(err.message).toBe(expected('--set maxIterations=abc'));
  });

  it('from a dedicated flag', () => {
    expect(configError({ flags: { maxIterations: 'abc' } }).message).toBe(expected('--max-iterations'));
  });

  it('from the environment', () => {
    expect(configError({ env: { VIGIL_MAX_ITERATIONS: 'abc' } }).message).toBe(expected('VIGIL_MAX_ITERATIONS'));
  });

  it('from the config file', () => {
    const dir = tempDir();
    const file = writeConfig(dir, { maxIterations: 'abc' });
    expect(configError({ cwd: dir }).message).toBe(expected(file));
  });

  it('out of range', () => {
    const err = configError({ sets: ['heartbeatTimeoutSeconds=1', 'tier=turbo'] });
    expect(err.problems).toEqual([
      'invalid value for knob "heartbeatTimeoutSeconds" (from --set heartbeatTimeoutSeconds=1): "1" is not allowed; expected an integer from 2 to 600',
      'invalid value for knob "tier" (from --set tier=turbo): "turbo" is not allowed; expected one of planning, development, fast',
    ]);
  });

  it('even when a higher source overrides the bad value', () => {
    const err = configError({ env: { VIGIL_TIER: 'turbo' }, sets: ['tier=fast'] });
    expect(err.message).toContain('(from VIGIL_TIER): "turbo" is not allowed');
  });

  it('truncates very long values in the message', () => {
    const err = configError({ sets: [`completionPromise=${'x'.repeat(600)}`] });
    const line = err.problems[0] ?? '';
    expect(line).toContain('…');
    expect(line).toContain('expected text of at most 500 characters');
    expect(line.length).toBeLessThan(900);
  });
});

describe('resolveKnobs: unknown keys', () => {
  it('suggests a close match for --set', () => {
    const err = configError({ sets: ['maxIteration=5'] });
    expect(err.message).toBe('unknown knob "maxIteration" (from --set maxIteration=5); did you mean "maxIterations"?');
  });

  it('suggests despite case, dashes and underscores, and for environment variable names', () => {
    expect(configError({ sets: ['max-iterations=5'] }).message).toContain('did you mean "maxIterations"?');
    expect(configError({ sets: ['MAX_RETRIES=5'] }).message).toContain('did you mean "maxRetries"?');
    expect(configError({ sets: ['VIGIL_TIER=fast'] }).message).toContain('did you mean "tier"');
  });

  it('lists all valid knobs when nothing is close', () => {
    const err = configError({ sets: ['zzz=1'] });
    expect(err.message).toContain('unknown knob "zzz" (from --set zzz=1); valid knobs are: ');
    for (const k of KNOB_NAMES) expect(err.message).toContain(k);
  });

  it('does not accept inherited object properties as knobs', () => {
    expect(configError({ sets: ['constructor=1'] }).message).toContain('unknown knob "constructor"');
    const dir = tempDir();
    writeConfig(dir, '{"__proto__": {"maxIterations": 3}, "toString": 1}');
    const err = configError({ cwd: dir });
    expect(err.problems).toHaveLength(2);
    expect(err.message).toContain('unknown knob "__proto__"');
    expect(err.message).toContain('unknown knob "toString"');
  });

  it('names the key and the file for an unknown key in the config file', () => {
    const dir = tempDir();
    const file = writeConfig(dir, { tiers: 'fast' });
    expect(configError({ cwd: dir }).message).toBe(`unknown knob "tiers" (from ${file}); did you mean "tier"?`);
  });
});

describe('resolveKnobs: config file problems', () => {
  it('reports invalid JSON with the path and the parser message', () => {
    const dir = tempDir();
    const file = writeConfig(dir, '{ "maxIterations": 5, }');
    const err = configError({ cwd: dir });
    let parserMessage = '';
    try {
      JSON.parse('{ "maxIterations": 5, }');
    } catch (e) {
      parserMessage = (e as Error).message;
    }
    expect(err.message).toContain(`invalid JSON in config file ${file}: ${parserMessage}`);
    expect(err.message).toContain('JSON object of knob name to value');
  });

  it('reports an empty file as invalid JSON', () => {
    const dir = tempDir();
    writeConfig(dir, '');
    expect(configError({ cwd: dir }).message).toContain('invalid JSON in config file');
  });

  it('refuses a file that is not a JSON object', () => {
    const dir = tempDir();
    const file = writeConfig(dir, '[1, 2]');
    expect(configError({ cwd: dir }).message).toContain(`config file ${file} contains an array`);
  });

  it('refuses a missing explicit config file', () => {
    const cwd = tempDir();
    const err = configError({ cwd, configFile: 'missing.json' });
    expect(err.message).toContain(`config file not found: ${path.join(cwd, 'missing.json')}`);
    expect(err.message).toContain('check the path');
  });

  it('refuses a directory as config file', () => {
    const cwd = tempDir();
    fs.mkdirSync(path.join(cwd, 'vigil.config.json'));
    expect(configError({ cwd }).message).toContain('is not a regular file');
  });
});

describe('resolveKnobs: several errors', () => {
  it('reports all problems together, one per line, highest source first', () => {
    const cwd = tempDir();
    const file = writeConfig(cwd, { maxRetries: 0, bogus: true });
    const err = configError({
      cwd,
      flags: { agentTimeoutSeconds: '0' },
      sets: ['tier=turbo', 'nokey', 'maxIteration=5'],
      env: { VIGIL_LEGACY_TIER_ROTATION: 'maybe' },
    });
    expect(err.problems).toHaveLength(7);
    expect(err.message.split('\n')).toEqual(err.problems);
    expect(err.problems[0]).toContain('"agentTimeoutSeconds" (from --agent-timeout-seconds)');
    expect(err.problems[1]).toContain('"tier" (from --set tier=turbo)');
    expect(err.problems[2]).toContain('invalid --set "nokey"');
    expect(err.problems[3]).toContain('unknown knob "maxIteration"');
    expect(err.problems[4]).toContain('"legacyTierRotation" (from VIGIL_LEGACY_TIER_ROTATION)');
    expect(err.problems[5]).toContain(`"maxRetries" (from ${file}): 0 is not allowed; expected an integer from 1 to 10000`);
    expect(err.problems[6]).toContain(`unknown knob "bogus" (from ${file})`);
  });

  it('still checks flags and env when the config file is broken', () => {
    const cwd = tempDir();
    writeConfig(cwd, 'not json');
    const err = configError({ cwd, env: { VIGIL_TIER: 'x' } });
    expect(err.problems).toHaveLength(2);
  });
});

describe('requireAgentCommand', () => {
  it('throws the documented message when no agent command is set', () => {
    expect(() => requireAgentCommand(resolve())).toThrow(ConfigError);
    expect(() => requireAgentCommand(resolve())).toThrow(
      'no agent command: pass --agent-command CMD, set VIGIL_AGENT_COMMAND or agentCommand in vigil.config.json',
    );
  });

  it('returns the argv when set', () => {
    expect(requireAgentCommand(resolve({ env: { VIGIL_AGENT_COMMAND: 'my-agent --yes' } }))).toEqual(['my-agent', '--yes']);
  });
});

describe('explain', () => {
  function sample() {
    const cwd = tempDir();
    const file = writeConfig(cwd, { maxRetries: 9 });
    const long = `claude -p ${'"a long argument" '.repeat(8)}`;
    const r = resolve({
      cwd,
      env: { VIGIL_TIER: 'fast' },
      sets: ['maxIterations=5'],
      flags: { agentCommand: long },
    });
    return { r, file };
  }

  it('with all, has every knob name, section by section, with its value and source', () => {
    const { r, file } = sample();
    const text = explainKnobs(r, { all: true, width: 100 });
    let last = -1;
    for (const k of KNOB_SECTIONS.flatMap((s) => s.knobs)) {
      const at = text.search(new RegExp(`^${k} `, 'm'));
      expect(at, k).toBeGreaterThan(last);
      last = at;
    }
    expect(text).toMatch(/^maxIterations +5 +flag --set maxIterations=5$/m);
    expect(text).toMatch(/^tier +"fast" +env VIGIL_TIER$/m);
    expect(text).toMatch(/^maxDurationSeconds +0 +default$/m);
    expect(text).toContain(`file ${file}`.slice(-30));
    expect(text).toContain('flag --agent-command');
    expect(text).toContain(KNOBS.maxIterations.doc);
    expect(text).toMatch(/^== The completion council \(council\) ==$/m);
    expect(text).not.toContain('not shown');
  });

  it('shows arrays as JSON, cuts long values with …, and fits 100 columns', () => {
    const { r } = sample();
    const text = explainKnobs(r, { all: true, width: 100 });
    expect(text).toContain('["claude","-p","a long argument"');
    const agentLine = text.split('\n').find((l) => l.startsWith('agentCommand')) ?? '';
    expect(agentLine.endsWith('…')).toBe(true);
    expect(agentLine.length).toBeLessThanOrEqual(100);
    for (const line of text.split('\n')) expect(line.length, line).toBeLessThanOrEqual(100);
  });

  it('keeps the end of a long config file path', () => {
    const deep = path.join(tempDir(), 'a-very-long-directory-name-for-testing', 'and-another-one-that-is-long');
    fs.mkdirSync(deep, { recursive: true });
    writeConfig(deep, { maxRetries: 9 });
    const text = explainKnobs(resolve({ cwd: deep }), { width: 100 });
    const line = text.split('\n').find((l) => l.startsWith('maxRetries')) ?? '';
    expect(line.length).toBeLessThanOrEqual(100);
    expect(line).toMatch(/ file ….*-is-long\/vigil\.config\.json$/);
  });

  it('JSON form has one full entry per knob', () => {
    const { r, file } = sample();
    const rows = explainKnobsJson(r);
    expect(rows.map((x) => x.name)).toEqual(KNOB_NAMES);
    expect(rows.find((x) => x.name === 'maxRetries')).toEqual({
      name: 'maxRetries',
      value: 9,
      source: 'file',
      detail: file,
      env: 'VIGIL_MAX_RETRIES',
      allowed: 'an integer from 1 to 10000',
      doc: KNOBS.maxRetries.doc,
      section: 'run',
      firstClass: false,
    });
    const agent = rows.find((x) => x.name === 'agentCommand');
    expect(agent?.value).toEqual(r.knobs.agentCommand);
    expect(agent?.detail).toBe('--agent-command');
    expect(JSON.parse(JSON.stringify(rows))).toEqual(rows);
  });
});

describe('loki-mode aliases (LOKI_*)', () => {
  it('reads a LOKI_ variable as its knob, says so in one line, and explain shows the alias as the source', () => {
    const r = resolve({ env: { LOKI_MAX_ITERATIONS: '40', LOKI_COUNCIL_SIZE: '5', LOKI_HARD_GATES: 'false', LOKI_BUDGET_LIMIT: '12.5' } });
    expect(r.knobs).toMatchObject({ maxIterations: 40, councilSize: 5, qualityGates: false, budgetUsd: 12.5 });
    expect(r.sources.maxIterations).toEqual({ source: 'env', detail: 'LOKI_MAX_ITERATIONS (alias of VIGIL_MAX_ITERATIONS)' });
    expect(r.notes).toEqual([
      'LOKI_MAX_ITERATIONS is read as knob maxIterations (VIGIL_MAX_ITERATIONS); loki-mode alias',
      'LOKI_COUNCIL_SIZE is read as knob councilSize (VIGIL_COUNCIL_SIZE); loki-mode alias',
      'LOKI_BUDGET_LIMIT is read as knob budgetUsd (VIGIL_BUDGET_USD); loki-mode alias',
      'LOKI_HARD_GATES is read as knob qualityGates (VIGIL_QUALITY_GATES); loki-mode alias',
    ]);
    expect(explainKnobs(r, { width: 140 })).toMatch(/^maxIterations +40 +env LOKI_MAX_ITERATIONS \(alias of VIGIL_MAX_ITERATIONS\)$/m);
    expect(explainKnobsJson(r).find((x) => x.name === 'councilSize')).toMatchObject({
      value: 5,
      source: 'env',
      detail: 'LOKI_COUNCIL_SIZE (alias of VIGIL_COUNCIL_SIZE)',
    });
  });

  it('a VIGIL_ variable beats its LOKI_ alias, and the note says the alias was ignored', () => {
    const r = resolve({ env: { VIGIL_MAX_ITERATIONS: '7', LOKI_MAX_ITERATIONS: '40' } });
    expect(r.knobs.maxIterations).toBe(7);
    expect(r.sources.maxIterations).toEqual({ source: 'env', detail: 'VIGIL_MAX_ITERATIONS' });
    expect(r.notes).toEqual(['LOKI_MAX_ITERATIONS is ignored: VIGIL_MAX_ITERATIONS is set (knob maxIterations)']);
  });

  it('keeps the precedence: flags and the config file around the environment, aliases included', () => {
    const cwd = tempDir();
    writeConfig(cwd, { maxRetries: 9, councilSize: 7 });
    const r = resolve({ cwd, env: { LOKI_MAX_RETRIES: '20' }, sets: ['maxRetries=3'] });
    expect(r.knobs.maxRetries).toBe(3); // --set beats the alias
    expect(resolve({ cwd, env: { LOKI_COUNCIL_SIZE: '4' } }).knobs.councilSize).toBe(4); // the alias beats the file
  });

  it('rejects a bad alias value naming the alias, like any other value', () => {
    const err = configError({ env: { LOKI_AUTONOMY_MODE: 'checkpoint' } });
    expect(err.problems).toEqual([
      'invalid value for knob "autonomyMode" (from LOKI_AUTONOMY_MODE (alias of VIGIL_AUTONOMY_MODE)): "checkpoint" is not ' +
        'allowed; expected one of supervised, perpetual',
    ]);
  });

  it('maps only to existing knobs, one alias per knob, each in the docs/knobs.md table with its VIGIL_ name', () => {
    const readme = fs.readFileSync(path.resolve(path.dirname(new URL(import.meta.url).pathname), '../../docs/knobs.md'), 'utf8');
    const names = Object.values(LOKI_ALIASES);
    expect(new Set(names).size).toBe(names.length);
    for (const [knob, alias] of Object.entries(LOKI_ALIASES)) {
      expect(KNOB_NAMES).toContain(knob);
      expect(alias).toMatch(/^(LOKI_[A-Z0-9_]+|COMPLEXITY_TIER)$/); // the original read its complexity override unprefixed
      expect(readme, alias).toContain(`| \`${alias}\` | \`${knob}\` | \`${KNOBS[knob as keyof typeof KNOBS].env}\` |`);
    }
  });

  it("reads the original's COMPLEXITY_TIER as the complexity knob, which skips the detection", () => {
    const r = resolve({ env: { COMPLEXITY_TIER: 'complex' } });
    expect(r.knobs.complexity).toBe('complex');
    expect(r.notes).toEqual(['COMPLEXITY_TIER is read as knob complexity (VIGIL_COMPLEXITY); loki-mode alias']);
    expect(resolve({ env: { COMPLEXITY_TIER: 'complex', VIGIL_COMPLEXITY: 'simple' } }).knobs.complexity).toBe('simple');
    expect(() => resolve({ env: { COMPLEXITY_TIER: 'huge' } })).toThrow(
      /invalid value for knob "complexity" \(from COMPLEXITY_TIER \(alias of VIGIL_COMPLEXITY\)\): "huge" is not allowed/,
    );
  });

  it('ignores LOKI_ variables that are no alias', () => {
    const r = resolve({ env: { LOKI_SESSION_MODEL: 'opus', LOKI_FAILOVER: 'true' } });
    expect(r.notes).toEqual([]);
    expect(r.knobs).toEqual(defaultKnobs());
  });
});
