/**
 * Owns the rule for a run id that is taken, for every start that goes through cli/runs.ts
 * (`vigil start`, the MCP server's `vigil_start`, `vigil rewind --fork` and `vigil_rewind`): a
 * running run's id is refused, and so is a finished run's unless the start says `--replace` (the server enforces it:
 * runs.ts starts with the REJECT_DUPLICATE reuse policy). A second run under a finished run's id
 * would take its place in `status`, `list` and `checkpoints` while the journal and the reports
 * still hold the first one, so reusing an id is something a person asks for, never a default.
 * This file words the refusal: what the id holds now, and what to do.
 */
import type { Client } from '@temporalio/client';
import { CliError, EXIT } from './errors.js';

/** What the id holds, as the server describes it (null: it could not say). */
async function holder(client: Client, workflowId: string): Promise<{ status: string; closed: string | null } | null> {
  try {
    const d = await client.workflow.getHandle(workflowId).describe();
    return { status: d.status.name, closed: d.closeTime ? d.closeTime.toISOString() : null };
  } catch {
    return null;
  }
}

/** The refusal of a start whose id is taken: by a running run, or by one that finished. */
export function idTakenMessage(workflowId: string, h: { status: string; closed: string | null } | null): string {
  if (h === null || h.status === 'RUNNING')
    return `a run with id "${workflowId}" is already running; choose another --id or follow it with \`vigil watch ${workflowId}\``;
  const ended = `${h.status.toLowerCase()}${h.closed ? ` at ${h.closed}` : ''}`;
  return (
    `run "${workflowId}" already ran (it ended ${ended}); nothing was started. A new run under the same id would take its place ` +
    `in \`vigil status\`, \`list\` and \`checkpoints\`. Choose another --id (or leave --id out for a fresh one), or pass --replace ` +
    `(over MCP: "replace": true) to start a new run under this id on purpose; \`vigil report ${workflowId}\` shows the one that ended`
  );
}

/** The CliError (exit 2) for a start the server refused because its id is taken. */
export async function idTakenError(client: Client, workflowId: string): Promise<CliError> {
  return new CliError(idTakenMessage(workflowId, await holder(client, workflowId)), EXIT.usage);
}
