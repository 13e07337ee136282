/**
 * The admissions of signed runs in the event store's Postgres (activities/run-authorization.ts):
 * the record every worker of a deployment shares, so a signature admits one run whichever worker
 * checks it, and two workers admitting at once admit one.
 */
import { createHash } from 'node:crypto';
import { mkdtempSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { admissionStore } from '../../activities/admission-record.js';
import { authorizeCall, checkAdmission } from '../../activities/run-authorization.js';
import { runSecret, signRun, startClaims } from '../../lib/run-signing.js';
import { defaultKnobs } from '../../schemas/knobs.js';
import { useStorePostgres } from '../support/store-postgres.js';

const tp = useStorePostgres();

describe('admissions in the event store', () => {
  it('one signature admits one run across workers, and the record is what every call checks', async () => {
    const url = await tp.freshDatabase('admissions');
    const dir = mkdtempSync(path.join(os.tmpdir(), 'vigil-admit-'));
    const secretFile = path.join(dir, 'run-secret');
    // Two workers on different machines: their own VIGIL_HOME, one store, one installation secret.
    const workerA = {
      VIGIL_REQUIRE_SIGNED_RUNS: '1',
      VIGIL_RUN_SECRET_FILE: secretFile,
      VIGIL_HOME: path.join(dir, 'a'),
      VIGIL_DATABASE_URL: url,
    };
    const workerB = { ...workerA, VIGIL_HOME: path.join(dir, 'b') };
    expect(admissionStore(workerA)).toEqual({ kind: 'postgres', url });
    const secret = runSecret(workerA, true) as Buffer;
    const prdPath = path.join(dir, 'PRD.md');
    writeFileSync(prdPath, '# Build the thing\n');
    const knobs = defaultKnobs();
    const auth = signRun(secret, {
      workflowId: 'run-1',
      repoPath: '/r',
      provider: 'command',
      agentCommand: ['my-agent'],
      councilProvider: 'command',
      testCommand: 'npm test',
      ...startClaims({ prdPath, prdSha256: createHash('sha256').update('# Build the thing\n').digest('hex'), knobs, scheduled: false }),
    });
    const input = (first: string) => ({
      runId: 'run-1',
      repoPath: '/r',
      prdPath,
      knobs,
      authorization: { ...auth, firstExecutionRunId: first },
    });
    // Two executions with the same signature admitted at once by two workers: exactly one is.
    const verdicts = await Promise.all([checkAdmission(input('first-A'), workerA), checkAdmission(input('first-B'), workerB)]);
    const admitted = verdicts.filter((v) => v.refused === null);
    expect(admitted).toHaveLength(1);
    const winner = verdicts[0]?.refused === null ? 'first-A' : 'first-B';
    const loser = winner === 'first-A' ? 'first-B' : 'first-A';
    expect(verdicts.find((v) => v.refused !== null)?.refused).toMatch(
      new RegExp(`already used to start another run \\(first execution ${winner}\\)`),
    );
    // Either worker runs the winner's calls, and neither the loser's.
    const call = { runId: 'run-1', repoPath: '/r', kind: { agent: { provider: 'command', argv: ['my-agent'] } } };
    for (const w of [workerA, workerB]) {
      await expect(authorizeCall(call, { ...auth, firstExecutionRunId: winner }, w)).resolves.toBeUndefined();
      await expect(authorizeCall(call, { ...auth, firstExecutionRunId: loser }, w)).rejects.toThrow(/already used to start another run/);
    }
    const rows = await (
      await import('../../lib/event-store.js')
    )
      .poolFor(url)
      .query('select workflow_id, first_run_id from vigil_run_admissions');
    expect(rows.rows).toEqual([{ workflow_id: 'run-1', first_run_id: winner }]);
  });

  it('a store that cannot be reached is waited for (a retryable failure), never skipped', async () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'vigil-admit-'));
    const env = {
      VIGIL_REQUIRE_SIGNED_RUNS: '1',
      VIGIL_RUN_SECRET_FILE: path.join(dir, 'run-secret'),
      VIGIL_HOME: dir,
      VIGIL_DATABASE_URL: 'postgres://vigil@127.0.0.1:1/none',
    };
    const secret = runSecret(env, true) as Buffer;
    const prdPath = path.join(dir, 'PRD.md');
    writeFileSync(prdPath, 'x\n');
    const knobs = defaultKnobs();
    const auth = signRun(secret, {
      workflowId: 'run-1',
      repoPath: '/r',
      provider: 'command',
      agentCommand: ['a'],
      councilProvider: 'command',
      testCommand: '',
      ...startClaims({ prdPath, prdSha256: null, knobs, scheduled: false }),
    });
    const err = await checkAdmission(
      { runId: 'run-1', repoPath: '/r', prdPath, knobs, authorization: { ...auth, firstExecutionRunId: 'f' } },
      env,
    ).catch((e: unknown) => e as Error & { nonRetryable?: boolean; type?: string });
    expect(err).toBeInstanceOf(Error);
    expect(err).toMatchObject({
      type: 'AdmissionStoreUnavailable',
      nonRetryable: false,
      message: expect.stringMatching(/the record of admitted runs \(the event store at 127\.0\.0\.1:1\/none\) cannot be reached/),
    });
  });
});
