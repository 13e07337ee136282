/**
 * Reading a run's files from any machine (`vigil logs`, `vigil handoff`): the `readRunLog` and
 * `readRunHandoff` activities, run by a worker on the host that holds the repository, return one
 * bounded, redacted chunk. The CLI starts them as standalone activities on that host's queue; on a
 * server without standalone activities the short `vigilReadLog` workflow carries a log read there.
 *
 * Sandbox-safe: imported by the workflow bundle.
 */
import { z } from 'zod';
import { shared } from './shared.js';

/** The most one read returns (a workflow result, so well under Temporal's 2 MiB payload limit). */
export const LOG_CHUNK_MAX = 256 * 1024;
/** The longest a read waits for the log to grow (following); the request then answers empty. */
export const LOG_WAIT_MAX_MS = 30_000;

export const ReadRunLogInputSchema = shared('schemas/logs:ReadRunLogInputSchema', () =>
  z.object({
    repoPath: z.string().min(1).max(4096),
    /** The run's workflow id (its folder under `.vigil/runs/`). */
    runId: z.string().min(1).max(1000),
    iteration: z.number().int().min(1),
    /** Byte offset in the log to read from. */
    offset: z.number().int().min(0),
    maxBytes: z.number().int().min(1).max(LOG_CHUNK_MAX).default(LOG_CHUNK_MAX),
    /** Following: wait up to this long for the log to grow past `offset` before answering (0: at once). */
    waitMs: z.number().int().min(0).max(LOG_WAIT_MAX_MS).default(0),
    /** Include a last line that has no newline yet (false while following: it comes whole later). */
    partial: z.boolean().default(true),
  }),
);
export type ReadRunLogInput = z.input<typeof ReadRunLogInputSchema>;

export const ReadRunLogResultSchema = shared('schemas/logs:ReadRunLogResultSchema', () =>
  z.object({
    /** False when the iteration has no log (yet) on this host. */
    found: z.boolean(),
    /** Why the log cannot be read (a missing repository, a link where a folder should be, ...). */
    problem: z.string().nullable(),
    /** The log file on the host. */
    path: z.string(),
    /** Whole lines from `offset` (a longer line is cut), credentials redacted. */
    text: z.string(),
    /** Where `text` starts (0 when the log is shorter than the offset asked: it was replaced). */
    offset: z.number().int().min(0),
    /** Where the next read starts. */
    nextOffset: z.number().int().min(0),
    /** The log's size when it was read. */
    size: z.number().int().min(0),
    redactions: z.number().int().min(0),
  }),
);
export type ReadRunLogResult = z.infer<typeof ReadRunLogResultSchema>;

export const ReadLogWorkflowInputSchema = shared('schemas/logs:ReadLogWorkflowInputSchema', () =>
  z.object({
    request: ReadRunLogInputSchema,
    /** The queue of the run's host; null: the workflow's own queue (a run started without a host). */
    hostQueue: z.string().min(1).max(1000).nullable(),
    /** How long a worker on that queue has to pick the read up before the answer is `no_worker`. */
    answerSeconds: z.number().int().min(1).max(300),
  }),
);
export type ReadLogWorkflowInput = z.input<typeof ReadLogWorkflowInputSchema>;

export type ReadLogAnswer =
  | { kind: 'chunk'; chunk: ReadRunLogResult }
  /** No worker polling the queue picked the read up within `answerSeconds`. */
  | { kind: 'no_worker'; queue: string | null }
  | { kind: 'failed'; message: string };

/** The most of a handoff document `vigil handoff` prints (the writer keeps them far smaller). */
export const HANDOFF_MAX = 256 * 1024;

export const ReadRunHandoffInputSchema = shared('schemas/logs:ReadRunHandoffInputSchema', () =>
  z.object({
    repoPath: z.string().min(1).max(4096),
    /** The handoff's Markdown file as the run's status names it (`latestHandoff.path`); read only under `<repo>/.vigil/handoffs/`. */
    path: z.string().min(1).max(4096),
  }),
);
export type ReadRunHandoffInput = z.input<typeof ReadRunHandoffInputSchema>;
