/**
 * The secret-scan gate and the evidence gate's credential check share one scanner: changed files
 * (regular files only — a link's target is outside the change — text, at most 1 MiB each, 500
 * files) through `scanSecrets`, which ignores placeholders and environment references. Findings
 * name the kind and the line, never the value.
 */
import { existsSync, lstatSync, openSync, readFileSync, readSync, closeSync } from 'node:fs';
import path from 'node:path';
import type { GateResultInput } from '../../schemas/gates.js';
import { MAX_FINDINGS } from '../../schemas/gates.js';
import { scanSecrets } from '../../workflows/decisions/scans.js';

const MAX_SCANNED_FILES = 500;
const MAX_SCANNED_BYTES = 1024 * 1024;

export interface SecretHit {
  file: string;
  line: number;
  kind: string;
}

function looksBinary(file: string): boolean {
  const fd = openSync(file, 'r');
  try {
    const buf = Buffer.alloc(8192);
    const n = readSync(fd, buf, 0, buf.length, 0);
    return buf.subarray(0, n).includes(0);
  } finally {
    closeSync(fd);
  }
}

/** Credentials in the given repository-relative files, at most `max` hits. */
export function scanFilesForSecrets(repoPath: string, files: readonly string[], max = 20): SecretHit[] {
  const hits: SecretHit[] = [];
  for (const rel of files.slice(0, MAX_SCANNED_FILES)) {
    const file = path.join(repoPath, rel);
    if (!existsSync(file)) continue; // deleted
    const st = lstatSync(file);
    if (!st.isFile() || st.size > MAX_SCANNED_BYTES || looksBinary(file)) continue;
    for (const f of scanSecrets(readFileSync(file, 'utf8'), 5)) {
      hits.push({ file: rel, line: f.line, kind: f.kind });
      if (hits.length >= max) return hits;
    }
  }
  return hits;
}

/** The gate: any credential in a changed file fails it. */
export function secretScanGate(opts: { repoPath: string; files: readonly string[] }): GateResultInput {
  const hits = scanFilesForSecrets(opts.repoPath, opts.files, 100);
  const first = hits[0];
  return {
    gate: 'secret_scan',
    verdict: first ? 'fail' : 'pass',
    reason: first
      ? `${hits.length} possible credential${hits.length === 1 ? '' : 's'} in changed files, first: ${first.kind} in ${first.file}:${first.line}`
      : `no credentials in ${Math.min(opts.files.length, MAX_SCANNED_FILES)} changed file(s)`,
    findings: hits.slice(0, MAX_FINDINGS).map((h) => ({ gate: 'secret_scan' as const, severity: 'high' as const, file: h.file, line: h.line, message: `${h.kind}: move it to the environment or a secret store, and rotate it` })),
    findingCount: hits.length,
  };
}
