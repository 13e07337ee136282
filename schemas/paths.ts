/**
 * Where a run's files live in the repository, as plain strings (sandbox-safe, so the workflow can
 * name a file for an activity): `.vigil/runs/<workflowId>/`.
 */
export const VIGIL_DIR = '.vigil';

const MAX_SEGMENT = 200;

/** Two 32-bit FNV-1a hashes (different offsets) of `s`, as 16 hex digits. */
function fnv64(s: string): string {
  let a = 0x811c9dc5;
  let b = 0x01000193 ^ 0x5bd1e995;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    a = Math.imul(a ^ c, 0x01000193) >>> 0;
    b = Math.imul(b ^ c, 0x01000193) >>> 0;
    b = (b ^ (b >>> 13)) >>> 0;
  }
  return a.toString(16).padStart(8, '0') + b.toString(16).padStart(8, '0');
}

/**
 * A workflow id as one path segment, injectively: letters, digits, `_`, `-` and `.` stay, every
 * other character is percent-encoded (UTF-8), and a leading dot too, so `a:1` and `a_1` get
 * different folders. An id whose encoding is longer than 200 characters keeps its first 183
 * characters plus `~` and a 64-bit hash of the whole id (`~` itself is always encoded otherwise).
 */
export function safeSegment(id: string): string {
  let enc: string;
  try {
    enc = encodeURIComponent(id);
  } catch {
    // A lone surrogate (never a valid Temporal id): encode code units.
    enc = Array.from(id, (ch) => (/^[A-Za-z0-9_.-]$/.test(ch) ? ch : `%u${ch.charCodeAt(0).toString(16).padStart(4, '0')}`)).join('');
  }
  enc = enc.replace(/[!~*'()]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`).replace(/^\./, '%2E');
  if (!enc) return '%00';
  if (enc.length <= MAX_SEGMENT) return enc;
  return `${enc.slice(0, MAX_SEGMENT - 17)}~${fnv64(id)}`;
}

/** The run's artifact folder (POSIX path). */
export function runDirPath(repoPath: string, runId: string): string {
  return `${repoPath.replace(/\/+$/, '')}/${VIGIL_DIR}/runs/${safeSegment(runId)}`;
}

/** The run's fetch log: one JSON line per package fetch its sandboxed calls made or were refused (rules/package-fetches.ts). */
export const FETCH_LOG = 'packages.jsonl';

export function fetchLogPath(repoPath: string, runId: string): string {
  return `${runDirPath(repoPath, runId)}/${FETCH_LOG}`;
}

/** The file a run started from a goal (`vigil start --goal`) has its PRD in, in its run folder, written by the discovery call. */
export const DISCOVERED_PRD = 'PRD.md';

export function discoveredPrdPath(repoPath: string, runId: string): string {
  return `${runDirPath(repoPath, runId)}/${DISCOVERED_PRD}`;
}
