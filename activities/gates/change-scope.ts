/**
 * What a gate may block on: the lines the run wrote. The gates that read files (documentation,
 * static analysis's linters, mock integrity, secret scan) judge the change, not the legacy: a
 * finding on a line the run neither added nor changed since its start tree was already there
 * before the agent came, and stays in the results as advisory (severity `info`, "already in the
 * base tree: …"), never blocking. Measured against the run's start, not the tree a gate last
 * passed on, so that a problem an agent wrote one iteration ago still blocks now.
 *
 * The lines come from `git diff -U0` between the start tree and the tree the pass looks at (the
 * new side's line numbers of every hunk). A file the run added counts whole; a file the diff
 * does not name is unchanged since the start, however often it changed in between.
 */
import type { FindingInput } from '../../schemas/gates.js';
import { EXCLUDE, git } from '../git.js';

/** Per changed file, the new side's changed lines as inclusive [first, last] spans, in order. */
export type ChangedLines = ReadonlyMap<string, readonly (readonly [number, number])[]>;

/** What the run changed since its start, as a gate reads it. */
export interface ChangeScope {
  lines: ChangedLines;
  /** The names at the start tree's root (whether a README was there before the run). */
  startRoot: ReadonlySet<string>;
}

/** Undoes git's C-style quoting of a path (`"a\tb"`, octal escapes for bytes outside ASCII). */
export function unquoteGitPath(raw: string): string {
  if (!raw.startsWith('"') || !raw.endsWith('"')) return raw;
  const body = raw.slice(1, -1);
  const bytes: number[] = [];
  const named: Record<string, number> = { a: 7, b: 8, t: 9, n: 10, v: 11, f: 12, r: 13, '"': 34, '\\': 92 };
  for (let i = 0; i < body.length; i++) {
    const c = body[i] as string;
    if (c !== '\\') {
      bytes.push(...Buffer.from(c, 'utf8'));
      continue;
    }
    const next = body[i + 1] ?? '';
    const octal = /^[0-7]{3}/.exec(body.slice(i + 1, i + 4));
    if (octal) {
      bytes.push(Number.parseInt(octal[0], 8));
      i += 3;
    } else {
      bytes.push(named[next] ?? next.charCodeAt(0));
      i += 1;
    }
  }
  return Buffer.from(bytes).toString('utf8');
}

const HUNK = /^@@ -\d+(?:,\d+)? \+(\d+)(?:,(\d+))? @@/;

/** The changed lines of a `git diff -U0 --no-prefix` (paths as git prints them after `+++ `). */
export function parseZeroContextDiff(diff: string): Map<string, [number, number][]> {
  const out = new Map<string, [number, number][]>();
  let spans: [number, number][] | null = null;
  for (const line of diff.split('\n')) {
    if (line.startsWith('+++ ')) {
      const target = line.slice(4);
      spans = target === '/dev/null' ? null : [];
      if (spans) out.set(unquoteGitPath(target), spans);
      continue;
    }
    const hunk = spans ? HUNK.exec(line) : null;
    if (!hunk || !spans) continue;
    const start = Number(hunk[1]);
    const count = hunk[2] === undefined ? 1 : Number(hunk[2]);
    if (count > 0) spans.push([start, start + count - 1]);
  }
  return out;
}

/** Whether the run wrote `line` of `file` (a finding without a line: whether it changed the file at all). */
export function wroteLine(lines: ChangedLines, file: string, line: number | null | undefined): boolean {
  const spans = lines.get(file);
  if (!spans) return false;
  if (line === null || line === undefined || line === 0) return true;
  return spans.some(([first, last]) => line >= first && line <= last);
}

/** A finding already in the base tree, as the results keep it: advisory, and saying so. */
export function asLegacy(f: FindingInput): FindingInput {
  const message = `already in the base tree: ${f.message}`;
  return { ...f, severity: 'info', message: message.length > 500 ? `${message.slice(0, 497)}...` : message };
}

/**
 * The findings with those on lines the run did not write made advisory (`judged` says which
 * findings the rule applies to; a finding without a file always stands), and how many were.
 * Without a scope (the start tree unknown) every finding stands, as before.
 */
export function scopeFindings(
  findings: readonly FindingInput[],
  scope: ChangeScope | undefined,
  judged: (f: FindingInput) => boolean = () => true,
): { findings: FindingInput[]; legacy: number } {
  if (!scope) return { findings: [...findings], legacy: 0 };
  let legacy = 0;
  const out = findings.map((f) => {
    const file = f.file ?? null;
    if (file === null || !judged(f) || wroteLine(scope.lines, file, f.line)) return f;
    legacy++;
    return asLegacy(f);
  });
  return { findings: out, legacy };
}

/** ", N already in the base tree (advisory)" for a gate's reason, or ''. */
export const legacyNote = (legacy: number): string => (legacy > 0 ? `; ${legacy} already in the base tree (advisory)` : '');

/** The largest diff read (bytes); a larger change is judged whole, file by file, as before. */
const MAX_DIFF_BYTES = 32 * 1024 * 1024;

/**
 * The scope of a pass: what changed from `startTree` to `tree` (`.vigil/` excluded). Null when the
 * start tree is gone or the diff cannot be read: the gates then judge every finding, as before.
 */
export async function changeScope(repoPath: string, startTree: string, tree: string): Promise<ChangeScope | null> {
  try {
    const [diff, root] = await Promise.all([
      git(repoPath, [
        'diff',
        '-U0',
        '--no-color',
        '--no-ext-diff',
        '--no-textconv',
        '--no-renames',
        '--no-prefix',
        startTree,
        tree,
        '--',
        '.',
        EXCLUDE,
      ]),
      git(repoPath, ['ls-tree', '--name-only', '-z', startTree]),
    ]);
    if (diff.length > MAX_DIFF_BYTES) return null;
    return { lines: parseZeroContextDiff(diff), startRoot: new Set(root.split('\0').filter(Boolean)) };
  } catch {
    return null;
  }
}
