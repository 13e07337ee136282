/**
 * What counts as the repository's README: a root file with one of these names, in any letter case
 * (the documentation gate, and `vigil try`'s check of a repository before a first run).
 */

/** README names accepted in the repository root (any letter case). */
export const README_NAMES = ['README.md', 'README', 'README.rst', 'README.txt'] as const;

/** The names among a folder's `entries` that are README names, sorted. */
export function readmeCandidates(entries: readonly string[]): string[] {
  const wanted = new Set<string>(README_NAMES.map((n) => n.toLowerCase()));
  return entries.filter((n) => wanted.has(n.toLowerCase())).sort();
}
