/**
 * `LAST_ERROR.json` in the run's folder (rules/last-error.ts): written after an iteration's call
 * failed, consumed by the next iteration's call, which archives it in `failure-history.jsonl`
 * (the last 50) and, unless the run turned `selfHeal` off, puts its hint at the head of the
 * prompt's findings. The run's folder lies in the repository, where the agent writes: the hint
 * is read from Vigil's private copy (outside it), and a file the agent planted is only removed.
 * Best effort: a file that cannot be written or read never fails a call.
 */
import { rmSync } from 'node:fs';
import path from 'node:path';
import type { AgentResult, RunAgentInput } from '../schemas/activities.js';
import { classifyFailure, FAILURE_HISTORY_KEPT, parseLastError, selfHealHint, type LastError } from '../rules/last-error.js';
import { readRegularFile, writePrivateFile } from '../lib/safe-files.js';
import { ensurePrivateRunDir, ensureRunDir, runDir } from './artifacts.js';
import { privateRunDir } from '../lib/paths.js';

export const LAST_ERROR_FILE = 'LAST_ERROR.json';
export const FAILURE_HISTORY_FILE = 'failure-history.jsonl';
/** Vigil's own copy, outside the repository. */
const PRIVATE_COPY = 'last-error.json';

const remove = (file: string): void => {
  try {
    rmSync(file, { force: true });
  } catch {
    /* removed next time */
  }
};

/** Removes the run's LAST_ERROR.json and returns Vigil's record of it (archived); null when there is none. */
export function consumeLastError(repoPath: string, runId: string): LastError | null {
  const dir = runDir(repoPath, runId);
  remove(path.join(dir, LAST_ERROR_FILE));
  const own = path.join(privateRunDir(runId), PRIVATE_COPY);
  const read = readRegularFile(own, 16 * 1024);
  if (read === null) return null;
  remove(own);
  const record = read.ok ? parseLastError(read.text) : null;
  if (record === null) return null;
  try {
    const history = path.join(dir, FAILURE_HISTORY_FILE);
    const kept = readRegularFile(history, 1024 * 1024);
    const lines = kept?.ok ? kept.text.split('\n').filter(Boolean) : [];
    lines.push(JSON.stringify(record));
    writePrivateFile(history, `${lines.slice(-FAILURE_HISTORY_KEPT).join('\n')}\n`);
  } catch {
    /* the archive is a convenience for people */
  }
  return record;
}

/**
 * An iteration's input with the last failure's hint at the head of its findings (consumed here,
 * whatever the knob says, so a stale record never reaches a later prompt).
 */
export function withSelfHeal(input: RunAgentInput): RunAgentInput {
  if (input.role !== 'iteration' || !input.promptInput) return input;
  const record = consumeLastError(input.repoPath, input.runId);
  if (record === null || input.selfHeal === false) return input;
  const p = input.promptInput;
  const hint = selfHealHint(record);
  return { ...input, promptInput: { ...p, findings: p.findings ? `${hint}\n\n${p.findings}` : hint } };
}

/** After an iteration's call: a failed one leaves LAST_ERROR.json for the next. */
export function keepLastError(input: RunAgentInput, result: AgentResult, emptyCall: boolean): void {
  if (input.role !== 'iteration' || (result.exitCode === 0 && !result.timedOut)) return;
  const { errorClass, brief } = classifyFailure({
    exitCode: result.exitCode,
    timedOut: result.timedOut,
    emptyCall,
    rateLimited: result.rateLimit !== null,
    authError: result.authError !== null,
    ioError: result.ioError !== null,
    tail: result.tail,
  });
  const record: LastError = { iteration: input.iteration, error_class: errorClass, brief, timestamp: new Date().toISOString() };
  const text = `${JSON.stringify(record, null, 2)}\n`;
  try {
    writePrivateFile(path.join(ensurePrivateRunDir(input.runId), PRIVATE_COPY), text);
    writePrivateFile(path.join(ensureRunDir(input.repoPath, input.runId), LAST_ERROR_FILE), text);
  } catch {
    /* the next prompt's findings still say the call failed */
  }
}
