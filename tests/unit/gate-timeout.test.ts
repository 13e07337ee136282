/**
 * A gate that does not finish in its time (activities/gates/index.ts). A person's command run on
 * the change — here the e2e journey — that an agent made hang fails the gate, as the check says of
 * its own command: left undecided it would never block completion, and a hanging journey would be
 * approved with every reviewing role approving. The honest control's journey finishes and passes.
 * Real git, the default sandbox, the activity in Temporal's mock activity environment.
 */
import { DefaultLogger } from '@temporalio/worker';
import { MockActivityEnvironment } from '@temporalio/testing';
import { describe, expect, it } from 'vitest';
import { runGate } from '../../activities/gates/index.js';
import type { GateResult } from '../../schemas/gates.js';
import { makeRepo } from '../support/harness.js';
import { patient } from '../support/patience.js';

const gate = (e2eCommand: string, timeoutSeconds: number): Promise<GateResult> =>
  new MockActivityEnvironment({}, { logger: new DefaultLogger('ERROR') }).run(runGate, {
    runId: `gate-timeout-${Math.random().toString(36).slice(2, 8)}`,
    repoPath: makeRepo({ files: { 'journey.sh': 'echo ok\n' } }),
    gate: 'e2e' as const,
    iteration: 1,
    sinceTree: null,
    timeoutSeconds,
    e2eCommand,
  });

describe('an e2e journey that does not finish in the gate time', () => {
  it(
    'fails the gate (a hanging journey is not a passing one)',
    async () => {
      const r = await gate('sleep 600', 2);
      expect(r.verdict).toBe('fail');
      expect(r.reason).toMatch(/did not finish within 2s/);
    },
    patient(60_000),
  );

  it(
    'the honest control: a journey that finishes passes',
    async () => {
      const r = await gate('sh journey.sh', patient(60));
      expect(r.verdict, r.reason).toBe('pass');
    },
    patient(60_000),
  );
});
