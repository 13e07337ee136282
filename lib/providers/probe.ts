/**
 * Owns probing an installed agent CLI for a provider preset: finding its binary on PATH (no
 * shell), running `<binary> --version` and the preset's help command (each with a timeout and an
 * output cap), reading which of the preset's optional flags the help advertises, and whether its
 * credential variables are set (names only: a credential's value is never read into the result).
 * Also a per-process cache keyed by the binary's real path, mtime and size, so a worker probes
 * each installed version once, and `presetFlags`: every flag a preset may pass, for checking a
 * preset against a real CLI's help.
 */
import { accessSync, constants, realpathSync, statSync } from 'node:fs';
import path from 'node:path';
import { execa } from 'execa';
import { cleanText } from './common.js';
import { advertisedFlags } from './help.js';
import type { InvocationRequest, InvocationRole, ProviderName, ProviderPreset, ProviderTier } from './types.js';

export const PROBE_TIMEOUT_MS = 10_000;
/** Output kept per command (bytes per stream); help texts are a few KiB. */
const OUTPUT_CAP = 1024 * 1024;
const VERSION_MAX_CHARS = 200;

export interface ProbeOptions {
  /** Binary path (absolute or relative to the working directory) or a name looked up on PATH; default the preset's. */
  binary?: string;
  /** Environment for the PATH lookup, the credential check and the probed commands; default process.env. */
  env?: NodeJS.ProcessEnv;
  /** Per command; default 10 s. */
  timeoutMs?: number;
}

export interface CredentialState {
  name: string;
  set: boolean;
}

export interface ProbeResult {
  provider: ProviderName;
  /** Absolute path of the binary found, or null when none was. */
  binaryPath: string | null;
  /** First line of `--version`, or null when it failed. */
  version: string | null;
  /** The help command exited 0 with some output. */
  helpOk: boolean;
  /** Optional flags (and subcommands) the help lists, in the preset's order. */
  advertised: string[];
  /** Optional flags the help does not list (all of them when the help could not be read). */
  missing: string[];
  credentials: CredentialState[];
  /** Why the CLI cannot be used (not found, help failed), or null. */
  problem: string | null;
}

// ---------------------------------------------------------------------------------------------
// Finding the binary
// ---------------------------------------------------------------------------------------------

/** True when `p` is an existing regular file (after symlinks) that this process may execute. */
export function isExecutableFile(p: string): boolean {
  try {
    if (!statSync(p).isFile()) return false;
    accessSync(p, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

/** The absolute path of `binary` (a path, or a name searched on the env's PATH), or null. */
export function resolveBinary(binary: string, env: NodeJS.ProcessEnv = process.env): string | null {
  if (binary.includes('/') || (process.platform === 'win32' && binary.includes('\\'))) {
    const abs = path.resolve(binary);
    return isExecutableFile(abs) ? abs : null;
  }
  const exts = process.platform === 'win32' ? ['', ...(env.PATHEXT ?? '.EXE;.CMD;.BAT').split(';').filter(Boolean)] : [''];
  for (const dir of (env.PATH ?? '').split(path.delimiter)) {
    if (!dir) continue;
    for (const ext of exts) {
      const candidate = path.resolve(dir, binary + ext);
      if (isExecutableFile(candidate)) return candidate;
    }
  }
  return null;
}

/** Which of the preset's credential variables are set (non-blank). Never returns a value. */
export function credentialState(preset: ProviderPreset, env: NodeJS.ProcessEnv = process.env): CredentialState[] {
  return preset.credentialEnv.map((name) => ({ name, set: (env[name] ?? '').trim() !== '' }));
}

// ---------------------------------------------------------------------------------------------
// Running the binary
// ---------------------------------------------------------------------------------------------

interface CommandOutput {
  ok: boolean;
  /** stdout then stderr, cleaned of control sequences. */
  text: string;
  /** What went wrong, when not ok. */
  failure: string | null;
  timedOut: boolean;
}

async function runCommand(binaryPath: string, args: string[], env: NodeJS.ProcessEnv, timeoutMs: number): Promise<CommandOutput> {
  const shown = [path.basename(binaryPath), ...args].join(' ');
  const r = await execa(binaryPath, args, {
    env: { ...env, NO_COLOR: '1' },
    extendEnv: false,
    stdin: 'ignore',
    reject: false,
    timeout: timeoutMs,
    forceKillAfterDelay: 2000,
    maxBuffer: OUTPUT_CAP,
    encoding: 'utf8',
    stripFinalNewline: true,
  });
  const stdout = typeof r.stdout === 'string' ? r.stdout : '';
  const stderr = typeof r.stderr === 'string' ? r.stderr : '';
  const text = cleanText([stdout, stderr].filter((s) => s.trim() !== '').join('\n')).slice(0, OUTPUT_CAP);
  const timedOut = r.timedOut === true;
  // A help text over the cap is still a help text: keep what was read.
  const ok = !timedOut && (r.exitCode === 0 || r.isMaxBuffer === true) && text.trim() !== '';
  let failure: string | null = null;
  if (!ok) {
    const firstLine = (stderr.trim() || stdout.trim() || (r.failed ? (r.shortMessage ?? '') : '')).split('\n')[0]?.slice(0, 200) ?? '';
    if (timedOut) failure = `\`${shown}\` timed out after ${timeoutMs / 1000} s`;
    else if (r.exitCode === undefined) failure = `\`${shown}\` could not run: ${firstLine || 'no exit code'}`;
    else if (r.exitCode !== 0) failure = `\`${shown}\` exited ${r.exitCode}${firstLine ? `: ${firstLine}` : ''}`;
    else failure = `\`${shown}\` printed nothing`;
  }
  return { ok, text, failure, timedOut };
}

/** The binary's part of a probe: what the cache keeps (credentials are re-read every time). */
type BinaryProbe = Omit<ProbeResult, 'credentials'> & { transient: boolean };

async function probeBinary(preset: ProviderPreset, binaryPath: string, env: NodeJS.ProcessEnv, timeoutMs: number): Promise<BinaryProbe> {
  const [version, help] = await Promise.all([
    runCommand(binaryPath, ['--version'], env, timeoutMs),
    runCommand(binaryPath, preset.helpArgs, env, timeoutMs),
  ]);
  const found = help.ok ? advertisedFlags(help.text, preset.optionalFlags) : new Set<string>();
  const firstLine = version.ok
    ? (version.text
        .split('\n')
        .find((l) => l.trim() !== '')
        ?.trim() ?? null)
    : null;
  return {
    provider: preset.name,
    binaryPath,
    version: firstLine === null ? null : firstLine.slice(0, VERSION_MAX_CHARS),
    helpOk: help.ok,
    advertised: preset.optionalFlags.filter((f) => found.has(f)),
    missing: preset.optionalFlags.filter((f) => !found.has(f)),
    problem: help.ok ? null : help.failure,
    transient: version.timedOut || help.timedOut,
  };
}

function notFound(preset: ProviderPreset, binary: string, env: NodeJS.ProcessEnv): ProbeResult {
  const where = binary.includes('/') ? `${binary} is not an executable file` : `\`${binary}\` is not on PATH`;
  return {
    provider: preset.name,
    binaryPath: null,
    version: null,
    helpOk: false,
    advertised: [],
    missing: [...preset.optionalFlags],
    credentials: credentialState(preset, env),
    problem: where,
  };
}

function noBinary(preset: ProviderPreset, env: NodeJS.ProcessEnv): ProbeResult {
  return { ...notFound(preset, '', env), problem: `the ${preset.name} provider has no binary of its own to probe` };
}

function finish(b: BinaryProbe, preset: ProviderPreset, env: NodeJS.ProcessEnv): ProbeResult {
  const { transient: _transient, ...rest } = b;
  return { ...rest, advertised: [...rest.advertised], missing: [...rest.missing], credentials: credentialState(preset, env) };
}

/** Probes the preset's CLI (or `opts.binary`): binary, version, advertised flags, credentials. Never throws. */
export async function probeProvider(preset: ProviderPreset, opts: ProbeOptions = {}): Promise<ProbeResult> {
  const env = opts.env ?? process.env;
  const binary = opts.binary ?? preset.binary;
  if (binary === null || binary.trim() === '') return noBinary(preset, env);
  const binaryPath = resolveBinary(binary, env);
  if (binaryPath === null) return notFound(preset, binary, env);
  return finish(await probeBinary(preset, binaryPath, env, opts.timeoutMs ?? PROBE_TIMEOUT_MS), preset, env);
}

// ---------------------------------------------------------------------------------------------
// Per-process cache
// ---------------------------------------------------------------------------------------------

const cache = new Map<string, Promise<BinaryProbe>>();

/** The identity of an installed version: real path (symlinks followed), mtime and size. */
function binaryKey(binaryPath: string): string | null {
  try {
    const real = realpathSync(binaryPath);
    const st = statSync(real);
    return `${binaryPath}\u0000${real}\u0000${st.mtimeMs}\u0000${st.size}`;
  } catch {
    return null;
  }
}

/**
 * `probeProvider`, remembered per preset and binary version (path + mtime + size of the binary,
 * symlinks followed) for the life of the process: a reinstalled or upgraded CLI is probed again.
 * Credentials are re-read from `opts.env` on every call; a binary that is not found, or a probe
 * that timed out, is not remembered.
 */
export async function probeCached(preset: ProviderPreset, opts: ProbeOptions = {}): Promise<ProbeResult> {
  const env = opts.env ?? process.env;
  const binary = opts.binary ?? preset.binary;
  if (binary === null || binary.trim() === '') return noBinary(preset, env);
  const binaryPath = resolveBinary(binary, env);
  if (binaryPath === null) return notFound(preset, binary, env);
  const id = binaryKey(binaryPath);
  const timeoutMs = opts.timeoutMs ?? PROBE_TIMEOUT_MS;
  if (id === null) return finish(await probeBinary(preset, binaryPath, env, timeoutMs), preset, env);
  const key = `${preset.name}\u0000${preset.helpArgs.join(' ')}\u0000${id}`;
  let pending = cache.get(key);
  if (pending === undefined) {
    pending = probeBinary(preset, binaryPath, env, timeoutMs);
    cache.set(key, pending);
    void pending.then((b) => {
      if (b.transient) cache.delete(key);
    });
  }
  return finish(await pending, preset, env);
}

/** Forgets every cached probe (tests). */
export function clearProbeCache(): void {
  cache.clear();
}

// ---------------------------------------------------------------------------------------------
// The flags a preset may pass
// ---------------------------------------------------------------------------------------------

const ROLES: InvocationRole[] = ['iteration', 'council', 'devils-advocate', 'reviewer', 'checklist', 'checklist-verifier', 'planner'];
const TIERS: ProviderTier[] = ['planning', 'development', 'fast'];

/**
 * Every flag (and optional subcommand) the preset's argv may contain when the CLI advertises
 * `advertised` (default: all its optional flags): the union over every role and tier, new and
 * resumed sessions, with every optional request field set. Flags as written before any `=`;
 * leading subcommands (`exec`, `run`) and values are left out. Sorted. Empty for `command`.
 */
export function presetFlags(preset: ProviderPreset, advertised: ReadonlySet<string> = new Set(preset.optionalFlags)): string[] {
  if (preset.binary === null) return [];
  const flags = new Set<string>();
  const optionalWords = new Set(preset.optionalFlags.filter((f) => !f.startsWith('-')));
  for (const role of ROLES) {
    for (const tier of TIERS) {
      for (const resume of [false, true]) {
        const req: InvocationRequest = {
          prompt: 'PROMPT',
          promptPath: '/tmp/vigil-probe/prompt.md',
          role,
          tier,
          model: null,
          effort: null,
          advertisedFlags: advertised,
          remainingBudgetUsd: 12.5,
          sessionId: '00000000-0000-4000-8000-000000000000',
          resume,
          appendSystemPrompt: 'SYSTEM',
          fallbackModel: 'vigil-probe-fallback-model',
          // A batched round's call (claude): its sub-agents and the schema of its answer.
          subAgents: role === 'council' || role === 'reviewer' ? { agents: '{}', schema: '{}' } : null,
        };
        const argv = preset.buildInvocation(req).argv.slice(1);
        for (const arg of argv) {
          if (arg.startsWith('-') && arg !== '-' && arg !== '--') flags.add(arg.split('=')[0] as string);
          else if (optionalWords.has(arg)) flags.add(arg);
        }
      }
    }
  }
  return [...flags].sort();
}
