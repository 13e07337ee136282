/**
 * `vigil_memory_store_pattern` and `vigil_memory_consolidate` (cli/mcp.ts): what an agent
 * learned, into the memory that outlives a run, and a consolidation asked for (docs/memory.md,
 * Patterns an agent stores).
 *
 * Two callers, two paths, one rule: the provenance is Vigil's word, never the caller's.
 * - The builder inside a run (VIGIL_RUN_ID and the variables its call was given, cli/mcp-claim.ts):
 *   its sandbox refuses the store, so what it asks is validated, redacted and appended to the
 *   run's signal file `.vigil/signals/MEMORY`; the worker reads it when the call ends, checks it
 *   again and stores it as that call's (lib/memory-agent.ts). A consolidation it asks for is a
 *   request the worker honours there too, for the run so far: recording it is simpler and correct
 *   where running it is not possible (no store in the sandbox), and the worker already holds the
 *   run's journal and the consolidation lock.
 * - A person's client (no run): the store `vigil memory` reads, directly, as `vigil memory
 *   consolidate` does — the consolidation lock keeps it apart from the workers'.
 */
import { renameSync, rmSync } from 'node:fs';
import path from 'node:path';
import { z } from 'zod';
import {
  AGENT_PATTERN_LIMITS,
  AgentPatternSchema,
  McpMemoryConsolidateOutputSchema,
  McpMemoryStorePatternOutputSchema,
  type AgentPattern,
  type McpMemoryConsolidateOutput,
  type McpMemoryStorePatternOutput,
  type MemorySignalLine,
  type StoredBy,
} from '../schemas/memory-agent.js';
import { VIGIL_DIR } from '../schemas/paths.js';
import { redactPattern } from '../rules/memory-agent.js';
import { ensurePrivateDir, readRegularFile, writePrivateFile } from '../lib/safe-files.js';
import { claimTarget, type ClaimTarget } from './mcp-claim.js';
import { CliError, EXIT } from './errors.js';
import { defaultActor } from './steer-commands.js';

const STORE = 'vigil_memory_store_pattern';
const CONSOLIDATE = 'vigil_memory_consolidate';

/** The zod problems, as a person fixes them. */
const problems = (e: z.ZodError): string => e.issues.map((i) => `${i.path.join('.') || 'input'}: ${i.message}`).join('; ');

/** Appends lines to the run's memory signal (atomically: the worker never reads half a file), within the bounds of a call. */
function appendSignal(target: ClaimTarget, lines: MemorySignalLine[], tool: string): string {
  const signals = path.join(target.repoPath, VIGIL_DIR, 'signals');
  const file = path.join(signals, 'MEMORY');
  const fail = (why: string): CliError => new CliError(`${tool} cannot write to ${file}: ${why}`, EXIT.usage);
  try {
    ensurePrivateDir(path.resolve(target.repoPath), signals);
  } catch (err) {
    throw fail(err instanceof Error ? err.message : String(err));
  }
  const was = readRegularFile(file, AGENT_PATTERN_LIMITS.fileBytes);
  if (was && !was.ok) throw fail(`${was.problem} (remove it; Vigil reads it when this call ends)`);
  const before = was?.ok ? was.text.split('\n').filter((l) => l.trim() !== '') : [];
  const after = [...before, ...lines.map((l) => JSON.stringify(l))];
  if (after.length > AGENT_PATTERN_LIMITS.linesPerCall)
    throw new CliError(
      `${tool}: one agent call stores at most ${AGENT_PATTERN_LIMITS.linesPerCall} patterns and requests; this call has left ` +
        `${before.length}. Keep the ones worth most for later runs`,
      EXIT.usage,
    );
  const text = `${after.join('\n')}\n`;
  if (Buffer.byteLength(text) > AGENT_PATTERN_LIMITS.fileBytes)
    throw new CliError(`${tool}: this call's memory requests would pass ${AGENT_PATTERN_LIMITS.fileBytes} bytes`, EXIT.usage);
  const temp = path.join(signals, `.MEMORY.${process.pid}.tmp`);
  try {
    writePrivateFile(temp, text);
    renameSync(temp, file);
  } catch (err) {
    rmSync(temp, { force: true });
    throw fail(err instanceof Error ? err.message : String(err));
  }
  return file;
}

export interface StorePatternInput {
  kind?: string | undefined;
  topic?: string | undefined;
  title: string;
  body: string;
  keywords?: string[] | undefined;
  runId?: string | undefined;
  repo?: string | undefined;
}

/** `vigil_memory_store_pattern`: validated (refused when too large), redacted, with Vigil's provenance. */
export async function storePattern(env: NodeJS.ProcessEnv, o: StorePatternInput, now = new Date()): Promise<McpMemoryStorePatternOutput> {
  const parsed = AgentPatternSchema.safeParse({ kind: o.kind, topic: o.topic, title: o.title, body: o.body, keywords: o.keywords });
  if (!parsed.success) throw new CliError(`${STORE} refused the pattern: ${problems(parsed.error)}`, EXIT.usage);
  const { pattern, redactions } = redactPattern(parsed.data);
  const at = now.toISOString();
  const redacted = redactions ? ` ${redactions} secret(s) in it were replaced by a marker before anything was written.` : '';
  if (env.VIGIL_RUN_ID) {
    const target = claimTarget(env, STORE);
    if (o.runId !== undefined && o.runId !== target.runId)
      throw new CliError(
        `${STORE} refused the pattern: it claims run "${o.runId}", but this server serves an agent call of run "${target.runId}"; ` +
          'a pattern is stored as the run whose call stored it (leave runId out)',
        EXIT.usage,
      );
    if (o.repo !== undefined)
      throw new CliError(`${STORE}: an agent's pattern is for its run's repository (${target.repoPath}); leave repo out`, EXIT.usage);
    const storedBy: StoredBy = { via: 'agent', runId: target.runId, iteration: target.iteration, at };
    const file = appendSignal(target, [{ ask: 'store_pattern', runId: target.runId, iteration: target.iteration, pattern }], STORE);
    return McpMemoryStorePatternOutputSchema.parse({
      state: 'pending',
      kind: pattern.kind,
      title: pattern.title,
      redactions,
      storedBy,
      note:
        `written to ${file}: Vigil stores it when this agent call ends, as run ${target.runId}'s (iteration ${target.iteration}), ` +
        `marked as an agent's word; later prompts and vigil_memory_search find it.${redacted}`,
    } satisfies McpMemoryStorePatternOutput);
  }
  if (o.runId !== undefined)
    throw new CliError(
      `${STORE} refused the pattern: this server serves no run (VIGIL_RUN_ID is not set), so it cannot be stored as run "${o.runId}"'s; ` +
        'a person stores it as their own (leave runId out)',
      EXIT.usage,
    );
  const storedBy: StoredBy = { via: 'operator', by: defaultActor(), at };
  const [{ withEventStore }, { storeAgentPattern }] = await Promise.all([
    import('./event-store-client.js'),
    import('../lib/memory-agent.js'),
  ]);
  const s = await withEventStore(env, async (db) => {
    try {
      return await storeAgentPattern(db, pattern satisfies AgentPattern, storedBy, o.repo ?? null);
    } catch (err) {
      if (err instanceof Error && /forgot|not replaced/.test(err.message)) throw new CliError(`${STORE}: ${err.message}`, EXIT.usage);
      throw err;
    }
  });
  return McpMemoryStorePatternOutputSchema.parse({
    state: 'stored',
    id: s.id,
    kind: pattern.kind,
    title: pattern.title,
    redactions,
    storedBy,
    note: `${s.again ? 'stored again (its evidence counted)' : 'stored'} as pattern ${s.id}, marked as ${storedBy.by}'s word.${redacted}`,
  } satisfies McpMemoryStorePatternOutput);
}

/** `vigil_memory_consolidate`: a request the worker honours (an agent's), or the consolidation itself (a person's). */
export async function askConsolidation(env: NodeJS.ProcessEnv, o: { runs?: string[] | undefined }): Promise<McpMemoryConsolidateOutput> {
  if (env.VIGIL_RUN_ID) {
    const target = claimTarget(env, CONSOLIDATE);
    if (o.runs !== undefined)
      throw new CliError(`${CONSOLIDATE}: an agent asks for its own run's consolidation; leave runs out`, EXIT.usage);
    const file = appendSignal(target, [{ ask: 'consolidate', runId: target.runId, iteration: target.iteration }], CONSOLIDATE);
    return McpMemoryConsolidateOutputSchema.parse({
      state: 'requested',
      note:
        `written to ${file}: when this agent call ends, Vigil consolidates run ${target.runId} so far (its failures that ` +
        'repeat become anti-patterns, their fixes patterns), for the next prompts; its end consolidates it whole again',
    });
  }
  const [{ reportStore }, { consolidateMemory }, { closeEventStore }] = await Promise.all([
    import('./store.js'),
    import('../lib/memory-consolidation.js'),
    import('../lib/event-store.js'),
  ]);
  const store = await reportStore(env);
  try {
    const result = await consolidateMemory(store.url, o.runs ?? null);
    return McpMemoryConsolidateOutputSchema.parse({
      state: 'done',
      result,
      note: `consolidated ${result.runs} run(s) into ${result.patterns} pattern(s), ${result.antiPatterns} anti-pattern(s), ${result.skills} skill(s)`,
    });
  } finally {
    await closeEventStore();
    await store.release();
  }
}
