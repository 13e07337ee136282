/**
 * The `readRunLog` activity: one bounded chunk of an iteration's agent log
 * (`<repo>/.vigil/runs/<run>/iteration-NNNN.log`), read on the host that holds the repository, for
 * `vigil logs` on any machine; and `readRunHandoff`: a run's handoff document
 * (`<repo>/.vigil/handoffs/*.md`) for `vigil handoff`. Both run as standalone activities the CLI
 * starts on the host's queue (no workflow: see cli/host-read.ts). Read-only: they create nothing,
 * follow no link, and what leaves the host is whole lines with credentials redacted, as the
 * heartbeat's last line is.
 */
import { closeSync, constants, fstatSync, lstatSync, openSync, readSync } from 'node:fs';
import path from 'node:path';
import { Context } from '@temporalio/activity';
import {
  HANDOFF_MAX,
  ReadRunHandoffInputSchema,
  ReadRunLogInputSchema,
  type ReadRunHandoffInput,
  type ReadRunLogInput,
  type ReadRunLogResult,
} from '../schemas/logs.js';
import { VIGIL_DIR } from '../schemas/paths.js';
import { redactSecrets } from '../rules/scans.js';
import { pad, runDir } from './artifacts.js';

/** How often a following read looks at the log again while it waits for it to grow. */
const WAIT_STEP_MS = 250;

export function iterationLogPath(repoPath: string, runId: string, iteration: number): string {
  return path.join(runDir(repoPath, runId), `iteration-${pad(iteration)}.log`);
}

export async function readRunLog(raw: ReadRunLogInput): Promise<ReadRunLogResult> {
  const input = ReadRunLogInputSchema.parse(raw);
  const file = iterationLogPath(input.repoPath, input.runId, input.iteration);
  const ctx = Context.current();
  const deadline = Date.now() + input.waitMs;
  for (;;) {
    const r = readLogChunk(input.repoPath, file, input.offset, input.maxBytes, input.partial);
    if (r.problem || r.text !== '' || Date.now() >= deadline) return r;
    ctx.heartbeat();
    // Cancellation-aware: a cancelled read stops waiting at once.
    await ctx.sleep(Math.min(WAIT_STEP_MS, Math.max(deadline - Date.now(), 1)));
  }
}

/**
 * A run's handoff document, whole (up to HANDOFF_MAX), credentials redacted. Only a Markdown file
 * directly in `<repo>/.vigil/handoffs/` is read: the path comes from the run's status, and a path
 * anywhere else is refused rather than read.
 */
export function readRunHandoff(raw: ReadRunHandoffInput): ReadRunLogResult {
  const input = ReadRunHandoffInputSchema.parse(raw);
  const folder = path.join(path.resolve(input.repoPath), VIGIL_DIR, 'handoffs');
  const file = path.resolve(input.path);
  if (path.dirname(file) !== folder || !file.endsWith('.md')) {
    return {
      found: false,
      problem: `${input.path} is not a handoff document under ${folder}`,
      path: input.path,
      text: '',
      offset: 0,
      nextOffset: 0,
      size: 0,
      redactions: 0,
    };
  }
  return readLogChunk(input.repoPath, file, 0, HANDOFF_MAX, true);
}

/** Why a folder on the way to the log cannot be used: a link, or not a folder; null when fine or absent. */
function unsafeFolder(repoPath: string, file: string): { problem: string | null; absent: boolean } {
  const root = path.resolve(repoPath);
  let st;
  try {
    st = lstatSync(root);
  } catch {
    return { problem: `the repository ${root} does not exist on this host`, absent: true };
  }
  if (!st.isDirectory()) return { problem: `${root} is not a folder`, absent: true };
  let cur = root;
  for (const part of path.relative(root, path.dirname(file)).split(path.sep).filter(Boolean)) {
    cur = path.join(cur, part);
    try {
      st = lstatSync(cur);
    } catch {
      return { problem: null, absent: true };
    }
    if (st.isSymbolicLink()) return { problem: `${cur} is a symbolic link; Vigil does not follow links under .vigil/`, absent: true };
    if (!st.isDirectory()) return { problem: `${cur} is not a folder`, absent: true };
  }
  return { problem: null, absent: false };
}

/**
 * Where to cut `buf` (the bytes from the offset up to the end of the file, or `full`: up to the
 * chunk's bound): after its last whole line, so a credential is never split between two chunks
 * (redaction works on whole lines). A last line without its newline is held back unless `partial`
 * (the file is complete) — or the chunk is full and has no newline at all: a line longer than the
 * chunk is cut after its last blank (credentials hold none), else on a character boundary.
 */
export function cutPoint(buf: Buffer, full: boolean, partial: boolean): number {
  if (!full && partial) return buf.length;
  const nl = buf.lastIndexOf(0x0a);
  if (nl >= 0) return nl + 1;
  if (!full) return 0;
  const blank = Math.max(buf.lastIndexOf(0x20), buf.lastIndexOf(0x09));
  if (blank >= 0) return blank + 1;
  // Cut before the last character when its bytes are not all there.
  let lead = buf.length - 1;
  while (lead > 0 && buf.length - lead < 4 && ((buf[lead] ?? 0) & 0xc0) === 0x80) lead -= 1;
  const b = buf[lead] ?? 0;
  const size = b >= 0xf0 ? 4 : b >= 0xe0 ? 3 : b >= 0xc0 ? 2 : 1;
  return lead + size > buf.length && lead > 0 ? lead : buf.length;
}

/** One chunk of `file` from `offset`, at most `maxBytes`, read without following a link. */
export function readLogChunk(repoPath: string, file: string, offset: number, maxBytes: number, partial = true): ReadRunLogResult {
  const empty: ReadRunLogResult = { found: false, problem: null, path: file, text: '', offset, nextOffset: offset, size: 0, redactions: 0 };
  const folders = unsafeFolder(repoPath, file);
  if (folders.absent) return { ...empty, problem: folders.problem };
  let fd: number;
  try {
    fd = openSync(file, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
  } catch (err) {
    const code = (err as { code?: string }).code;
    if (code === 'ENOENT') return empty;
    if (code === 'ELOOP') return { ...empty, problem: `${file} is a symbolic link; ignored` };
    return { ...empty, problem: `${file}: ${(err as Error).message}` };
  }
  try {
    const st = fstatSync(fd);
    if (!st.isFile()) return { ...empty, problem: `${file} is not a regular file` };
    // A log shorter than the offset was replaced (a fresh run with the same id): start over.
    const from = offset > st.size ? 0 : offset;
    const want = Math.min(maxBytes, st.size - from);
    const buf = Buffer.alloc(want);
    let got = 0;
    while (got < want) {
      const n = readSync(fd, buf, got, want - got, from + got);
      if (n === 0) break;
      got += n;
    }
    const data = buf.subarray(0, got);
    const end = got === 0 ? 0 : cutPoint(data, got === maxBytes, partial);
    const { text, redactions } = redactSecrets(data.subarray(0, end).toString('utf8'));
    return { found: true, problem: null, path: file, text, offset: from, nextOffset: from + end, size: st.size, redactions };
  } finally {
    closeSync(fd);
  }
}
