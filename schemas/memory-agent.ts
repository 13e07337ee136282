/**
 * What an agent (or a person, through `vigil mcp`) adds to the memory that outlives a run
 * (docs/memory.md, Patterns an agent stores): a pattern it stores with `vigil_memory_store_pattern`
 * and a consolidation it asks for with `vigil_memory_consolidate`, and the signal file an agent
 * call's server writes them to (`.vigil/signals/MEMORY`, one JSON object a line), which the worker
 * reads when the call ends. The provenance is never the file's word: the worker sets it.
 * Not bundled into the workflow sandbox: no workflow code imports this module.
 */
import { z } from 'zod';
import { PATTERN_KINDS } from './lasting-memory.js';

/** Bounds of a stored pattern: larger input is refused, not cut (an agent learns what fits). */
export const AGENT_PATTERN_LIMITS = {
  topicChars: 60,
  titleChars: 200,
  bodyChars: 2000,
  keywords: 20,
  keywordChars: 40,
  /** Lines of the signal file one agent call may leave (patterns and a consolidation request). */
  linesPerCall: 20,
  /** The signal file's size the worker reads at most. */
  fileBytes: 64 * 1024,
} as const;

const L = AGENT_PATTERN_LIMITS;
const text = (max: number, what: string) =>
  z
    .string()
    .trim()
    .min(1, `the ${what} is empty`)
    .max(max, `the ${what} is longer than ${max} characters: say it in fewer (memory keeps short, reusable lessons)`)
    .refine((s) => !s.includes('\0'), `the ${what} holds a NUL character`);

/** A pattern as an agent gives it: what it learned, in its own words. */
export const AgentPatternSchema = z.object({
  kind: z.enum(PATTERN_KINDS).default('pattern'),
  topic: text(L.topicChars, 'topic').default('agent'),
  title: text(L.titleChars, 'title'),
  body: text(L.bodyChars, 'body'),
  keywords: z.array(text(L.keywordChars, 'keyword')).max(L.keywords, `at most ${L.keywords} keywords`).default([]),
});
export type AgentPattern = z.infer<typeof AgentPatternSchema>;

/** Who stored an item, as Vigil recorded it (`memory_patterns.stored_by`): an agent call of a run, or a person. */
export const StoredBySchema = z.discriminatedUnion('via', [
  z.object({ via: z.literal('agent'), runId: z.string(), iteration: z.number().int(), at: z.string() }),
  z.object({ via: z.literal('operator'), by: z.string(), at: z.string() }),
]);
export type StoredBy = z.infer<typeof StoredBySchema>;

/** One line of `.vigil/signals/MEMORY`: a pattern, or a request to consolidate the run so far. */
export const MemorySignalLineSchema = z.discriminatedUnion('ask', [
  z.object({ ask: z.literal('store_pattern'), runId: z.string(), iteration: z.number().int(), pattern: AgentPatternSchema }),
  z.object({ ask: z.literal('consolidate'), runId: z.string(), iteration: z.number().int() }),
]);
export type MemorySignalLine = z.infer<typeof MemorySignalLineSchema>;

// ---------------------------------------------------------------------------------------------
// The MCP tools (cli/mcp-memory-write.ts).

export const McpMemoryStorePatternInput = {
  kind: z.enum(PATTERN_KINDS).optional().describe('`pattern` (what works) or `anti_pattern` (what to avoid); default pattern'),
  topic: z.string().optional().describe(`a short topic it files under (at most ${L.topicChars} characters; default "agent")`),
  title: z.string().describe(`the lesson in one line (at most ${L.titleChars} characters)`),
  body: z.string().describe(`what to do or avoid, and why (at most ${L.bodyChars} characters)`),
  keywords: z.array(z.string()).optional().describe(`words a later search should find it by (at most ${L.keywords})`),
  runId: z
    .string()
    .optional()
    .describe('the run it comes from: Vigil knows it (the run whose agent call started this server) and refuses another'),
  repo: z.string().optional().describe("a person's call only: the repository it is for (default: across the installation's repositories)"),
};

export const McpMemoryStorePatternOutputSchema = z.object({
  /** `stored`: in the store now (a person's call); `pending`: written for the worker, stored when this agent call ends. */
  state: z.enum(['stored', 'pending']),
  id: z.number().int().optional(),
  kind: z.enum(PATTERN_KINDS),
  title: z.string(),
  /** Secrets replaced by a marker before anything was written. */
  redactions: z.number().int(),
  storedBy: StoredBySchema,
  note: z.string(),
});
export type McpMemoryStorePatternOutput = z.infer<typeof McpMemoryStorePatternOutputSchema>;

export const McpMemoryConsolidateInput = {
  runs: z
    .array(z.string().min(1))
    .max(100)
    .optional()
    .describe("a person's call only: the runs to consolidate (default: every stored run, as `vigil memory consolidate`)"),
};

export const McpMemoryConsolidateOutputSchema = z.object({
  state: z.enum(['done', 'requested']),
  result: z
    .object({
      runs: z.number().int(),
      episodes: z.number().int(),
      patterns: z.number().int(),
      antiPatterns: z.number().int(),
      skills: z.number().int(),
      links: z.number().int(),
    })
    .optional(),
  note: z.string(),
});
export type McpMemoryConsolidateOutput = z.infer<typeof McpMemoryConsolidateOutputSchema>;
