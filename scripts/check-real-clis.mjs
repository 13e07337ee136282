#!/usr/bin/env node
/**
 * Owns checking the compiled provider presets (dist/activities/providers) against real agent CLIs:
 * for each preset whose binary is in one of the BIN_DIRs, probes it (version, the preset's help command) and
 * verifies that every flag the preset may pass — `presetFlags` (always-passed flags and optional
 * ones, over every role and tier) plus its `optionalFlags`, plus the fallbacks it passes when
 * optional flags are absent (gemini's --yolo) — appears in that help, as Vigil's own help reader
 * sees it. Prints a table; exits 1 when a flag is missing, 2 when no CLI was found.
 *
 *   node scripts/check-real-clis.mjs [--out DIR] BIN_DIR...   (--out DIR receives help-<provider>.txt)
 *
 * Usually run through scripts/check-real-clis.sh, which installs the CLIs first.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { PROVIDER_NAMES, PROVIDERS, advertisedFlags } from '../dist/lib/providers/index.js';
import { presetFlags, probeProvider } from '../dist/lib/providers/probe.js';

const args = process.argv.slice(2);
let outDir = null;
const outAt = args.indexOf('--out');
if (outAt >= 0) {
  outDir = args[outAt + 1] ?? null;
  args.splice(outAt, 2);
}
const binDirs = args.map((d) => path.resolve(d));
if (binDirs.length === 0 || outDir === '') {
  process.stderr.write('usage: node scripts/check-real-clis.mjs [--out DIR] BIN_DIR...\n');
  process.exit(2);
}
const TIMEOUT_MS = 60_000;
const env = { ...process.env, PATH: [...binDirs, process.env.PATH ?? ''].join(path.delimiter), NO_COLOR: '1' };

/** The help text itself (the probe keeps only what it advertises). */
function helpText(binaryPath, args) {
  const r = spawnSync(binaryPath, args, {
    env,
    encoding: 'utf8',
    timeout: TIMEOUT_MS,
    stdio: ['ignore', 'pipe', 'pipe'],
    maxBuffer: 4 * 1024 * 1024,
  });
  return [r.stdout ?? '', r.stderr ?? ''].filter((s) => s.trim() !== '').join('\n');
}

/** Help lines that mention a flag's words: where to look for a renamed flag. */
function nearby(help, flag) {
  const words = flag
    .replace(/^-+/, '')
    .split(/[-_]/)
    .filter((w) => w.length > 2);
  if (words.length === 0) return [];
  return help
    .split('\n')
    .filter((l) => words.some((w) => l.toLowerCase().includes(w.toLowerCase())))
    .map((l) => l.trim())
    .slice(0, 4);
}

const rows = [];
let missingAny = false;
let checked = 0;
for (const name of PROVIDER_NAMES) {
  const preset = PROVIDERS[name];
  if (preset.binary === null) continue;
  const dir = binDirs.find((d) => existsSync(path.join(d, preset.binary)));
  if (dir === undefined) continue;
  const binary = path.join(dir, preset.binary);
  const probe = await probeProvider(preset, { binary, env, timeoutMs: TIMEOUT_MS });
  if (probe.binaryPath === null) continue;
  checked++;
  const help = helpText(probe.binaryPath, preset.helpArgs);
  if (outDir) writeFileSync(path.join(outDir, `help-${name}.txt`), help);
  const helpCmd = [preset.binary, ...preset.helpArgs].join(' ');
  process.stdout.write(`\n${name}: ${probe.version ?? 'version unknown'} (${probe.binaryPath})\n`);
  if (!probe.helpOk) {
    missingAny = true;
    process.stdout.write(`  ✗ \`${helpCmd}\` failed: ${probe.problem}\n`);
    rows.push({ name, version: probe.version, flag: helpCmd, kind: 'help', ok: false });
    continue;
  }
  const optional = new Set(preset.optionalFlags);
  const withAll = presetFlags(preset);
  const withNone = new Set(presetFlags(preset, new Set()));
  const wanted = [...new Set([...withAll, ...preset.optionalFlags, ...withNone])];
  const found = advertisedFlags(help, wanted);
  for (const flag of wanted) {
    const ok = found.has(flag);
    // always: passed whatever the help says; fallback: passed only when an optional flag is absent.
    const kind = optional.has(flag) ? 'optional' : withAll.includes(flag) && withNone.has(flag) ? 'always' : 'fallback';
    // A missing fallback matters only when the CLI also lacks an optional flag it stands in for.
    if (!ok && (kind !== 'fallback' || probe.missing.length > 0)) missingAny = true;
    rows.push({ name, version: probe.version, flag, kind, ok });
    process.stdout.write(`  ${ok ? '✓' : '✗'} ${flag.padEnd(32)} ${kind}\n`);
    if (!ok) for (const l of nearby(help, flag)) process.stdout.write(`      help mentions: ${l}\n`);
  }
  process.stdout.write(`  probe: advertised ${probe.advertised.join(' ') || '(none)'}; missing ${probe.missing.join(' ') || '(none)'}\n`);
}

if (checked === 0) {
  process.stderr.write(`no agent CLI found in ${binDirs.join(', ')}\n`);
  process.exit(2);
}

process.stdout.write('\nprovider   version                              flag                              passed    in help\n');
for (const r of rows) {
  process.stdout.write(
    `${r.name.padEnd(10)} ${String(r.version ?? '?')
      .slice(0, 36)
      .padEnd(36)} ${r.flag.padEnd(33)} ${r.kind.padEnd(9)} ${r.ok ? 'yes' : 'NO'}\n`,
  );
}
const bad = rows.filter((r) => !r.ok);
process.stdout.write(
  bad.length === 0
    ? "\nevery flag the presets may pass is in the CLIs' help\n"
    : `\n${bad.length} flag(s) missing from the help: ${bad.map((r) => `${r.name} ${r.flag}`).join(', ')}\n`,
);
process.exit(missingAny ? 1 : 0);
