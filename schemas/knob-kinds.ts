/**
 * The kinds of knob (a whole number in a range, a flag, a duration, a URL, one of a list, an
 * argv…): each makes a knob's spec, its schema, default, environment variable, meaning, allowed
 * values and how a string becomes its value. The registry itself is schemas/knobs.ts.
 *
 * Sandbox-safe: imported by the workflow bundle.
 */
import { z } from 'zod';
import { shared } from './shared.js';
import { splitCommandLine } from './command-line.js';

/** One knob's description, used for validation, `vigil config --explain` and the docs. */
export interface KnobSpecBase<T> {
  readonly schema: z.ZodType<T>;
  readonly default: T;
  readonly env: string;
  readonly doc: string;
  /** Human-readable allowed values, quoted in error messages. */
  readonly allowed: string;
  /** Turns a string (from env or `--set key=value`) into a raw value for `schema`. */
  readonly fromString: (raw: string) => unknown;
}

export function intKnob(env: string, min: number, max: number, def: number, doc: string): KnobSpecBase<number> {
  return {
    schema: z.number().int().min(min).max(max),
    default: def,
    env,
    doc,
    allowed: `an integer from ${min} to ${max}`,
    fromString: (raw) => (/^\s*-?\d+\s*$/.test(raw) ? Number(raw) : raw),
  };
}

export function boolKnob(env: string, def: boolean, doc: string): KnobSpecBase<boolean> {
  return {
    schema: z.boolean(),
    default: def,
    env,
    doc,
    allowed: 'true or false',
    fromString: (raw) => {
      const v = raw.trim().toLowerCase();
      if (['true', '1', 'yes', 'on'].includes(v)) return true;
      if (['false', '0', 'no', 'off'].includes(v)) return false;
      return raw;
    },
  };
}

export function numberKnob(env: string, min: number, max: number, def: number, doc: string): KnobSpecBase<number> {
  return {
    schema: z.number().min(min).max(max),
    default: def,
    env,
    doc,
    allowed: `a number from ${min} to ${max}`,
    fromString: (raw) => (/^\s*-?(\d+(\.\d*)?|\.\d+)\s*$/.test(raw) ? Number(raw) : raw),
  };
}

/** A limit: 0 turns it off, else an integer within the bounds. */
export function limitKnob(env: string, bounds: { min: number; max: number }, def: number, doc: string): KnobSpecBase<number> {
  return {
    schema: z.union([z.literal(0), z.number().int().min(bounds.min).max(bounds.max)]),
    default: def,
    env,
    doc,
    allowed: `0 (no limit), or an integer from ${bounds.min} to ${bounds.max}`,
    fromString: (raw) => (/^\s*-?\d+\s*$/.test(raw) ? Number(raw) : raw),
  };
}

export function urlKnob(env: string, doc: string): KnobSpecBase<string> {
  return {
    schema: z.union([z.literal(''), z.url({ protocol: /^https?$/ }).max(2048), z.string().regex(/^env:[A-Za-z_][A-Za-z0-9_]*$/)]),
    default: '',
    env,
    doc,
    allowed: "an http(s) URL, env:NAME (read from the worker's environment, never stored in history), or empty to turn it off",
    fromString: (raw) => raw.trim(),
  };
}

/** Seconds per unit of a duration knob's value (`90`, `30s`, `15m`, `4h`, `3d`). */
const DURATION_UNITS: Record<string, number> = { s: 1, m: 60, h: 3600, d: 86_400 };

/** Parses `90`, `30s`, `15m`, `4h`, `3d` (or `0`, off) into seconds; anything else is returned as it was, for the schema to refuse. */
export function parseDuration(raw: string): number | string {
  const m = /^\s*(\d+)\s*([smhd]?)\s*$/i.exec(raw);
  if (!m) return raw;
  return Number(m[1]) * (DURATION_UNITS[(m[2] || 's').toLowerCase()] ?? 1);
}

/** A duration in seconds (0: off), written as seconds or with a unit: `30s`, `15m`, `4h`, `3d`. */
export function durationKnob(env: string, maxSeconds: number, def: number, doc: string): KnobSpecBase<number> {
  return {
    schema: z.number().int().min(0).max(maxSeconds),
    default: def,
    env,
    doc,
    allowed: `0 (off), or a duration up to ${maxSeconds / 86_400} days: seconds, or a number with s, m, h or d (30s, 15m, 4h, 3d)`,
    fromString: parseDuration,
  };
}

export function stringKnob(env: string, def: string, maxLength: number, doc: string): KnobSpecBase<string> {
  return {
    schema: z.string().max(maxLength),
    default: def,
    env,
    doc,
    allowed: `text of at most ${maxLength} characters`,
    fromString: (raw) => raw,
  };
}

export function enumKnob<const T extends readonly [string, ...string[]]>(
  env: string,
  values: T,
  def: T[number],
  doc: string,
): KnobSpecBase<T[number]> {
  return {
    schema: z.enum(values) as unknown as z.ZodType<T[number]>,
    default: def,
    env,
    doc,
    allowed: `one of ${values.join(', ')}`,
    fromString: (raw) => raw.trim().toLowerCase(),
  };
}

export const argvKnob: KnobSpecBase<string[]> = shared('schemas/knobs:argvKnob', () => ({
  schema: z.array(z.string().min(1).max(4096)).max(256),
  default: [],
  env: 'VIGIL_AGENT_COMMAND',
  doc: 'Agent command as argv (no shell); the prompt arrives on stdin. A string is split like a shell would, without expansion.',
  allowed: 'a command line or a JSON array of strings (at most 256 words)',
  fromString: (raw) => {
    const t = raw.trim();
    if (t.startsWith('[')) {
      try {
        return JSON.parse(t) as unknown;
      } catch {
        return raw;
      }
    }
    try {
      return splitCommandLine(t);
    } catch {
      return raw;
    }
  },
}));
