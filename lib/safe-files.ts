/**
 * File access for everything Vigil keeps inside a repository it does not trust (`.vigil/`) and
 * under `VIGIL_HOME`: folders and files are private (0700/0600), symbolic links are never followed
 * (a link committed under `.vigil/` must not make Vigil read or write a file outside it), and a
 * write that fails (disk full, quota, I/O error) is reported, never thrown from an event.
 */
import {
  closeSync,
  constants,
  createWriteStream,
  fstatSync,
  lstatSync,
  mkdirSync,
  openSync,
  readSync,
  renameSync,
  rmSync,
  writeSync,
  type WriteStream,
} from 'node:fs';
import path from 'node:path';

export const DIR_MODE = 0o700;
export const FILE_MODE = 0o600;

/** Thrown when a path Vigil owns is a symbolic link or not the kind of file expected. */
export class UnsafePathError extends Error {
  constructor(
    readonly file: string,
    what: string,
  ) {
    super(`${file} ${what}; Vigil does not follow links or replace foreign files under its own folders. Remove it and try again.`);
    this.name = 'UnsafePathError';
  }
}

/** Errors that mean "the disk (or quota) cannot take more", as opposed to a bug. */
const STORAGE_CODES = new Set(['ENOSPC', 'EDQUOT', 'EFBIG', 'EIO', 'EROFS']);

export function isStorageError(err: unknown): boolean {
  return typeof err === 'object' && err !== null && STORAGE_CODES.has((err as { code?: string }).code ?? '');
}

/** A one-line description of a failed write, with the hint a person needs. */
export function describeWriteError(what: string, err: unknown): string {
  const code = (err as { code?: string } | null)?.code;
  const msg = err instanceof Error ? err.message : String(err);
  const full = code === 'ENOSPC' || code === 'EDQUOT';
  return full ? `disk full: ${what}: ${msg} (the disk or quota is full: free space, the run carries on)` : `${what}: ${msg}`;
}

/**
 * Creates `dir` (and its parents below `root`) as private folders, refusing any component from
 * `root` down that is a symbolic link or not a folder. `root` itself (the repository) is trusted.
 */
export function ensurePrivateDir(root: string, dir: string): string {
  const rel = path.relative(root, dir);
  if (rel.startsWith('..') || path.isAbsolute(rel)) throw new Error(`${dir} is not inside ${root}`);
  let cur = root;
  for (const part of rel.split(path.sep).filter(Boolean)) {
    cur = path.join(cur, part);
    let st;
    try {
      st = lstatSync(cur);
    } catch {
      try {
        mkdirSync(cur, { mode: DIR_MODE });
      } catch (err) {
        if ((err as { code?: string }).code !== 'EEXIST') throw err;
      }
      st = lstatSync(cur);
    }
    if (st.isSymbolicLink()) throw new UnsafePathError(cur, 'is a symbolic link');
    if (!st.isDirectory()) throw new UnsafePathError(cur, 'is not a folder');
  }
  return dir;
}

const NOFOLLOW = constants.O_NOFOLLOW;

/** Writes a whole private file without following a link at its path (replaces a regular file). */
export function writePrivateFile(file: string, data: string | Uint8Array): void {
  rmLink(file);
  const fd = openSync(file, constants.O_WRONLY | constants.O_CREAT | constants.O_TRUNC | NOFOLLOW, FILE_MODE);
  try {
    const buf = typeof data === 'string' ? Buffer.from(data) : data;
    let off = 0;
    while (off < buf.length) off += writeSync(fd, buf, off, buf.length - off);
  } finally {
    closeSync(fd);
  }
}

/** Removes `file` if it is a symbolic link (a planted link is never written through). */
function rmLink(file: string): void {
  try {
    if (lstatSync(file).isSymbolicLink()) rmSync(file, { force: true });
  } catch {
    /* absent */
  }
}

export type ReadResult = { ok: true; text: string; bytes: number } | { ok: false; problem: string } | null;

/**
 * Reads at most `maxBytes` of a regular file without following a link. Null when the file does not
 * exist; a problem (link, not a file, unreadable) otherwise. The caller decides what that means.
 */
export function readRegularFile(file: string, maxBytes: number): ReadResult {
  let fd: number;
  try {
    fd = openSync(file, constants.O_RDONLY | NOFOLLOW | constants.O_NONBLOCK);
  } catch (err) {
    const code = (err as { code?: string }).code;
    if (code === 'ENOENT') return null;
    if (code === 'ELOOP') return { ok: false, problem: `${path.basename(file)} is a symbolic link; ignored` };
    return { ok: false, problem: `${path.basename(file)}: ${(err as Error).message}` };
  }
  try {
    const st = fstatSync(fd);
    if (!st.isFile()) return { ok: false, problem: `${path.basename(file)} is not a regular file; ignored` };
    const buf = Buffer.alloc(Math.min(st.size, maxBytes));
    let off = 0;
    while (off < buf.length) {
      const n = readSync(fd, buf, off, buf.length - off, off);
      if (n === 0) break;
      off += n;
    }
    return { ok: true, text: buf.subarray(0, off).toString('utf8'), bytes: st.size };
  } finally {
    closeSync(fd);
  }
}

/**
 * Moves a file an agent wrote into Vigil's own folder, so it is consumed exactly once. A link is
 * removed instead of moved (and reported), so its target is never read. `beforeMove` runs only
 * when there is a file to move (it makes the folder `keepAs` goes into).
 */
export function consumeFile(file: string, keepAs: string, beforeMove?: () => void): 'moved' | 'link-removed' | 'absent' {
  let st;
  try {
    st = lstatSync(file);
  } catch {
    return 'absent';
  }
  if (st.isSymbolicLink() || !st.isFile()) {
    rmSync(file, { force: true, recursive: !st.isSymbolicLink() });
    return 'link-removed';
  }
  beforeMove?.();
  renameSync(file, keepAs);
  return 'moved';
}

/** The line a capped log ends its output with once it reaches `maxBytes` (LogSink, and the supervisor's synchronous log). */
export const logTruncatedNotice = (maxBytes: number): string =>
  `\n=== vigil: log truncated at ${maxBytes} bytes; later output is dropped (the tail is kept in memory) ===\n`;

/**
 * An append-only log that never throws: a failed write (disk full, quota, I/O error) is recorded
 * in `error` and later writes are dropped; output beyond `maxBytes` is dropped with one notice.
 * The file is opened without following a link and created private.
 */
export class LogSink {
  private stream: WriteStream | null = null;
  private written = 0;
  error: string | null = null;
  truncated = false;

  constructor(
    readonly file: string,
    private readonly maxBytes: number,
  ) {
    try {
      rmLink(file);
      const fd = openSync(file, constants.O_WRONLY | constants.O_APPEND | constants.O_CREAT | NOFOLLOW, FILE_MODE);
      this.stream = createWriteStream('', { fd });
      this.stream.on('error', (err) => this.fail(err));
    } catch (err) {
      this.fail(err);
    }
  }

  private fail(err: unknown): void {
    this.error ??= describeWriteError(`cannot write ${this.file}`, err);
    const s = this.stream;
    this.stream = null;
    if (s) {
      // Keep an error listener: a pending write may still report, and must not crash the process.
      s.on('error', () => {});
      s.destroy();
    }
  }

  write(chunk: string | Uint8Array): void {
    if (!this.stream) return;
    const len = typeof chunk === 'string' ? Buffer.byteLength(chunk) : chunk.length;
    if (this.written + len > this.maxBytes) {
      if (!this.truncated) {
        this.truncated = true;
        this.stream.write(logTruncatedNotice(this.maxBytes));
      }
      return;
    }
    this.written += len;
    this.stream.write(chunk);
  }

  /** Writes `footer` (always, even past the cap) and closes; resolves once the file is closed. */
  end(footer: string): Promise<void> {
    const s = this.stream;
    if (!s) return Promise.resolve();
    return new Promise((resolve) => {
      const done = (): void => resolve();
      s.once('close', done);
      s.once('error', done);
      s.end(footer);
    });
  }
}
