/**
 * The benches' flags: `--help` prints the usage; an unknown flag, a missing value or a number
 * that is not one ends the bench at once with a one-line error and the usage (exit 2), before a
 * server is started.
 */
import { parseArgs } from 'node:util';

type Options = Record<string, { type: 'string'; default: string } | { type: 'boolean'; default: boolean }>;
type Values<O extends Options> = { [K in keyof O]: O[K]['default'] };

/** Ends the bench with a one-line error and the usage (exit 2). */
export function fail(name: string, usage: string, message: string): never {
  process.stderr.write(`${name}: ${message}\n${usage}\n`);
  process.exit(2);
}

export function benchArgs<O extends Options>(name: string, usage: string, options: O): Values<O> {
  if (process.argv.slice(2).some((a) => a === '--help' || a === '-h')) {
    process.stdout.write(`${usage}\n`);
    process.exit(0);
  }
  try {
    // Every option has a default, so every value is present with its option's type.
    return parseArgs({ options, strict: true }).values as unknown as Values<O>;
  } catch (err) {
    return fail(name, usage, err instanceof Error ? err.message : String(err));
  }
}

/** A flag's number (an integer within bounds when asked), or the bench ends with what was wrong. */
export function numberArg(
  name: string,
  usage: string,
  flag: string,
  raw: string,
  bounds: { min?: number; max?: number; integer?: boolean } = {},
): number {
  const n = raw.trim() === '' ? NaN : Number(raw);
  const { min = -Infinity, max = Infinity, integer = false } = bounds;
  if (!Number.isFinite(n) || (integer && !Number.isInteger(n)) || n < min || n > max) {
    const range = [integer ? 'an integer' : 'a number', min > -Infinity ? `at least ${min}` : '', max < Infinity ? `at most ${max}` : '']
      .filter(Boolean)
      .join(', ');
    fail(name, usage, `--${flag} must be ${range}, got ${JSON.stringify(raw)}`);
  }
  return n;
}
