/**
 * Patterns an agent or a person stores in the memory that outlives a run, and the consolidation
 * an agent asks for (docs/memory.md, Patterns an agent stores; the MCP tools in
 * cli/mcp-memory-write.ts, the rules in rules/memory-agent.ts).
 *
 * How an agent's write reaches the store: the agent sandbox refuses connections to the store, so
 * the `vigil mcp` an agent call runs writes what it is given — validated and redacted — to the
 * signal file `.vigil/signals/MEMORY` of the run's repository, and the worker reads it when the
 * call ends (`ingestMemorySignals`, from the iteration's agent activity, within the memory's few
 * seconds): it validates every line again, refuses a line that names another run or iteration,
 * and stores the rest with the provenance it knows itself (the run and iteration of the call it
 * ran), never the file's. One path whether or not the agent's server could reach the store: what
 * a file in the repository says is only ever stored as that call's.
 */
import path from 'node:path';
import { VIGIL_DIR } from '../schemas/paths.js';
import { AGENT_PATTERN_LIMITS, MemorySignalLineSchema, type AgentPattern, type StoredBy } from '../schemas/memory-agent.js';
import {
  AGENT_PATTERN_IMPORTANCE,
  AGENT_PATTERN_REPEAT_GAIN,
  agentKeywords,
  agentSignature,
  redactPattern,
  refusalOf,
} from '../rules/memory-agent.js';
import type { Db } from './event-store.js';
import { consolidateMemory } from './memory-consolidation.js';
import { inTransaction, repoKey } from './memory-store.js';
import { consumeFile, readRegularFile } from './safe-files.js';

/** The signal file an agent call's `vigil mcp` writes memory requests to, under `.vigil/signals/`. */
export const MEMORY_SIGNAL = 'MEMORY';

/**
 * Stores a pattern (redacted here again) as `by`'s: a new item, or the same lesson (kind and
 * title) stored before gains evidence and a little importance. Refused when a person forgot it
 * (`vigil memory forget`): forgetting is for good.
 */
export async function storeAgentPattern(
  db: Db,
  given: AgentPattern,
  by: StoredBy,
  repoPath: string | null,
): Promise<{ id: number; redactions: number; again: boolean }> {
  const { pattern, redactions } = redactPattern(given);
  const repo = repoPath ? repoKey(repoPath) : null;
  const signature = agentSignature(pattern);
  const forgotten = await db.query('select 1 from memory_forgotten where scope = $1 and kind = $2 and signature = $3', [
    repo ?? '',
    pattern.kind,
    signature,
  ]);
  if (forgotten.rowCount)
    throw new Error(`a person forgot this ${pattern.kind} ("${pattern.title}") with \`vigil memory forget\`: it is not stored again`);
  const r = await db.query<{ id: string; again: boolean }>(
    `insert into memory_patterns (repo, kind, signature, topic, title, body, keywords, evidence, runs, first_seen, last_seen, importance, stored_by)
     values ($1, $2, $3, $4, $5, $6, $7, 1, 1, now(), now(), $8, $9)
     on conflict (scope, kind, signature) do update set topic = excluded.topic, body = excluded.body, keywords = excluded.keywords,
       evidence = memory_patterns.evidence + 1, last_seen = now(), stored_by = excluded.stored_by, updated_at = now(),
       importance = least(1, memory_patterns.importance + ${AGENT_PATTERN_REPEAT_GAIN})
     where memory_patterns.stored_by is not null
     returning id, (xmax <> 0) as again`,
    [
      repo,
      pattern.kind,
      signature,
      pattern.topic,
      pattern.title,
      pattern.body,
      JSON.stringify(agentKeywords(pattern)),
      AGENT_PATTERN_IMPORTANCE,
      JSON.stringify(by),
    ],
  );
  const row = r.rows[0];
  // Only an item consolidation made or a memory file brought has this signature without a storer: never overwritten.
  if (!row) throw new Error(`an item with this title ("${pattern.title}") was made from evidence or imported; it is not replaced`);
  return { id: Number(row.id), redactions, again: row.again };
}

export interface IngestResult {
  stored: { id: number; title: string; redactions: number; chars: number }[];
  refused: string[];
  consolidated: boolean;
}

/**
 * After a builder's call: its memory requests (`.vigil/signals/MEMORY`), consumed whatever
 * happens (kept beside the call's log as `<label>.memory-signal`), stored as the call's when a
 * store is given. A consolidation asked for consolidates the run so far (`unfinished`: its end
 * still consolidates it whole).
 */
export async function ingestMemorySignals(
  url: string | null,
  call: { runId: string; iteration: number; repoPath: string; logPath: string },
): Promise<IngestResult> {
  const out: IngestResult = { stored: [], refused: [], consolidated: false };
  const kept = call.logPath.replace(/\.log$/, '.memory-signal');
  const moved = consumeFile(path.join(call.repoPath, VIGIL_DIR, 'signals', MEMORY_SIGNAL), kept);
  if (moved === 'link-removed') out.refused.push('the memory signal was not a regular file: removed, not read');
  if (moved !== 'moved') return out;
  const file = readRegularFile(kept, AGENT_PATTERN_LIMITS.fileBytes);
  if (!file?.ok) return { ...out, refused: [`the memory signal is not read: ${file?.problem ?? 'gone'}`] };
  const lines = file.text.split('\n').filter((l) => l.trim() !== '');
  if (lines.length > AGENT_PATTERN_LIMITS.linesPerCall)
    out.refused.push(
      `${lines.length - AGENT_PATTERN_LIMITS.linesPerCall} line(s) beyond ${AGENT_PATTERN_LIMITS.linesPerCall} a call may leave`,
    );
  const asks = [];
  for (const [n, text] of lines.slice(0, AGENT_PATTERN_LIMITS.linesPerCall).entries()) {
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch {
      out.refused.push(`line ${n + 1}: not JSON`);
      continue;
    }
    const line = MemorySignalLineSchema.safeParse(parsed);
    if (!line.success) {
      out.refused.push(`line ${n + 1}: ${line.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ')}`);
      continue;
    }
    const why = refusalOf(line.data, call);
    if (why) out.refused.push(`line ${n + 1}: ${why}`);
    else asks.push(line.data);
  }
  if (!url) return { ...out, refused: [...out.refused, ...asks.map(() => 'no event store on this worker: not stored')] };
  const at = new Date().toISOString();
  const by: StoredBy = { via: 'agent', runId: call.runId, iteration: call.iteration, at };
  for (const a of asks) {
    if (a.ask !== 'store_pattern') continue;
    try {
      const s = await inTransaction(url, (db) => storeAgentPattern(db, a.pattern, by, call.repoPath));
      out.stored.push({
        id: s.id,
        title: a.pattern.title,
        redactions: s.redactions,
        chars: a.pattern.title.length + a.pattern.body.length,
      });
    } catch (err) {
      out.refused.push(err instanceof Error ? err.message : String(err));
    }
  }
  if (asks.some((a) => a.ask === 'consolidate')) {
    await consolidateMemory(url, [call.runId], { unfinished: true });
    out.consolidated = true;
  }
  return out;
}

/** What an ingestion did, in one line for the worker's log (null: the call asked nothing). */
export function ingestSummary(r: IngestResult | null): string | null {
  if (!r || (!r.stored.length && !r.refused.length && !r.consolidated)) return null;
  const stored = r.stored.map((s) => `#${s.id} "${s.title}"${s.redactions ? ` (${s.redactions} secret(s) redacted)` : ''}`);
  return [
    stored.length ? `stored ${stored.join(', ')}` : '',
    r.consolidated ? 'consolidated the run so far' : '',
    r.refused.length ? `refused: ${r.refused.join(' | ')}` : '',
  ]
    .filter(Boolean)
    .join('; ');
}
