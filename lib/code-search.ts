/**
 * Code search over a repository (the MCP tool `vigil_code_search`, cli/mcp-code-search.ts;
 * docs/mcp.md): what matches a string or a regular expression, as `path:line` and the line, at
 * most a bounded number of hits.
 *
 * The index is git's own, not one Vigil writes: `git grep` searches the files git's index lists
 * (built once per checkout and kept up to date incrementally — a file whose size and mtime are
 * unchanged is not read again to know it; a changed one is re-hashed) plus the untracked files
 * .gitignore does not exclude, with git's multi-threaded search. On this repository (about 1,000
 * files) a search answers in under 50 ms, so a content index (trigrams, embeddings) of our own
 * would be code and state that is not Vigil's business. Vigil's own folder (`.vigil/`: prompts,
 * logs, signals) is never searched; binary files are skipped.
 */
import { spawn, spawnSync } from 'node:child_process';
import { realpathSync } from 'node:fs';
import path from 'node:path';
import { VIGIL_DIR } from '../schemas/paths.js';
import { redactSecrets } from '../rules/scans.js';
import { configEnv, FIXED_SETTINGS, pinnedDirsEnv, safeGitEnv } from './git-env.js';
import { readGitDirs } from './git-layout.js';

export const CODE_SEARCH_LIMITS = { queryChars: 500, hits: 200, defaultHits: 50, snippetChars: 240, timeoutMs: 20_000 } as const;

/** A search Vigil refuses (a path outside the repository, a folder that is not a git work tree): the message says what to do. */
export class CodeSearchRefused extends Error {}

export interface CodeHit {
  path: string;
  line: number;
  snippet: string;
}

export interface CodeSearchResult {
  repo: string;
  query: string;
  hits: CodeHit[];
  /** More matched than the limit: narrow the query or the path. */
  truncated: boolean;
}

export interface CodeSearchOptions {
  query: string;
  /** A folder or file inside the repository (relative to its top, or absolute inside it). */
  path?: string | undefined;
  regex?: boolean | undefined;
  caseSensitive?: boolean | undefined;
  limit?: number | undefined;
}

/** The top of the git work tree `dir` is in, resolved; refused when it is none. */
export function repositoryTop(dir: string): string {
  const r = spawnSync('git', ['rev-parse', '--show-toplevel'], {
    cwd: dir,
    encoding: 'utf8',
    timeout: 10_000,
    env: { ...process.env, ...configEnv(FIXED_SETTINGS) },
  });
  const top = r.status === 0 ? r.stdout.trim() : '';
  if (!top) throw new CodeSearchRefused(`${dir} is not inside a git work tree: name the repository to search`);
  return realpathSync(top);
}

/**
 * The environment git runs in for the search: the repository's folders pinned and every command
 * its configuration could make git run neutralised (lib/git-env.ts), as for every git command
 * Vigil runs on a repository an agent works in.
 */
function searchEnv(top: string): NodeJS.ProcessEnv {
  let dirs: ReturnType<typeof readGitDirs>;
  try {
    dirs = readGitDirs(top);
  } catch (err) {
    throw new CodeSearchRefused(`the git folder of ${top} is not searched: ${err instanceof Error ? err.message : String(err)}`);
  }
  try {
    return { ...process.env, ...safeGitEnv(dirs), GIT_OPTIONAL_LOCKS: '0' };
  } catch {
    // Where Vigil's home cannot be written (an agent's sandbox) or the configuration cannot be read: a
    // search runs no hook and no driver, so the fixed settings (no fsmonitor) are what it needs.
    return { ...process.env, ...pinnedDirsEnv(dirs), ...configEnv(FIXED_SETTINGS), GIT_OPTIONAL_LOCKS: '0' };
  }
}

/**
 * A path given by the caller as a pathspec of the repository, or refused when it leads outside
 * (`..`, an absolute path elsewhere, a link that points out).
 */
export function insideRepository(top: string, given: string): string {
  if (given.includes('\0')) throw new CodeSearchRefused('the path holds a NUL character');
  const abs = path.resolve(top, given);
  let real = abs;
  try {
    real = realpathSync(abs);
  } catch {
    /* not there (yet): the lexical check below decides, and git finds nothing */
  }
  const within = (p: string): boolean => p === top || p.startsWith(`${top}${path.sep}`);
  if (!within(abs) || !within(real))
    throw new CodeSearchRefused(
      `${given} is outside the repository ${top}: vigil_code_search searches that repository only (give a path inside it, relative to its top)`,
    );
  return path.relative(top, real) || '.';
}

/** Searches the repository whose top is `top`: at most `limit` hits, in git's order (by path, then line). */
export async function searchCode(top: string, o: CodeSearchOptions): Promise<CodeSearchResult> {
  if (o.query.length === 0 || o.query.length > CODE_SEARCH_LIMITS.queryChars)
    throw new CodeSearchRefused(`the query is empty or longer than ${CODE_SEARCH_LIMITS.queryChars} characters`);
  const limit = Math.min(Math.max(o.limit ?? CODE_SEARCH_LIMITS.defaultHits, 1), CODE_SEARCH_LIMITS.hits);
  const where = o.path !== undefined ? insideRepository(top, o.path) : '.';
  const args = [
    'grep',
    '-n',
    '-I',
    '-z',
    '--no-color',
    '--full-name',
    '--untracked',
    o.regex ? '-E' : '-F',
    ...(o.caseSensitive ? [] : ['-i']),
    '-e',
    o.query,
    '--',
    where === '.' ? ':(top)' : `:(top,literal)${where}`,
    `:(top,exclude)${VIGIL_DIR}`,
  ];
  const env = searchEnv(top);
  const hits: CodeHit[] = [];
  let truncated = false;
  const { code, stderr } = await new Promise<{ code: number | null; stderr: string }>((resolve, reject) => {
    const child = spawn('git', args, { cwd: top, stdio: ['ignore', 'pipe', 'pipe'], env });
    const timer = setTimeout(() => child.kill('SIGKILL'), CODE_SEARCH_LIMITS.timeoutMs);
    let rest = '';
    let err = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
      rest += chunk;
      let nl: number;
      while ((nl = rest.indexOf('\n')) >= 0) {
        const [file, line, ...text] = rest.slice(0, nl).split('\0');
        rest = rest.slice(nl + 1);
        if (hits.length >= limit) {
          truncated = true;
          child.kill('SIGTERM');
          return;
        }
        if (file === undefined || line === undefined) continue;
        const snippet = redactSecrets(text.join('\0').trim()).text;
        hits.push({
          path: file,
          line: Number(line),
          snippet: snippet.length > CODE_SEARCH_LIMITS.snippetChars ? `${snippet.slice(0, CODE_SEARCH_LIMITS.snippetChars - 1)}…` : snippet,
        });
      }
    });
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (err = (err + chunk).slice(-2000)));
    child.on('error', reject);
    child.on('close', (c) => {
      clearTimeout(timer);
      resolve({ code: c, stderr: err });
    });
  });
  // git grep: 0 found, 1 none; a search cut at the limit ends by our signal.
  if (!truncated && code !== 0 && code !== 1)
    throw new CodeSearchRefused(
      `git grep failed: ${stderr.trim().split('\n')[0] ?? `exit ${code}`} (a regular expression git cannot read?)`,
    );
  return { repo: top, query: o.query, hits, truncated };
}
