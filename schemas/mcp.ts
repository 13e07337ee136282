/**
 * What `vigil mcp` (cli/mcp.ts) takes and answers: the tools' inputs, their structured outputs
 * (the CLI's own `--json` shapes from schemas/cli-output.ts and cli-output-reports.ts; where that
 * shape is not a JSON object, as MCP requires of a tool's output, it sits under one key), and the
 * completion claim `vigil_task_complete` writes for the run it is called from.
 * Not bundled into the workflow sandbox: no workflow code imports this module.
 */
import { z } from 'zod';
import { AcrossRunsReportSchema, RunReportSchema } from './cli-output-reports.js';
import { RewindJsonSchema, StatusJsonSchema } from './cli-output.js';
import { MESSAGE_VERBS, optionKey, type MessageVerb, type SentMessage } from './message-verbs.js';

// ---------------------------------------------------------------------------------------------
// Tool inputs. Loose where the CLI checks the value itself (an empty directive, a bad run id): the
// refusal then comes in the CLI's words, not as a schema error.

const runId = z.string().describe('the run (its workflow id), as `vigil list` shows it');
const by = z.string().optional().describe('who is acting (default: the OS user running `vigil mcp`)');
const reason = z.string().optional().describe('why (shown in status and the UI)');
const signal = z.boolean().optional().describe('send as a Temporal signal: recorded even when no worker runs, but not acknowledged');

export const McpStartInput = {
  prd: z
    .string()
    .optional()
    .describe('the PRD file, inside the repository (relative paths from the directory `vigil mcp` runs in); or give `issue`'),
  issue: z
    .string()
    .optional()
    .describe(
      "instead of `prd`: an issue's Markdown file, inside the repository, as the PRD; its task list (- [ ] ...) is the PRD checklist (`vigil start --issue`)",
    ),
  goal: z
    .string()
    .optional()
    .describe(
      'instead of `prd` or `issue`: what to build, as text; a discovery call analyses the repository ' +
        'and writes the PRD as the run starts (`vigil start --goal`)',
    ),
  repo: z.string().optional().describe('the git repository the agent works in (default: the directory `vigil mcp` runs in)'),
  provider: z.string().optional().describe('the agent CLI: claude, codex, gemini, aider, opencode, cline or command'),
  agentCommand: z.string().optional().describe('the agent command line (the command provider)'),
  config: z.string().optional().describe('a JSON config file of knobs, inside the repository (default: ./vigil.config.json if present)'),
  set: z.array(z.string()).optional().describe('knobs as key=value, as `vigil start --set`'),
  id: z
    .string()
    .optional()
    .describe("workflow id of the run (default: vigil-<prd name>-<time>); a finished run's id is refused without `replace`"),
  replace: z
    .boolean()
    .optional()
    .describe('with `id` of a run that ended: start a new run under that id on purpose (a running one is never replaced)'),
  checklist: z
    .string()
    .optional()
    .describe('the PRD checklist (JSON or Markdown file, inside the repository) instead of one extracted from the PRD'),
  host: z.string().optional().describe("the machine that holds the repository (default: VIGIL_HOST, else this machine's name)"),
  noStore: z.boolean().optional().describe('do not journal the run into the event store'),
};

export const McpRunInput = { id: runId };
/**
 * The input of a message's tool (vigil_pause, vigil_budget, ...), from its row of the message
 * table (schemas/message-verbs.ts): the run, each argument (required), each option the CLI has but
 * its own output and files (a flag is a boolean, a value a string, dollars a number), `by` and `signal`.
 */
export function mcpMessageInput(name: SentMessage): Record<string, z.ZodType> {
  const row: MessageVerb = MESSAGE_VERBS[name];
  const shape: Record<string, z.ZodType> = { id: runId };
  for (const a of row.args) shape[a.key] = z.string().describe(a.mcpHelp ?? a.help);
  for (const o of row.options) {
    if (o.cliOnly) continue;
    const { key, value } = optionKey(o);
    if (key === 'by') shape.by = by;
    else if (key === 'signal') shape.signal = signal;
    else if (key === 'reason') shape.reason = reason;
    else {
      const type = !value ? z.boolean() : o.parse && 'dollars' in o.parse ? z.number().min(0) : z.string();
      shape[key] = (o.required ? type : type.optional()).describe(o.help);
    }
  }
  return shape;
}
export const McpRewindInput = {
  id: runId,
  to: z.number().int().describe('the iteration to go back to (one with a checkpoint: vigil_checkpoints)'),
  reason,
  input: z.string().optional().describe('a directive for the next prompt'),
  force: z.boolean().optional().describe('keep changes a person made to the tree since the run last looked, instead of refusing'),
  fork: z.boolean().optional().describe('a finished run: start a new run from checkpoint `to` instead'),
  forkId: z.string().optional().describe("with fork: workflow id of the new run; a finished run's id is refused without `replace`"),
  replace: z
    .boolean()
    .optional()
    .describe('with forkId of a run that ended: start the fork under that id on purpose (a running one is never replaced)'),
  by,
};
export const McpReportInput = {
  id: z.string().optional().describe('a run: its timeline; without it, the report across runs'),
  since: z.string().optional().describe('across runs: since a date (2026-01-31) or a duration back (30m, 12h, 7d, 2w)'),
  repo: z.string().optional().describe('across runs: only runs on this repository'),
};

/** `vigil_memory_search`: `vigil memory search --json` (docs/memory.md). */
export const McpMemorySearchInput = {
  query: z.string().min(1).max(2000).describe('words to look for in the memory of earlier runs (keyword search)'),
  repo: z.string().optional().describe("a repository: its memory and the installation's; without it, all of the memory"),
  limit: z.number().int().min(1).max(1000).optional().describe('at most this many hits (default 20)'),
};
export const McpMemoryHitSchema = z.object({
  kind: z.enum(['pattern', 'anti_pattern', 'skill', 'episode']),
  id: z.number().int(),
  repo: z.string().nullable(),
  topic: z.string(),
  title: z.string(),
  body: z.string(),
  evidence: z.number().int(),
  importance: z.number(),
  accessCount: z.number().int(),
  score: z.number(),
});
export const McpMemorySearchOutputSchema = z.object({
  query: z.string(),
  hits: z.array(McpMemoryHitSchema),
  /**
   * Where the hits come from: the event store, or (inside a run whose sandbox refuses the store) the snapshot its worker
   * wrote for the call (docs/memory.md).
   */
  source: z.enum(['store', 'snapshot']).optional(),
  /** The snapshot's time, when the hits come from one. */
  snapshotAt: z.string().optional(),
});
export type McpMemorySearchOutput = z.infer<typeof McpMemorySearchOutputSchema>;

/** The resource `vigil://memory/index`: what there is to know, by topic and kind (the retrieval's index layer, whole). */
export const McpMemoryIndexSchema = z.object({
  /** The repository it is for (its items and those across repositories), or null: the whole store. */
  repo: z.string().nullable(),
  source: z.enum(['store', 'snapshot']),
  snapshotAt: z.string().optional(),
  total: z.number().int(),
  kinds: z.record(z.string(), z.number().int()),
  topics: z.array(z.object({ topic: z.string(), count: z.number().int(), kinds: z.record(z.string(), z.number().int()) })),
});
export type McpMemoryIndex = z.infer<typeof McpMemoryIndexSchema>;

/** The resource `vigil://runs/{id}/tasks`: the run's task queue (its streams' tasks), or why it has none. */
export const McpRunTasksSchema = z.object({
  workflowId: z.string(),
  source: z.enum(['file', 'checklist', 'planner']).nullable(),
  note: z.string().nullable(),
  tasks: z.array(z.record(z.string(), z.unknown())),
});
export type McpRunTasks = z.infer<typeof McpRunTasksSchema>;

/** The most evidence lines a claim carries, and the longest of each. */
export const CLAIM_LIMITS = { summaryChars: 4000, evidenceItems: 50, evidenceChars: 2000 } as const;

export const McpTaskCompleteInput = {
  summary: z.string().min(1).max(CLAIM_LIMITS.summaryChars).describe('what was done, in a few sentences'),
  evidence: z
    .array(z.string().min(1).max(CLAIM_LIMITS.evidenceChars))
    .min(1)
    .max(CLAIM_LIMITS.evidenceItems)
    .describe('what shows it is done: tests run and their result, files, commands, requirement by requirement'),
  confidence: z.number().min(0).max(1).describe('how sure the agent is that the task is complete, from 0 to 1'),
};

// ---------------------------------------------------------------------------------------------
// Structured outputs that are not the CLI's object as it is.

/** `vigil_status`: `vigil status --json` under `run`. */
export const McpStatusOutputSchema = z.object({ run: StatusJsonSchema });
export type McpStatusOutput = z.infer<typeof McpStatusOutputSchema>;

/** `vigil_rewind`: `vigil rewind --json` under `rewind`. */
export const McpRewindOutputSchema = z.object({ rewind: RewindJsonSchema });
export type McpRewindOutput = z.infer<typeof McpRewindOutputSchema>;

/** `vigil_report`: `vigil report <id> --json` under `run`, or `vigil report --json` under `acrossRuns`. */
export const McpReportOutputSchema = z.object({ run: RunReportSchema.optional(), acrossRuns: AcrossRunsReportSchema.optional() });
export type McpReportOutput = z.infer<typeof McpReportOutputSchema>;

/**
 * The body of `.vigil/signals/COMPLETION_REQUESTED` as `vigil_task_complete` writes it: the run
 * treats the file as a completion claim (docs/agent-contract.md) and keeps the body as evidence in
 * the run's folder; the run's own checks judge the claim.
 */
export const TaskCompleteClaimSchema = z.object({
  by: z.literal('vigil_task_complete'),
  runId: z.string(),
  role: z.literal('iteration'),
  iteration: z.number().int().min(1),
  at: z.string(),
  summary: z.string(),
  evidence: z.array(z.string()),
  confidence: z.number().min(0).max(1),
});
export type TaskCompleteClaim = z.infer<typeof TaskCompleteClaimSchema>;

/** `vigil_task_complete`'s answer. */
export const McpTaskCompleteOutputSchema = z.object({
  claimed: z.literal(true),
  runId: z.string(),
  iteration: z.number().int(),
  /** The claim file written (consumed by Vigil when this agent call ends). */
  path: z.string(),
  /** A claim was already waiting from this call and was replaced. */
  replaced: z.boolean(),
  note: z.string(),
});
export type McpTaskCompleteOutput = z.infer<typeof McpTaskCompleteOutputSchema>;

// ---------------------------------------------------------------------------------------------
// vigil_code_search (cli/mcp-code-search.ts, lib/code-search.ts).

export const McpCodeSearchInput = {
  query: z.string().min(1).max(500).describe('the text to find (a fixed string; with `regex`, an extended regular expression)'),
  path: z.string().optional().describe('a folder or file inside the repository to search, relative to its top (default: all of it)'),
  repo: z
    .string()
    .optional()
    .describe("the repository (a person's call; an agent's call searches its run's repository, and refuses another)"),
  regex: z.boolean().optional().describe('the query is an extended regular expression'),
  caseSensitive: z.boolean().optional().describe('match case (default: ignore it)'),
  limit: z.number().int().min(1).max(200).optional().describe('at most this many hits (default 50)'),
};
export const McpCodeSearchOutputSchema = z.object({
  repo: z.string(),
  query: z.string(),
  hits: z.array(z.object({ path: z.string(), line: z.number().int(), snippet: z.string() })),
  /** More matched than the limit: narrow the query or the path. */
  truncated: z.boolean(),
});
export type McpCodeSearchOutput = z.infer<typeof McpCodeSearchOutputSchema>;
