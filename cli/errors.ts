/**
 * The CLI's error type and exit codes. No dependencies: `cli/main.ts` loads it at startup.
 */

/**
 * `err instanceof Class` by the error's name: the bin's quick path runs from a bundle
 * (dist/cli/fast.bundle.js) with its own copy of this module and of cli/run-api.ts, while the
 * modules it loads off its usual path (the endpoint from a profile, the SDK's client) throw the
 * classes of the separate copies.
 */
export const matchesErrorName = (err: unknown, name: string): boolean => err instanceof Error && err.name === name;

export class CliError extends Error {
  static override [Symbol.hasInstance](err: unknown): boolean {
    return matchesErrorName(err, 'CliError') && typeof (err as { exitCode?: unknown }).exitCode === 'number';
  }

  override name = 'CliError';
  constructor(
    message: string,
    readonly exitCode: number,
  ) {
    super(message);
  }
}

/** CLI exit codes beyond the run outcome codes (0 done/stopped, 1 failed, 20 terminal). */
export const EXIT = {
  usage: 2,
  noSuchRun: 3,
  unreachable: 4,
  notReached: 5,
  timeout: 124,
} as const;
