/**
 * `vigil_task_complete`'s claim (cli/mcp-claim.ts) against real files: the run, iteration and
 * repository come from the variables Vigil sets for an agent call, the claim is the run's own
 * `.vigil/signals/COMPLETION_REQUESTED`, and anything but the builder's call of a run is refused.
 */
import { lstatSync, mkdirSync, mkdtempSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { claimTarget, writeClaim } from '../../cli/mcp-claim.js';
import { TaskCompleteClaimSchema } from '../../schemas/mcp.js';
import { runDirPath } from '../../schemas/paths.js';

function agentEnv(repo: string, runId = 'vigil-prd-1', iteration = 3, role = 'iteration'): NodeJS.ProcessEnv {
  const prompt = path.join(runDirPath(repo, runId), `iteration-${String(iteration).padStart(4, '0')}.prompt.md`);
  mkdirSync(path.dirname(prompt), { recursive: true });
  writeFileSync(prompt, 'the prompt\n');
  return { VIGIL_RUN_ID: runId, VIGIL_ROLE: role, VIGIL_ITERATION: String(iteration), VIGIL_PROMPT_FILE: prompt };
}

const repoDir = (): string => mkdtempSync(path.join(os.tmpdir(), 'vigil-claim-'));
const claim = { summary: 'slugify is done', evidence: ['node --test: 3 passed', 'README documents it'], confidence: 0.9 };

describe('vigil_task_complete', () => {
  it("writes the run's claim file in the repository the prompt file is under, with the evidence", () => {
    const repo = repoDir();
    const target = claimTarget(agentEnv(repo, 'run:with/odd id', 3));
    expect(target).toEqual({ runId: 'run:with/odd id', iteration: 3, repoPath: repo });
    const out = writeClaim(target, claim, new Date('2026-01-02T03:04:05Z'));
    const file = path.join(repo, '.vigil', 'signals', 'COMPLETION_REQUESTED');
    expect(out).toMatchObject({ claimed: true, runId: 'run:with/odd id', iteration: 3, path: file, replaced: false });
    const body = TaskCompleteClaimSchema.parse(JSON.parse(readFileSync(file, 'utf8')));
    expect(body).toEqual({
      by: 'vigil_task_complete',
      runId: 'run:with/odd id',
      role: 'iteration',
      iteration: 3,
      at: '2026-01-02T03:04:05.000Z',
      ...claim,
    });
    expect(lstatSync(file).mode & 0o777).toBe(0o600);
    // A second claim in the same call replaces the first.
    expect(writeClaim(target, { ...claim, confidence: 1 }).replaced).toBe(true);
    expect(TaskCompleteClaimSchema.parse(JSON.parse(readFileSync(file, 'utf8'))).confidence).toBe(1);
  });

  it('refuses outside a run, outside the builder, and where the prompt file does not name the run', () => {
    expect(() => claimTarget({})).toThrow(/VIGIL_RUN_ID is not set/);
    const repo = repoDir();
    expect(() => claimTarget(agentEnv(repo, 'r1', 2, 'council'))).toThrow(
      /for the builder \(VIGIL_ROLE=iteration\); this agent call is the run's "council"/,
    );
    expect(() => claimTarget({ ...agentEnv(repo, 'r1', 2), VIGIL_ITERATION: 'x' })).toThrow(/VIGIL_ITERATION is "x"/);
    expect(() => claimTarget({ ...agentEnv(repo, 'r1', 2), VIGIL_ITERATION: '3' })).toThrow(/is not the prompt of iteration 3 of run "r1"/);
    expect(() => claimTarget({ ...agentEnv(repo, 'r1', 2), VIGIL_RUN_ID: 'r2' })).toThrow(/is not the prompt of iteration 2 of run "r2"/);
    expect(() => claimTarget({ ...agentEnv(repo, 'r1', 2), VIGIL_PROMPT_FILE: 'relative.md' })).toThrow(/cannot be told from it/);
  });

  it('never writes through a link planted as .vigil/signals', () => {
    const repo = repoDir();
    const env = agentEnv(repo, 'r1', 4);
    const elsewhere = repoDir();
    symlinkSync(elsewhere, path.join(repo, '.vigil', 'signals'));
    expect(() => writeClaim(claimTarget(env), claim)).toThrow(/cannot write the claim of run "r1"/);
    expect(() => lstatSync(path.join(elsewhere, 'COMPLETION_REQUESTED'))).toThrow();
  });
});
