/**
 * The knob options that are not knobs themselves: `--knob-profile NAME` on every command that
 * takes `--set` (start, try, config, schedule create), and `--explain` and `--all` on `vigil config`. Added once
 * the program is built, so the commands that take knobs need not each spell them.
 *
 * Why `--knob-profile` and not `--profile`: `--profile` is already the program's temporal.toml
 * profile (cli/endpoint.ts), the same flag as the temporal CLI's; a knob profile is another thing.
 *
 * Client-only; never imported by workflow code.
 */
import { Option, type Command } from 'commander';
import { FIRST_CLASS_KNOBS } from '../schemas/knob-sections.js';
import { KNOB_PROFILE_ENV, KNOB_PROFILE_NAMES } from '../schemas/knob-profiles.js';

function takesKnobs(cmd: Command): boolean {
  return cmd.options.some((o) => o.long === '--set');
}

function everyCommand(cmd: Command): Command[] {
  return [cmd, ...cmd.commands.flatMap(everyCommand)];
}

/** Adds the knob profile to every command that takes `--set`, and `--explain` and `--all` to `vigil config`. */
export function addKnobOptions(program: Command): Command {
  for (const cmd of everyCommand(program).filter(takesKnobs)) {
    cmd.addOption(
      new Option(
        '--knob-profile <name>',
        `a named set of knob values under every knob you set (beats ${KNOB_PROFILE_ENV}); see docs/knobs.md, Profiles`,
      ).choices([...KNOB_PROFILE_NAMES]),
    );
  }
  const config = program.commands.find((c) => c.name() === 'config');
  config
    ?.option(
      '--explain',
      `the ${FIRST_CLASS_KNOBS.length} first-class knobs and every knob set anywhere, by section: value and source (profile, file, env, flag, default)`,
    )
    .option('--all', 'with --explain: every knob, the advanced ones at their defaults too');
  return program;
}

/** The profile a command's options name, for `resolveKnobs`. */
export function knobProfileOf(opts: Record<string, unknown>): { profile?: string } {
  return typeof opts.knobProfile === 'string' ? { profile: opts.knobProfile } : {};
}
