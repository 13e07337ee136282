/**
 * The files an agent call read (docs/memory.md, What is kept), for the memory's episode of the
 * iteration: what its CLI's transcript says (the provider presets' `filesRead`: read and search
 * tools, commands that print a file) and, for any agent, the signal file
 * `.vigil/signals/FILES_READ` (one path a line; consumed). Kept beside the call's log as
 * `<label>.files-read.json` — never in workflow history — where the iteration's memory trace reads
 * it. Bounded (MAX_FILES_READ paths of at most 300 characters), paths under the repository made
 * relative to it; redacted when the trace is stored.
 */
import path from 'node:path';
import { MAX_FILES_READ } from './providers/common.js';
import { consumeFile, readRegularFile, writePrivateFile } from './safe-files.js';

const sidecar = (logPath: string): string => logPath.replace(/\.log$/, '.files-read.json');

/** Paths as the memory keeps them: trimmed, relative to the repository when under it, each once, bounded. */
export function normalizeReads(paths: readonly string[], repoPath: string): string[] {
  const root = path.resolve(repoPath);
  const out = new Set<string>();
  for (const raw of paths) {
    const p = raw.trim();
    if (!p || p.length > 1000 || p.includes('\0')) continue;
    const abs = path.resolve(root, p);
    const rel = abs === root ? '.' : abs.startsWith(`${root}${path.sep}`) ? path.relative(root, abs) : p;
    out.add(rel.slice(0, 300));
    if (out.size >= MAX_FILES_READ) break;
  }
  return [...out];
}

/** After a call: what its transcript and its FILES_READ signal say it read, beside its log (best effort). */
export function keepFilesRead(p: {
  logPath: string;
  repoPath: string;
  fromTranscript: readonly string[] | undefined;
  signalFile: string;
}): void {
  const kept = p.logPath.replace(/\.log$/, '.files-read-signal');
  const signalled = consumeFile(p.signalFile, kept) === 'moved' ? readRegularFile(kept, 64 * 1024) : null;
  const lines = signalled?.ok ? signalled.text.split('\n') : [];
  const read = normalizeReads([...(p.fromTranscript ?? []), ...lines], p.repoPath);
  if (read.length === 0) return;
  try {
    writePrivateFile(sidecar(p.logPath), JSON.stringify(read));
  } catch {
    // Only the memory's trace misses it.
  }
}

/** What a call read, as kept beside its log ([] when nothing was). */
export function filesReadOf(logPath: string, repoPath: string): string[] {
  const r = readRegularFile(sidecar(logPath), 128 * 1024);
  if (!r?.ok) return [];
  try {
    const v: unknown = JSON.parse(r.text);
    return Array.isArray(v)
      ? normalizeReads(
          v.filter((x): x is string => typeof x === 'string'),
          repoPath,
        )
      : [];
  } catch {
    return [];
  }
}
