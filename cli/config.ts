/**
 * Owns knob resolution for the `vigil` CLI client: dedicated flags and `--set key=value` >
 * environment (`KNOBS[k].env`) > config file (`vigil.config.json`) > knob profile > registry
 * defaults, validated against schemas/knobs.ts. Every problem becomes one line of a user-facing
 * `ConfigError`; all problems are collected together. `vigil config --explain`: cli/knob-explain.ts.
 *
 * Client-only (reads files); never imported by workflow code.
 */
import { existsSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import type { z } from 'zod';
import { readPromptTemplate } from '../lib/prompt-template.js';
import { aliasDetail, LOKI_ALIASES } from './loki-aliases.js';
import { KNOBS, KNOB_NAMES, KnobsSchema, splitCommandLine, type KnobName } from '../schemas/knobs.js';
import { KNOB_PROFILE_ENV, KNOB_PROFILE_NAMES, KNOB_PROFILES, isKnobProfileName } from '../schemas/knob-profiles.js';
import { showValue, truncate, type KnobOrigin, type ResolvedKnobs } from './knob-origin.js';

export type { KnobOrigin, KnobSource, ResolvedKnobs } from './knob-origin.js';
export { explainKnobs, explainKnobsJson, type ExplainOptions, type KnobExplanation } from './knob-explain.js';
export { knobProfileOf } from './knob-options.js';

export interface ResolveKnobsOptions {
  /** Dedicated CLI flags (`--agent-command CMD`), raw strings keyed by knob; undefined = not given. */
  flags: Partial<Record<KnobName, string>>;
  /** Raw `--set key=value` entries, in command-line order (the last one for a key wins). */
  sets: string[];
  env: Record<string, string | undefined>;
  /** Explicit config file (relative to `cwd`); must exist. Otherwise `cwd/vigil.config.json` if present. */
  configFile?: string;
  cwd: string;
  /**
   * Defaults that depend on this machine, replacing the registry's (e.g. `eventStore` on where an
   * event store is configured); `detail` says why, in `vigil config --explain`.
   */
  defaults?: Partial<Record<KnobName, { value: unknown; detail: string }>>;
  /** A knob profile (`--knob-profile`); else `VIGIL_KNOB_PROFILE` of `env`; else none. */
  profile?: string;
}

export const CONFIG_FILE_NAME = 'vigil.config.json';

/** A configuration problem the user must fix. `message` is one problem per line. */
export class ConfigError extends Error {
  readonly problems: readonly string[];

  constructor(problems: string | readonly string[]) {
    const list = typeof problems === 'string' ? [problems] : [...problems];
    super(list.join('\n'));
    this.name = 'ConfigError';
    this.problems = list;
  }
}

/** The registry entry seen without its per-knob value type. */
interface KnobSpec {
  readonly schema: z.ZodType;
  readonly env: string;
  readonly doc: string;
  readonly allowed: string;
  readonly fromString: (raw: string) => unknown;
}

function specOf(key: KnobName): KnobSpec {
  return KNOBS[key] as KnobSpec;
}

function isKnobName(key: string): key is KnobName {
  return Object.hasOwn(KNOBS, key);
}

/** Knobs whose dedicated flag is not named after them. */
const FLAG_NAMES: Partial<Record<KnobName, string>> = { eventStore: '--no-store' };

/** `agentCommand` -> `--agent-command`. */
export function flagNameOf(key: KnobName): string {
  return FLAG_NAMES[key] ?? `--${key.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`)}`;
}

// ---------------------------------------------------------------------------------------------
// Unknown-key suggestions

/** Optimal string alignment distance (Levenshtein plus adjacent transpositions). */
function editDistance(a: string, b: string): number {
  const rows = a.length + 1;
  const cols = b.length + 1;
  const d: number[] = new Array<number>(rows * cols).fill(0);
  const at = (i: number, j: number): number => d[i * cols + j] as number;
  for (let i = 0; i < rows; i++) d[i * cols] = i;
  for (let j = 0; j < cols; j++) d[j] = j;
  for (let i = 1; i < rows; i++) {
    for (let j = 1; j < cols; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      let best = Math.min(at(i - 1, j) + 1, at(i, j - 1) + 1, at(i - 1, j - 1) + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) {
        best = Math.min(best, at(i - 2, j - 2) + 1);
      }
      d[i * cols + j] = best;
    }
  }
  return at(rows - 1, cols - 1);
}

/** Case, `-` and `_` do not matter for suggestions: `max_iterations` suggests `maxIterations`. */
function normalizeKey(key: string): string {
  return key.toLowerCase().replace(/[-_\s]/g, '');
}

/** A key longer than this is near no knob name (the longest has 30 characters): no suggestion is looked for. */
const MAX_SUGGESTED_KEY = 64;

function suggestKnobs(key: string): KnobName[] {
  const wanted = normalizeKey(key);
  if (wanted.length === 0 || wanted.length > MAX_SUGGESTED_KEY) return [];
  const limit = Math.max(2, Math.floor(wanted.length / 3));
  const scored: { name: KnobName; score: number }[] = [];
  for (const name of KNOB_NAMES) {
    const candidate = normalizeKey(name);
    const envName = normalizeKey(KNOBS[name].env);
    const distance = Math.min(editDistance(wanted, candidate), editDistance(wanted, envName));
    const contains = wanted.length >= 4 && (candidate.includes(wanted) || wanted.includes(candidate));
    if (distance <= limit) scored.push({ name, score: distance });
    else if (contains) scored.push({ name, score: limit + 1 });
  }
  scored.sort((x, y) => x.score - y.score);
  return scored.slice(0, 3).map((s) => s.name);
}

/** Unknown keys named in full, per source (flags, --set, a config file); the rest are counted. */
export const MAX_UNKNOWN_KEYS_SHOWN = 5;

/**
 * The unknown keys of one resolution. The first few of each source get a line of their own (with
 * a suggestion, or the list of valid knobs, given once), the rest one line with their count: a
 * file of 10,000 stray keys gives a short error, fast (suggestions are looked for only for the
 * keys shown).
 */
class UnknownKeys {
  private listed = false;
  private readonly extra = new Map<string, number>();
  private readonly shown = new Map<string, number>();

  constructor(private readonly problems: string[]) {}

  add(key: string, detail: string, source = detail): void {
    const n = this.shown.get(source) ?? 0;
    if (n >= MAX_UNKNOWN_KEYS_SHOWN) {
      this.extra.set(source, (this.extra.get(source) ?? 0) + 1);
      return;
    }
    this.shown.set(source, n + 1);
    const suggestions = suggestKnobs(key);
    let hint: string;
    if (suggestions.length > 0) hint = `did you mean ${suggestions.map((s) => JSON.stringify(s)).join(' or ')}?`;
    else if (!this.listed) {
      hint = `valid knobs are: ${KNOB_NAMES.join(', ')}`;
      this.listed = true;
    } else hint = 'see the valid knobs above';
    this.problems.push(`unknown knob ${showValue(key)} (from ${truncate(detail, 200)}); ${hint}`);
  }

  /** The count line of `source`, if it had more unknown keys than were shown. */
  close(source: string): void {
    const more = this.extra.get(source);
    if (!more) return;
    this.problems.push(
      `${more.toLocaleString('en-US')} more unknown knob${more === 1 ? '' : 's'} (from ${source}); \`vigil config --explain\` lists the valid ones`,
    );
  }
}

// ---------------------------------------------------------------------------------------------
// Validation

/** Extra explanation for values whose failure is not obvious from the value itself. */
function problemHint(key: KnobName, raw: unknown, issue: z.core.$ZodIssue | undefined): string {
  if (key !== 'agentCommand') return '';
  if (typeof raw === 'string') {
    const t = raw.trim();
    if (t.startsWith('[')) {
      try {
        JSON.parse(t);
      } catch (err) {
        return ` (not a valid JSON array: ${(err as Error).message})`;
      }
    } else {
      try {
        splitCommandLine(t);
      } catch (err) {
        return ` (${(err as Error).message})`;
      }
    }
  }
  const index = issue?.path[0];
  if (issue === undefined || typeof index !== 'number') return '';
  if (issue.code === 'too_small') return ` (word ${index + 1} is empty)`;
  return ` (word ${index + 1}: ${issue.message})`;
}

/** A value that passed validation, with where it came from. */
interface Accepted {
  key: KnobName;
  value: unknown;
  origin: KnobOrigin;
}

/**
 * Strings go through `fromString` (from any source); the result must pass the knob's schema.
 * Valid values are appended to `into`; invalid ones become a problem line.
 */
function accept(key: KnobName, raw: unknown, origin: KnobOrigin, into: Accepted[], problems: string[]): void {
  const spec = specOf(key);
  let candidate: unknown = raw;
  if (typeof raw === 'string') {
    try {
      candidate = spec.fromString(raw);
    } catch {
      candidate = raw;
    }
  }
  const parsed = spec.schema.safeParse(candidate);
  if (parsed.success) {
    into.push({ key, value: parsed.data, origin });
    return;
  }
  problems.push(
    `invalid value for knob ${JSON.stringify(key)} (from ${origin.detail}): ${showValue(raw)} is not allowed` +
      `${problemHint(key, raw, parsed.error.issues[0])}; expected ${spec.allowed}`,
  );
}

const SET_FORM = 'expected the form --set key=value, e.g. --set maxIterations=5';

function parseSets(sets: readonly string[], problems: string[], unknown: UnknownKeys): Accepted[] {
  const given: Accepted[] = [];
  for (const entry of sets) {
    const eq = entry.indexOf('=');
    if (eq < 0) {
      problems.push(`invalid --set ${JSON.stringify(entry)}: there is no "="; ${SET_FORM}`);
      continue;
    }
    const key = entry.slice(0, eq).trim();
    const raw = entry.slice(eq + 1);
    const detail = `--set ${entry}`;
    if (key.length === 0) {
      problems.push(`invalid --set ${JSON.stringify(entry)}: the key is empty; ${SET_FORM}`);
    } else if (!isKnobName(key)) {
      unknown.add(key, detail, '--set');
    } else {
      accept(key, raw, { source: 'flag', detail }, given, problems);
    }
  }
  unknown.close('--set');
  return given;
}

function parseFlags(flags: Partial<Record<KnobName, string>>, problems: string[], unknown: UnknownKeys): Accepted[] {
  const given: Accepted[] = [];
  for (const [key, raw] of Object.entries(flags) as [string, string | undefined][]) {
    if (raw === undefined) continue;
    if (!isKnobName(key)) {
      unknown.add(key, `flag ${key}`, 'flags');
      continue;
    }
    accept(key, raw, { source: 'flag', detail: flagNameOf(key) }, given, problems);
  }
  unknown.close('flags');
  return given;
}

/**
 * The knobs' `VIGIL_*` variables, and the loki-mode `LOKI_*` aliases of those not set (a note
 * says which knob an alias was read as, or that a `VIGIL_*` variable beat it).
 */
function readEnv(env: Record<string, string | undefined>, problems: string[], notes: string[]): Accepted[] {
  const given: Accepted[] = [];
  const value = (name: string): string | undefined => (Object.hasOwn(env, name) ? env[name] : undefined);
  for (const key of KNOB_NAMES) {
    const name = KNOBS[key].env;
    const raw = value(name);
    const alias = LOKI_ALIASES[key];
    const aliased = alias === undefined ? undefined : value(alias);
    if (raw !== undefined) {
      accept(key, raw, { source: 'env', detail: name }, given, problems);
      if (aliased !== undefined) notes.push(`${alias} is ignored: ${name} is set (knob ${key})`);
    } else if (alias !== undefined && aliased !== undefined) {
      const before = problems.length;
      accept(key, aliased, { source: 'env', detail: aliasDetail(alias, name) }, given, problems);
      if (problems.length === before) notes.push(`${alias} is read as knob ${key} (${name}); loki-mode alias`);
    }
  }
  return given;
}

const FILE_FORM = `a JSON object of knob name to value, e.g. {"maxIterations": 10, "agentCommand": ["my-agent", "--yes"]}`;

function describeJsonKind(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  return `a ${typeof value}`;
}

/** Reads the config file, if any. Problems with the file itself are reported, not thrown. */
function readConfigFile(opts: ResolveKnobsOptions, problems: string[], unknown: UnknownKeys): Accepted[] {
  let file: string;
  if (opts.configFile !== undefined) {
    file = path.resolve(opts.cwd, opts.configFile);
    if (!existsSync(file)) {
      problems.push(
        `config file not found: ${file}; check the path, or leave it out to use ${CONFIG_FILE_NAME} ` +
          `from the current directory if there is one`,
      );
      return [];
    }
  } else {
    file = path.resolve(opts.cwd, CONFIG_FILE_NAME);
    if (!existsSync(file)) return [];
  }

  let text: string;
  try {
    if (!statSync(file).isFile()) {
      problems.push(`config file ${file} is not a regular file; it must contain ${FILE_FORM}`);
      return [];
    }
    text = readFileSync(file, 'utf8');
  } catch (err) {
    problems.push(`cannot read config file ${file}: ${(err as Error).message}`);
    return [];
  }

  let data: unknown;
  try {
    data = JSON.parse(text.replace(/^\uFEFF/, ''));
  } catch (err) {
    problems.push(`invalid JSON in config file ${file}: ${(err as Error).message}; it must contain ${FILE_FORM}`);
    return [];
  }
  if (typeof data !== 'object' || data === null || Array.isArray(data)) {
    problems.push(`config file ${file} contains ${describeJsonKind(data)}; it must contain ${FILE_FORM}`);
    return [];
  }

  const given: Accepted[] = [];
  for (const [key, raw] of Object.entries(data as Record<string, unknown>)) {
    if (!isKnobName(key)) {
      unknown.add(key, file);
      continue;
    }
    accept(key, raw, { source: 'file', detail: file }, given, problems);
  }
  unknown.close(file);
  return given;
}

/** The values of the named knob profile (schemas/knob-profiles.ts), if one is named. */
function readProfile(opts: ResolveKnobsOptions, problems: string[]): Accepted[] {
  const fromEnv = Object.hasOwn(opts.env, KNOB_PROFILE_ENV) ? opts.env[KNOB_PROFILE_ENV] : undefined;
  const [name, where] = opts.profile !== undefined ? [opts.profile, '--knob-profile'] : [fromEnv, KNOB_PROFILE_ENV];
  if (name === undefined || name.trim() === '') return [];
  const wanted = name.trim().toLowerCase();
  if (!isKnobProfileName(wanted)) {
    problems.push(`unknown knob profile ${showValue(name)} (from ${where}); the profiles are ${KNOB_PROFILE_NAMES.join(', ')}`);
    return [];
  }
  const given: Accepted[] = [];
  for (const [key, value] of Object.entries(KNOB_PROFILES[wanted].knobs) as [KnobName, unknown][]) {
    accept(key, value, { source: 'profile', detail: `${wanted} (${where})` }, given, problems);
  }
  return given;
}

// ---------------------------------------------------------------------------------------------
// Resolution

/**
 * Resolves every knob. Precedence: dedicated flag > `--set` (last wins) > environment > config
 * file > knob profile > default. Every value given anywhere is validated, even one a higher source overrides,
 * so a bad value never lies dormant. Throws one `ConfigError` listing every problem.
 */
export function resolveKnobs(opts: ResolveKnobsOptions): ResolvedKnobs {
  const problems: string[] = [];
  const unknown = new UnknownKeys(problems);

  // Read highest priority first so problems are listed in that order.
  const fromFlags = parseFlags(opts.flags, problems, unknown);
  const fromSets = parseSets(opts.sets, problems, unknown);
  const notes: string[] = [];
  const fromEnv = readEnv(opts.env, problems, notes);
  const fromFile = readConfigFile(opts, problems, unknown);
  const fromProfile = readProfile(opts, problems);

  const values: Record<string, unknown> = {};
  const sources = {} as Record<KnobName, KnobOrigin>;
  for (const key of KNOB_NAMES) {
    values[key] = KNOBS[key].default;
    sources[key] = { source: 'default', detail: 'default' };
  }
  for (const [key, d] of Object.entries(opts.defaults ?? {}) as [KnobName, { value: unknown; detail: string }][]) {
    const parsed = specOf(key).schema.safeParse(d.value);
    if (!parsed.success)
      throw new ConfigError(`internal: the default ${JSON.stringify(d.value)} of knob ${key} is not allowed (${specOf(key).allowed})`);
    values[key] = parsed.data;
    sources[key] = { source: 'default', detail: d.detail };
  }

  // Apply lowest priority first; later entries (a later --set, a dedicated flag) overwrite.
  for (const layer of [fromProfile, fromFile, fromEnv, fromSets, fromFlags]) {
    for (const { key, value, origin } of layer) {
      values[key] = value;
      sources[key] = { ...origin };
    }
  }

  if (problems.length > 0) throw new ConfigError(problems);

  const parsed = KnobsSchema.safeParse(values);
  if (!parsed.success) {
    // Unreachable unless the registry and KnobsSchema disagree; still say something useful.
    throw new ConfigError(parsed.error.issues.map((i) => `invalid knob ${JSON.stringify(i.path.join('.'))}: ${i.message}`));
  }
  return { knobs: parsed.data, sources, notes };
}

/**
 * For `vigil start`: a prompt template file (knob `promptTemplate`) must exist and be a valid
 * template; its path becomes absolute (relative paths are taken from `cwd`), since the worker
 * reads it at every iteration.
 */
export function checkPromptTemplate(resolved: ResolvedKnobs, cwd: string): ResolvedKnobs {
  const file = resolved.knobs.promptTemplate;
  if (!file) return resolved;
  const abs = path.resolve(cwd, file);
  const r = readPromptTemplate(abs);
  if (!r.ok) {
    const from = resolved.sources.promptTemplate.detail;
    throw new ConfigError(r.errors.map((e) => `prompt template (knob "promptTemplate" from ${from}): ${e}`));
  }
  return { ...resolved, knobs: { ...resolved.knobs, promptTemplate: abs } };
}

/** For `vigil start`: the agent command must be set when the provider runs a command. */
export function requireAgentCommand(resolved: ResolvedKnobs): string[] {
  const { provider, agentCommand } = resolved.knobs;
  if (provider === 'command' && agentCommand.length === 0) {
    throw new ConfigError('no agent command: pass --agent-command CMD, set VIGIL_AGENT_COMMAND or agentCommand in vigil.config.json');
  }
  return agentCommand;
}
