/**
 * The last failed call's error class and the self-heal hint the next prompt carries (spec §1.8,
 * §1.6 row 5): a failed iteration leaves `LAST_ERROR.json` in the run's folder,
 * `{iteration, error_class, brief, timestamp}`; the next iteration consumes it (archived in
 * `failure-history.jsonl`, the last 50) and its prompt says what failed and what to do about it.
 *
 * The classes are the original's (`provider_empty_output`, `rate_limited`, `auth_error`,
 * `unknown`) and Vigil's own: `timeout` (the call's time limit or the silence watchdog ended
 * it) and `io_error` (the call's log could not be written). The file lies in the repository,
 * where the agent could write one of its own: only a record of a known class is read, its brief
 * clipped, and the hint's words are Vigil's, chosen by the class.
 */
import { z } from 'zod';

export const ERROR_CLASSES = ['provider_empty_output', 'rate_limited', 'auth_error', 'timeout', 'io_error', 'unknown'] as const;
export type ErrorClass = (typeof ERROR_CLASSES)[number];

/** The longest brief kept (one or two lines of the failure). */
const BRIEF_CHARS = 300;
/** The failures kept in `failure-history.jsonl`. */
export const FAILURE_HISTORY_KEPT = 50;

export const LastErrorSchema = z.object({
  iteration: z.number().int().min(0),
  error_class: z.enum(ERROR_CLASSES),
  brief: z.string().max(4000),
  timestamp: z.string().max(40),
});
export type LastError = z.infer<typeof LastErrorSchema>;

export interface FailedCallFacts {
  exitCode: number;
  timedOut: boolean;
  emptyCall: boolean;
  rateLimited: boolean;
  authError: boolean;
  ioError: boolean;
  tail: string;
}

/** The last non-blank line of the output that is not Vigil's own note, clipped. */
function briefOf(tail: string, fallback: string): string {
  const lines = tail.split('\n').map((l) => l.trim());
  const own = lines.filter((l) => l && !l.startsWith('vigil:'));
  const line = own.at(-1) ?? lines.filter(Boolean).at(-1) ?? fallback;
  return line.slice(0, BRIEF_CHARS);
}

/** The error class of a failed call, first match wins (the seed's order, Vigil's classes first). */
export function classifyFailure(f: FailedCallFacts): { errorClass: ErrorClass; brief: string } {
  const errorClass: ErrorClass = f.emptyCall
    ? 'provider_empty_output'
    : f.ioError
      ? 'io_error'
      : f.rateLimited
        ? 'rate_limited'
        : f.authError
          ? 'auth_error'
          : f.timedOut
            ? 'timeout'
            : 'unknown';
  const fallback = f.timedOut ? 'the call was ended at its time limit' : `exit ${f.exitCode}`;
  const brief =
    errorClass === 'provider_empty_output' ? 'exit 0 with no output and no change to the repository' : briefOf(f.tail, fallback);
  return { errorClass, brief };
}

const WHAT_TO_DO: Readonly<Record<ErrorClass, string>> = {
  provider_empty_output:
    'The call printed nothing and changed nothing. Do the work this time: change the files the task needs, run the tests, ' +
    'and end with one line saying what you did.',
  rate_limited: 'The provider refused calls for a while (a rate limit) and Vigil waited. Work in fewer, larger steps.',
  auth_error: 'The provider refused the credentials. Nothing in the code is to blame; go on with the task.',
  timeout:
    'The call ran out of time or went silent. Take a smaller step, and start no command that does not end by itself ' +
    '(a watch mode, a server, an interactive prompt) without a timeout.',
  io_error: "Vigil could not write the call's log (a full disk). Keep what you print short; nothing in the code is to blame.",
  unknown:
    'Read the error in the findings below and fix its cause before any new work: rerun the command that failed, ' +
    'and do not work around it.',
};

/** The hint the next prompt carries for a consumed record. */
export function selfHealHint(e: LastError): string {
  const brief = e.brief.replace(/\s+/g, ' ').trim().slice(0, BRIEF_CHARS);
  return `Self-heal: iteration ${e.iteration} failed (${e.error_class}${brief ? `: ${brief}` : ''}). ${WHAT_TO_DO[e.error_class]}`;
}

/** A record read from the file: null when it is not one Vigil writes (unknown class, bad JSON, wrong shape). */
export function parseLastError(text: string): LastError | null {
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch {
    return null;
  }
  const r = LastErrorSchema.safeParse(raw);
  return r.success ? { ...r.data, brief: r.data.brief.slice(0, BRIEF_CHARS) } : null;
}
