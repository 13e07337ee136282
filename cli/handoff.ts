/**
 * `vigil handoff <id> [--json]`: the latest handoff document of a run (the Markdown Vigil wrote for
 * a person when it escalated), from any machine. The file lives on the run's host under
 * `<repo>/.vigil/handoffs/`; the run's status names it (`latestHandoff`), and it is read as the
 * logs are: one standalone activity (`readRunHandoff`) on the host's queue, no workflow
 * (cli/host-read.ts). Printed terminal-safe (lib/terminal-text.ts), credentials redacted; `--json`
 * gives the document with the run, iteration, path and summary. A server without standalone
 * activities gets an error saying so (the file is then read on the host itself).
 */
import type { Client } from '@temporalio/client';
import { z } from 'zod';
import type { ReadRunLogResult } from '../schemas/logs.js';
import { CliError, EXIT } from './errors.js';
import { readOnHost } from './host-read.js';
import { locate, noWorkerError } from './logs.js';
import { neutraliseText } from '../lib/terminal-text.js';

export const HandoffOutputSchema = z.object({
  workflowId: z.string(),
  host: z.string().nullable(),
  iteration: z.number().int(),
  path: z.string(),
  summary: z.string(),
  /** The document as read, credentials redacted (JSON escapes every control character in it). */
  markdown: z.string(),
  redactions: z.number().int(),
});
export type HandoffOutput = z.infer<typeof HandoffOutputSchema>;

export interface HandoffOptions {
  json: boolean;
  answerSeconds: number;
  write: (text: string) => Promise<void>;
}

export async function handoffCommand(client: Client, workflowId: string, opts: HandoffOptions): Promise<number> {
  const run = await locate(client, workflowId);
  const latest = run.snapshot.latestHandoff;
  if (!latest) throw new CliError(`run "${workflowId}" has no handoff: it has not escalated to a person`, EXIT.noSuchRun);
  const answer = await readOnHost<ReadRunLogResult>(client, {
    activity: 'readRunHandoff',
    input: { repoPath: run.snapshot.repoPath, path: latest.path },
    taskQueue: run.readQueue,
    answerSeconds: opts.answerSeconds,
    waitMs: 0,
    runId: workflowId,
  });
  if (answer.kind === 'no_worker') throw noWorkerError(run, opts.answerSeconds);
  if (answer.kind === 'unsupported') {
    throw new CliError(
      `this Temporal server runs no standalone activities, which \`vigil handoff\` reads through ` +
        `(${answer.message.split('\n')[0] ?? ''}); read ${latest.path} on ${run.where}`,
      EXIT.unreachable,
    );
  }
  const doc = answer.result;
  if (doc.problem) throw new CliError(`cannot read the handoff of run "${workflowId}" on ${run.where}: ${doc.problem}`, EXIT.noSuchRun);
  if (!doc.found) throw new CliError(`the handoff of run "${workflowId}" (${latest.path}) is gone from ${run.where}`, EXIT.noSuchRun);
  if (opts.json) {
    const out: HandoffOutput = HandoffOutputSchema.parse({
      workflowId,
      host: run.snapshot.host ?? null,
      iteration: latest.iteration,
      path: doc.path,
      summary: latest.summary,
      markdown: doc.text,
      redactions: doc.redactions,
    });
    await opts.write(`${JSON.stringify(out, null, 2)}\n`);
    return 0;
  }
  const text = neutraliseText(doc.text);
  await opts.write(text.endsWith('\n') ? text : `${text}\n`);
  return 0;
}
