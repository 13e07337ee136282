/**
 * `vigil memory list|show|search|forget|export|import|economics|consolidate`: the memory that outlives a
 * run (docs/memory.md), in the event store the reports read (VIGIL_DATABASE_URL / DATABASE_URL,
 * else the local one). The functions here print and return the exit code; the reads and edits
 * are lib/lasting-memory.ts's, shared with the MCP tool and the console.
 */
import { writeFileSync } from 'node:fs';
import { consolidateMemory } from '../lib/memory-consolidation.js';
import { memoryEconomics } from '../lib/memory-economics-report.js';
import type { CallEconomicsLine } from '../rules/memory-economics.js';
import { judgementTotals, listMemory, searchMemory, showMemory, type MemoryItem, type MemoryKindName } from '../lib/memory-reads.js';
import { exportMemory, forgetMemory, importMemory } from '../lib/memory-transfer.js';
import { closeEventStore, describeUrl } from '../lib/event-store.js';
import { CliError, EXIT } from './connection.js';
import { loadMemoryFile } from './memory-import.js';
import { reportStore } from './store.js';
import { withEventStore } from './event-store-client.js';
import { neutraliseLine } from '../lib/terminal-text.js';

const out = (s: string): void => {
  process.stdout.write(`${s}\n`);
};

/**
 * The store's URL for the commands that write through the memory's own transactions (forget,
 * import, consolidate): the one `vigil report` reads, its pools closed at the end.
 */
async function withStoreUrl<T>(fn: (url: string) => Promise<T>): Promise<T> {
  const store = await reportStore(process.env);
  try {
    return await fn(store.url);
  } catch (err) {
    const code = (err as { code?: string } | null)?.code;
    if (
      err instanceof CliError ||
      !(
        code === 'ECONNREFUSED' ||
        code === 'ENOTFOUND' ||
        code === 'ETIMEDOUT' ||
        /timeout|terminated|connect/i.test(err instanceof Error ? err.message : '')
      )
    )
      throw err;
    throw new CliError(
      `the event store at ${describeUrl(store.url)} is unreachable: ${err instanceof Error ? err.message : String(err)}. ${store.hint}`,
      EXIT.unreachable,
    );
  } finally {
    await closeEventStore();
    await store.release();
  }
}

const KINDS: readonly MemoryKindName[] = ['pattern', 'skill', 'episode'];

/** `pattern 12`, `anti_pattern 12`, `skill 3`, `episode 40` (an anti-pattern is a pattern's kind). */
export function parseItem(kind: string, id: string): { kind: MemoryKindName; id: number } {
  const k = kind === 'anti_pattern' || kind === 'anti-pattern' ? 'pattern' : kind;
  if (!KINDS.includes(k as MemoryKindName))
    throw new CliError(`unknown memory kind "${kind}": one of pattern, anti-pattern, skill, episode`, EXIT.usage);
  if (!/^\d{1,15}$/.test(id) || Number(id) < 1)
    throw new CliError(`"${id}" is not a memory id (a positive integer, from vigil memory list)`, EXIT.usage);
  return { kind: k as MemoryKindName, id: Number(id) };
}

const itemLine = (i: MemoryItem): string =>
  neutraliseLine(
    `${i.kind.padEnd(12)} ${String(i.id).padStart(5)}  ${i.topic.padEnd(16).slice(0, 16)} ×${String(i.evidence).padEnd(3)} imp ` +
      `${i.importance.toFixed(2)} used ${i.accessCount}  ${i.title}${i.repo === null ? '  (across repositories)' : ''}`,
  );

export async function memoryListCommand(o: { repo?: string; episodes?: boolean; limit?: number; json?: boolean }): Promise<number> {
  const { items, judgement } = await withEventStore(process.env, async (db) => ({
    items: await listMemory(db, { repo: o.repo ?? null, episodes: Boolean(o.episodes), limit: o.limit ?? 100 }),
    judgement: await judgementTotals(db),
  }));
  if (o.json) out(JSON.stringify({ items, judgement }, null, 2));
  else if (items.length === 0)
    out(
      'no memory yet: runs that journal into the event store leave it when they end (vigil memory consolidate builds it from the runs stored so far)',
    );
  else for (const i of items) out(itemLine(i));
  // What judgement cost (the memory judge's calls as runs ended, in this installation), apart from the runs' spend.
  if (!o.json && judgement.runs > 0) {
    out(
      `memory judgement: ${judgement.calls} call(s) over ${judgement.runs} run(s), ${judgement.usd} USD; ` +
        `${judgement.lessons} lesson(s), ` +
        `${judgement.merges} merge(s)${judgement.refused ? `; ${judgement.refused} answer(s) changed nothing` : ''}`,
    );
  }
  return 0;
}

export async function memoryShowCommand(kind: string, id: string, o: { json?: boolean }): Promise<number> {
  const item = parseItem(kind, id);
  const row = await withEventStore(process.env, (db) => showMemory(db, item.kind, item.id));
  if (!row) throw new CliError(`no ${kind} ${id} in the memory`, EXIT.noSuchRun);
  if (o.json) {
    out(JSON.stringify(row, null, 2));
    return 0;
  }
  for (const [k, v] of Object.entries(row)) {
    if (k === 'links') continue;
    out(neutraliseLine(`${k}: ${typeof v === 'string' ? v : JSON.stringify(v)}`));
  }
  const links = row.links as { relation: string; from: string; to: string }[];
  if (links.length) out(`links:\n${links.map((l) => `  ${l.from} ${l.relation} ${l.to}`).join('\n')}`);
  return 0;
}

export async function memorySearchCommand(query: string, o: { repo?: string; limit?: number; json?: boolean }): Promise<number> {
  const hits = await withEventStore(process.env, (db) => searchMemory(db, query, { repo: o.repo ?? null, limit: o.limit ?? 20 }));
  if (o.json) out(JSON.stringify({ query, hits }, null, 2));
  else if (hits.length === 0) out(`nothing in the memory matches "${neutraliseLine(query)}"`);
  else for (const h of hits) out(`${itemLine(h)}\n    ${neutraliseLine(h.body)}`);
  return 0;
}

export async function memoryForgetCommand(kind: string, id: string, o: { json?: boolean }): Promise<number> {
  const item = parseItem(kind, id);
  const gone = await withStoreUrl((url) => forgetMemory(url, item.kind, item.id));
  if (!gone) throw new CliError(`no ${kind} ${id} in the memory`, EXIT.noSuchRun);
  if (o.json) out(JSON.stringify({ forgotten: gone }, null, 2));
  else
    out(
      neutraliseLine(
        `forgot ${gone.kind} ${gone.id}: ${gone.title}${gone.kind === 'episode' ? '' : ' (consolidation will not make it again)'}`,
      ),
    );
  return 0;
}

export async function memoryExportCommand(o: { repo?: string; out?: string }): Promise<number> {
  const data = await withEventStore(process.env, (db) => exportMemory(db, o.repo ?? null));
  const text = `${JSON.stringify(data, null, 2)}\n`;
  if (o.out) {
    writeFileSync(o.out, text, { mode: 0o600 });
    process.stderr.write(
      `wrote ${data.episodes.length} episode(s), ${data.patterns.length} pattern(s), ${data.skills.length} skill(s) to ${o.out}\n`,
    );
  } else process.stdout.write(text);
  return 0;
}

export async function memoryImportCommand(file: string, o: { repo?: string; json?: boolean }): Promise<number> {
  // Checked whole before the store is opened: a bad field is named, and nothing is written.
  const data = loadMemoryFile(file);
  const r = await withStoreUrl(async (url) => {
    try {
      return await importMemory(url, data, o.repo ?? null);
    } catch (err) {
      // A value the checks let through and Postgres refused (a data or constraint error): the import rolled back.
      const code = (err as { code?: unknown } | null)?.code;
      if (typeof code === 'string' && /^2[23]/.test(code))
        throw new CliError(
          `${file} has a value the event store refused (${(err instanceof Error ? err.message : String(err)).split('\n')[0] ?? ''}); nothing was imported`,
          EXIT.usage,
        );
      throw err;
    }
  });
  if (o.json) out(JSON.stringify({ imported: r }, null, 2));
  else out(`imported ${r.episodes} episode(s), ${r.patterns} pattern(s), ${r.skills} skill(s)`);
  return 0;
}

export async function memoryConsolidateCommand(o: { run?: string; json?: boolean }): Promise<number> {
  const r = await withStoreUrl((url) => consolidateMemory(url, o.run ? [o.run] : null));
  if (o.json) out(JSON.stringify(r, null, 2));
  else
    out(
      `consolidated ${r.runs} run(s): ${r.episodes} episode(s) → ${r.antiPatterns} anti-pattern(s), ${r.patterns} pattern(s), ` +
        `${r.skills} skill(s), ${r.links} link(s)`,
    );
  return 0;
}

/** One call's line: what its prompt read, what it added, what it crossed and what its retrieval did. */
export function economicsLine(c: CallEconomicsLine): string {
  const crossed = c.actions.length ? `; crossed: ${c.actions.join(', ')}` : '';
  const acted = c.acted.length ? `; its retrieval acted on: ${c.acted.join(', ')}` : '';
  return (
    `${c.runId} iteration ${c.iteration}: read ${c.readTokens} token(s), added ${c.discoveryTokens} (ratio ${c.ratio}), ` +
    `saved ${c.savingsPercent} %, ${c.layer3Loads} entr${c.layer3Loads === 1 ? 'y' : 'ies'} loaded whole${crossed}${acted}`
  );
}

export async function memoryEconomicsCommand(o: { run?: string; limit?: number; json?: boolean }): Promise<number> {
  const r = await withEventStore(process.env, (db) => memoryEconomics(db, { run: o.run ?? null, limit: o.limit ?? 50 }));
  if (o.json) {
    out(JSON.stringify(r, null, 2));
    return 0;
  }
  if (r.calls.length === 0) {
    out(
      o.run
        ? `no agent call of ${neutraliseLine(o.run)} has token economics (its calls read no memory, or it is not in this store)`
        : 'no agent call has token economics yet (they are kept from the first call that reads the memory)',
    );
    return 0;
  }
  out(`token economics of ${r.calls.length} agent call(s)${o.run ? ` of ${neutraliseLine(o.run)}` : ' (the latest)'}:`);
  for (const c of r.calls) out(`  ${neutraliseLine(economicsLine(c))}`);
  const t = r.totals;
  const crossed = Object.entries(t.crossed).map(([a, n]) => `${a} ×${n}`);
  out(
    `in all: read ${t.readTokens} token(s), added ${t.discoveryTokens} (ratio ${t.ratio}), saved ${t.savingsPercent} % on average, ` +
      `${t.layer3Loads} entries loaded whole; thresholds crossed: ${crossed.length ? crossed.join(', ') : 'none'}`,
  );
  return 0;
}
