/**
 * The cluster suite's temporary files go under one folder (TMPDIR, set before the test process
 * starts, so it and the server, workers and agents it starts inherit it), removed at the end, as
 * the main suite's global setup does.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';

let suiteTmp: string | undefined;

export function setup(): void {
  suiteTmp = mkdtempSync(path.join(os.tmpdir(), 'vigil-cluster-'));
  process.env.TMPDIR = suiteTmp;
}

export function teardown(): void {
  if (suiteTmp) rmSync(suiteTmp, { recursive: true, force: true, maxRetries: 3 });
}
