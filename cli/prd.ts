/**
 * Reads and checks a PRD file before a run starts: it must be a readable regular file of UTF-8
 * text, not empty, at most 1 MiB. Its first Markdown heading (or first line) becomes the title
 * shown in the Temporal UI.
 */
import { createHash } from 'node:crypto';
import { readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import type { ChecklistItem } from '../schemas/gates.js';
import { parseChecklistFile, parseIssueChecklist } from '../rules/checklist/file.js';
import type { TaskList } from '../schemas/tasks.js';
import { parseTasksFile } from '../rules/tasks.js';
import { prdTitle } from '../rules/discovery.js';
import { discoveredPrdPath } from '../schemas/paths.js';

export const MAX_PRD_BYTES = 1024 * 1024;

export class PrdError extends Error {
  override name = 'PrdError';
}

export interface Prd {
  path: string;
  title: string;
  bytes: number;
  /** sha256 (hex) of the PRD's bytes as read here (the run's signature binds it); null: a PRD on another host, not read here. */
  sha256?: string | null;
}

export function readPrd(file: string, cwd = process.cwd()): Prd {
  return readPrdText(file, cwd, 'PRD').prd;
}

/** The PRD's checks, each error naming the file as `what` (the PRD, an issue). */
function readPrdText(file: string, cwd: string, what: string): { prd: Prd; text: string } {
  const abs = path.resolve(cwd, file);
  let st;
  try {
    st = statSync(abs);
  } catch {
    throw new PrdError(`${what} file not found: ${abs}`);
  }
  if (!st.isFile()) throw new PrdError(`${what} path is not a regular file: ${abs}`);
  if (st.size > MAX_PRD_BYTES)
    throw new PrdError(`${what} file is too large: ${st.size} bytes (at most ${MAX_PRD_BYTES}); trim it or split it`);
  const buf = readFileSync(abs);
  let text: string;
  try {
    text = new TextDecoder('utf-8', { fatal: true }).decode(buf);
  } catch {
    throw new PrdError(`${what} file is not UTF-8 text: ${abs}`);
  }
  if (text.includes('\0')) throw new PrdError(`${what} file looks binary (contains NUL bytes): ${abs}`);
  if (text.trim().length === 0) throw new PrdError(`${what} file is empty: ${abs}; write the requirements first`);
  const prd = {
    path: abs,
    title: prdTitle(text) || path.basename(abs),
    bytes: buf.length,
    sha256: createHash('sha256').update(buf).digest('hex'),
  };
  return { prd, text };
}

/** An issue as a run's PRD (`vigil start --issue FILE`), with the checklist its task list gives. */
export interface Issue {
  prd: Prd;
  /** Its task-list lines as checklist items; null: the issue has no task list (the checklist is extracted from it). */
  checklist: ChecklistItem[] | null;
}

/**
 * Reads an issue's text (Markdown, as GitHub, GitLab or Jira keep it: its title as the first
 * heading or line) as the run's PRD, checked as a PRD is, and its task list (`- [ ] …`) as the
 * PRD checklist (parseIssueChecklist). A bad task line is an error naming the file and the line.
 */
export function readIssue(file: string, cwd = process.cwd()): Issue {
  const { prd, text } = readPrdText(file, cwd, 'issue');
  const r = parseIssueChecklist(text, prd.path);
  if (r !== null && !r.ok) throw new PrdError(r.error);
  return { prd, checklist: r === null ? null : r.items };
}

/**
 * The PRD of a run started from a goal (`vigil start --goal`): not written yet. The discovery call
 * writes it in the run folder (`.vigil/runs/<run>/PRD.md`) as the run starts; titled by the goal.
 */
export function goalPrd(goal: string, repoPath: string, runId: string): Prd {
  return { path: discoveredPrdPath(repoPath, runId), title: goalTitle(goal), bytes: 0, sha256: null };
}

/** The goal's first line, at most 200 characters: the run's title until its PRD has one. */
export function goalTitle(goal: string): string {
  const first = goal.trim().split(/\r?\n/)[0]?.trim() ?? '';
  return first.length > 200 ? `${first.slice(0, 199)}…` : first;
}

/** A PRD on another host (`vigil start --host`): its absolute path there, titled by its file name. */
export function prdOnHost(abs: string): Prd {
  return { path: abs, title: path.basename(abs).replace(/\.[^.]*$/, '') || path.basename(abs), bytes: 0, sha256: null };
}

/** A PRD's title: its first Markdown heading, else its first line (rules/discovery.ts, which the discovery call's PRD shares). */
export { prdTitle } from '../rules/discovery.js';

/** Largest checklist file read (the checklist itself is capped at 60 items). */
export const MAX_CHECKLIST_BYTES = 256 * 1024;

/**
 * Reads a checklist a person supplied (`vigil start --checklist FILE`): JSON (an array, or
 * `{ "items": [...] }`) or Markdown (`- [ ] REQ-1 (critical): title — how to verify`). Every
 * problem is reported with the file and, where there is one, the line.
 */
export function readChecklist(file: string, cwd = process.cwd()): ChecklistItem[] {
  const abs = path.resolve(cwd, file);
  let st;
  try {
    st = statSync(abs);
  } catch {
    throw new PrdError(`checklist file not found: ${abs}`);
  }
  if (!st.isFile()) throw new PrdError(`checklist path is not a regular file: ${abs}`);
  if (st.size > MAX_CHECKLIST_BYTES) throw new PrdError(`checklist file is too large: ${st.size} bytes (at most ${MAX_CHECKLIST_BYTES})`);
  let text: string;
  try {
    text = new TextDecoder('utf-8', { fatal: true }).decode(readFileSync(abs));
  } catch {
    throw new PrdError(`checklist file is not UTF-8 text: ${abs}`);
  }
  const r = parseChecklistFile(text, abs);
  if (!r.ok) throw new PrdError(r.error);
  return r.items;
}

/**
 * Reads a task list a person supplied (`vigil start --tasks FILE`): JSON or Markdown (see
 * parseTasksFile in rules/tasks.ts), at most 256 KiB of UTF-8 text. Every problem
 * names the file.
 */
export function readTasks(file: string, cwd = process.cwd()): TaskList {
  const abs = path.resolve(cwd, file);
  let st;
  try {
    st = statSync(abs);
  } catch {
    throw new PrdError(`tasks file not found: ${abs}`);
  }
  if (!st.isFile()) throw new PrdError(`tasks path is not a regular file: ${abs}`);
  if (st.size > MAX_CHECKLIST_BYTES) throw new PrdError(`tasks file is too large: ${st.size} bytes (at most ${MAX_CHECKLIST_BYTES})`);
  let text: string;
  try {
    text = new TextDecoder('utf-8', { fatal: true }).decode(readFileSync(abs));
  } catch {
    throw new PrdError(`tasks file is not UTF-8 text: ${abs}`);
  }
  const r = parseTasksFile(text, abs);
  if (!r.ok) throw new PrdError(r.error);
  return r.tasks;
}

/**
 * The acceptance folder of `vigil start --acceptance DIR` (knob acceptanceTests), checked before
 * the run starts: its absolute path, or a PrdError (exit 2) saying why it cannot be used — missing,
 * inside the repository, no test file, a file that does not parse.
 */
export async function checkAcceptanceFolder(dir: string, repoPath: string): Promise<string> {
  const { inspectAcceptanceDir } = await import('../lib/acceptance-files.js');
  const abs = path.resolve(dir);
  const seen = inspectAcceptanceDir(abs, repoPath);
  if (!seen.ok) throw new PrdError(`${seen.reason} (vigil start --acceptance DIR: a folder of test files outside the repository)`);
  return abs;
}
