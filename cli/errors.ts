/**
 * The CLI's error type and exit codes. No dependencies: `cli/main.ts` loads it at startup.
 */
export class CliError extends Error {
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
