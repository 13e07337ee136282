/**
 * What `vigil memory import FILE` reads and accepts (cli/memory.ts): a regular file of at most
 * MAX_MEMORY_FILE_BYTES (never a device, a pipe or a folder, which could be read forever), holding
 * a memory file as `vigil memory export` writes it (schemas/lasting-memory.ts MemoryExportSchema)
 * with values the event store can take: times as ISO 8601 date-times, counts within Postgres'
 * integer, text without NUL characters or unpaired surrogates. A file that fails is refused
 * before anything is written, with the fields that are wrong.
 */
import { closeSync, constants, fstatSync, openSync, readSync } from 'node:fs';
import { z } from 'zod';
import { MemoryExportSchema, type MemoryExport } from '../schemas/lasting-memory.js';
import { CliError, EXIT } from './errors.js';

/** The largest memory file read (a repository's memory is far smaller; `vigil memory export --repo` splits an installation's). */
export const MAX_MEMORY_FILE_BYTES = 128 * 1024 * 1024;

/** Postgres' `integer`, the type of the iteration and evidence columns. */
const PG_INT_MAX = 2_147_483_647;
const ISO_TIME = z.iso.datetime({ offset: true });
const UNPAIRED_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

type Path = (string | number)[];

/** Every string in `value` that Postgres refuses (NUL, an unpaired surrogate), with its path. */
function badStrings(value: unknown, at: Path, found: { path: Path; why: string }[]): void {
  if (found.length >= 20) return;
  if (typeof value === 'string') {
    if (value.includes('\u0000')) found.push({ path: at, why: 'contains a NUL character, which the event store cannot keep' });
    else if (UNPAIRED_SURROGATE.test(value)) found.push({ path: at, why: 'contains an unpaired UTF-16 surrogate (not valid text)' });
  } else if (Array.isArray(value)) value.forEach((v, i) => badStrings(v, [...at, i], found));
  else if (value && typeof value === 'object') for (const [k, v] of Object.entries(value)) badStrings(v, [...at, k], found);
}

/** A memory file the event store can take (MemoryExportSchema, and the store's own limits). */
export const MemoryImportSchema = MemoryExportSchema.superRefine((data, ctx) => {
  const time = (v: string | null, path: Path): void => {
    if (v !== null && v !== '' && !ISO_TIME.safeParse(v).success)
      ctx.addIssue({ code: 'custom', path, message: `"${v.slice(0, 40)}" is not an ISO 8601 date-time (e.g. 2026-01-31T12:00:00.000Z)` });
  };
  const count = (v: number, path: Path): void => {
    if (v > PG_INT_MAX) ctx.addIssue({ code: 'custom', path, message: `${v} is too large (at most ${PG_INT_MAX})` });
  };
  time(data.exportedAt, ['exportedAt']);
  data.episodes.forEach((e, i) => {
    time(e.at, ['episodes', i, 'at']);
    count(e.iteration, ['episodes', i, 'iteration']);
  });
  data.patterns.forEach((p, i) => {
    time(p.firstSeen, ['patterns', i, 'firstSeen']);
    time(p.lastSeen, ['patterns', i, 'lastSeen']);
    count(p.evidence, ['patterns', i, 'evidence']);
    count(p.runs, ['patterns', i, 'runs']);
  });
  data.skills.forEach((s, i) => count(s.evidence, ['skills', i, 'evidence']));
  const strings: { path: Path; why: string }[] = [];
  badStrings(data, [], strings);
  for (const s of strings) ctx.addIssue({ code: 'custom', path: s.path, message: s.why });
});

/** `episodes[3].at`, `vigilMemory`, `(the file)`. */
export function fieldName(path: readonly PropertyKey[]): string {
  let out = '';
  for (const p of path) out += typeof p === 'number' ? `[${p}]` : `${out ? '.' : ''}${String(p)}`;
  return out || '(the file)';
}

/** The refusal of a file whose fields are wrong: the first few, each with what is wrong. */
export function describeIssues(file: string, issues: readonly z.core.$ZodIssue[]): string {
  const shown = issues.slice(0, 8).map((i) => `  ${fieldName(i.path)}: ${i.message}`);
  const more = issues.length > shown.length ? [`  … and ${issues.length - shown.length} more`] : [];
  return [
    `${file} is not a memory file the event store can take (vigil memory export writes one); nothing was imported:`,
    ...shown,
    ...more,
  ].join('\n');
}

/** The file's text: a regular file only, at most MAX_MEMORY_FILE_BYTES. Every refusal is exit 2 and says why. */
export function readMemoryFile(file: string, max = MAX_MEMORY_FILE_BYTES): string {
  let fd: number;
  try {
    // Non-blocking: opening a FIFO must not wait for a writer.
    fd = openSync(file, constants.O_RDONLY | constants.O_NONBLOCK);
  } catch (err) {
    throw new CliError(`cannot read the memory file ${file}: ${err instanceof Error ? err.message : String(err)}`, EXIT.usage);
  }
  try {
    const st = fstatSync(fd);
    if (!st.isFile())
      throw new CliError(
        `${file} is not a regular file (a folder, a device or a pipe): give the file \`vigil memory export\` wrote`,
        EXIT.usage,
      );
    if (st.size > max)
      throw new CliError(
        `${file} is ${st.size} bytes, more than a memory file's ${max}: export one repository at a time (vigil memory export --repo DIR)`,
        EXIT.usage,
      );
    const buf = Buffer.alloc(st.size);
    let off = 0;
    while (off < buf.length) {
      const n = readSync(fd, buf, off, buf.length - off, off);
      if (n === 0) break;
      off += n;
    }
    return buf.subarray(0, off).toString('utf8');
  } finally {
    closeSync(fd);
  }
}

/** The memory in `file`, checked; a CliError (exit 2) saying what is wrong otherwise. */
export function loadMemoryFile(file: string): MemoryExport {
  const text = readMemoryFile(file);
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch (err) {
    throw new CliError(
      `${file} is not JSON (${err instanceof Error ? err.message.slice(0, 200) : String(err)}): give the file \`vigil memory export\` wrote`,
      EXIT.usage,
    );
  }
  const parsed = MemoryImportSchema.safeParse(raw);
  if (!parsed.success) throw new CliError(describeIssues(file, parsed.error.issues), EXIT.usage);
  return parsed.data;
}
