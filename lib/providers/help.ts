/**
 * Owns reading a CLI's --help text: which of a preset's optional flags (or subcommands) the
 * installed version advertises, so a preset passes a flag only when the CLI knows it. Pure.
 *
 * A flag candidate (`--resume`, `-r`) matches where it stands as a flag of its own: not inside a
 * longer flag (`--resume` does not match `--resume-session`, `-r` does not match `--resume`).
 * A bare-word candidate (`resume`) is a subcommand: it matches only at the start of an indented
 * line, as help texts list commands, so prose mentioning the word does not count.
 */
import { cleanText } from './common.js';

const escapeRegExp = (s: string): string => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

export function advertisedFlags(helpText: string, candidates: string[]): Set<string> {
  const text = cleanText(helpText);
  const found = new Set<string>();
  for (const candidate of candidates) {
    const c = candidate.trim();
    if (!c) continue;
    const pattern = c.startsWith('-')
      ? new RegExp(`(^|[^A-Za-z0-9_-])${escapeRegExp(c)}(?![A-Za-z0-9_-])`, 'm')
      : new RegExp(`^[ \\t]+${escapeRegExp(c)}(?![A-Za-z0-9_-])`, 'm');
    if (pattern.test(text)) found.add(candidate);
  }
  return found;
}
