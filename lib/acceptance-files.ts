/**
 * The acceptance folder a person names (`vigil start --acceptance DIR`, knob `acceptanceTests`):
 * what it holds, checked before anything is started or sealed — the folder exists, lies outside
 * the repository, holds at least one test file, every file is a regular file within the bounds,
 * and every Python and JavaScript file parses (`python3` compiles it in memory, `node --check`) —
 * with the sha256 of every file. The CLI asks this at `vigil start` (bad input: exit 2 with the
 * reason); the seal (activities/acceptance.ts) asks it again on the worker before copying.
 * Nothing here writes: Python's compile() is asked in memory, so no `__pycache__` appears.
 */
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { lstatSync, readdirSync, readFileSync, realpathSync } from 'node:fs';
import path from 'node:path';
import { MAX_ACCEPTANCE_FILES, type AcceptanceFile } from '../schemas/acceptance.js';

/** One file, and the whole folder, at most this large: a person's tests, not a data set. */
const MAX_FILE_BYTES = 1024 * 1024;
const MAX_TOTAL_BYTES = 16 * 1024 * 1024;
const PARSE_TIMEOUT_MS = 20_000;
/** Folders a tool leaves beside tests, never part of them. */
const SKIPPED_DIRS = new Set(['__pycache__', 'node_modules', '.git', '.pytest_cache', '.venv']);

/** A test file by its name: what pytest, unittest, node's test runner, vitest, jest, mocha and go test pick up. */
export function isTestFile(rel: string): boolean {
  const base = path.posix.basename(rel);
  return (
    /^test_.+\.py$/.test(base) ||
    /^.+_test\.py$/.test(base) ||
    /^.+\.(?:test|spec)\.[cm]?[jt]sx?$/.test(base) ||
    /^test[-_.].+\.[cm]?js$/.test(base) ||
    /^.+_test\.go$/.test(base)
  );
}

export type AcceptanceInspection = { ok: true; files: AcceptanceFile[]; tests: number } | { ok: false; reason: string };

const sha256 = (bytes: Buffer): string => createHash('sha256').update(bytes).digest('hex');

function realOrSelf(p: string): string {
  try {
    return realpathSync(p);
  } catch {
    return path.resolve(p);
  }
}

const within = (child: string, parent: string): boolean => child === parent || child.startsWith(`${parent}${path.sep}`);

/** The folder's files (relative, POSIX), or why it cannot be read as one. */
function listFiles(root: string): { files: string[] } | { reason: string } {
  const files: string[] = [];
  const walk = (rel: string): string | null => {
    for (const name of readdirSync(path.join(root, rel)).sort()) {
      const r = rel ? `${rel}/${name}` : name;
      const st = lstatSync(path.join(root, r));
      if (st.isDirectory()) {
        if (SKIPPED_DIRS.has(name)) continue;
        const bad = walk(r);
        if (bad) return bad;
      } else if (st.isFile()) {
        files.push(r);
        if (files.length > MAX_ACCEPTANCE_FILES) return `it holds more than ${MAX_ACCEPTANCE_FILES} files`;
      } else return `${r} is ${st.isSymbolicLink() ? 'a symbolic link' : 'not a regular file'}; copy the file itself into the folder`;
    }
    return null;
  };
  const bad = walk('');
  return bad ? { reason: bad } : { files };
}

/** Why a file does not parse, or null (Python and JavaScript; other files are not checked). */
export function parseProblem(abs: string, rel: string): string | null {
  let r;
  if (/\.py$/.test(rel)) {
    // compile() in memory: the syntax check of `python3 -m py_compile`, without writing bytecode.
    r = spawnSync('python3', ['-c', 'import sys\nsrc = open(sys.argv[1], "rb").read()\ncompile(src, sys.argv[2], "exec")', abs, rel], {
      encoding: 'utf8',
      timeout: PARSE_TIMEOUT_MS,
    });
  } else if (/\.[cm]?js$/.test(rel)) {
    r = spawnSync(process.execPath, ['--check', abs], { encoding: 'utf8', timeout: PARSE_TIMEOUT_MS });
  } else return null;
  if (r.error) return `${rel} could not be checked (${r.error.message})`;
  if (r.status === 0) return null;
  const lines = `${r.stderr ?? ''}`
    .split('\n')
    .map((l) => l.trim())
    .filter(Boolean);
  const why = lines.find((l) => /Error\b/.test(l)) ?? lines.at(-1) ?? `exit ${r.status}`;
  return `${rel} does not parse: ${why.replaceAll(abs, rel).slice(0, 300)}`;
}

/**
 * The acceptance folder `dir` checked, with each file's digest; `repoPath`, when given, is the
 * repository the run works in (the folder must not be in it, nor hold it: the agents see the
 * repository).
 */
export function inspectAcceptanceDir(dir: string, repoPath: string | null): AcceptanceInspection {
  const fail = (reason: string): AcceptanceInspection => ({ ok: false, reason: `acceptance tests ${dir}: ${reason}` });
  let st;
  try {
    st = lstatSync(dir);
  } catch {
    return fail('no such folder');
  }
  if (!st.isDirectory()) return fail(st.isSymbolicLink() ? 'is a symbolic link; name the folder itself' : 'is not a folder');
  const root = realOrSelf(dir);
  if (repoPath !== null) {
    const repo = realOrSelf(repoPath);
    if (within(root, repo)) return fail(`lies inside the repository ${repoPath}, where the agents would read it; keep it outside`);
    if (within(repo, root)) return fail(`holds the repository ${repoPath}; name a folder of the acceptance tests alone`);
  }
  const listed = listFiles(root);
  if ('reason' in listed) return fail(listed.reason);
  const tests = listed.files.filter(isTestFile);
  if (tests.length === 0)
    return fail('holds no test file (test_*.py, *_test.py, *.test.js, *.spec.ts, test-*.mjs, *_test.go, ...); write at least one');
  const files: AcceptanceFile[] = [];
  let total = 0;
  for (const rel of listed.files) {
    const abs = path.join(root, rel);
    const bytes = readFileSync(abs);
    if (bytes.length > MAX_FILE_BYTES) return fail(`${rel} is larger than ${MAX_FILE_BYTES} bytes`);
    total += bytes.length;
    if (total > MAX_TOTAL_BYTES) return fail(`its files are larger than ${MAX_TOTAL_BYTES} bytes together`);
    const problem = parseProblem(abs, rel);
    if (problem) return fail(problem);
    files.push({ path: rel, sha256: sha256(bytes) });
  }
  return { ok: true, files, tests: tests.length };
}

/** The sha256 of a file's bytes, or null when it cannot be read as a regular file. */
export function fileDigest(abs: string): string | null {
  try {
    if (!lstatSync(abs).isFile()) return null;
    return sha256(readFileSync(abs));
  } catch {
    return null;
  }
}
