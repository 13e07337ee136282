/**
 * `vigil try`'s own rules, without a server: the knobs it runs with (those `vigil start` would use,
 * the scripted agent in, its own three values only where the person set nothing), what its end
 * says (approved; the repository refused it; the scripted agent itself failed, which must not be
 * blamed on the repository; a pause it stopped), and the scratch worktree it prepares with real
 * git, with the check that the person's checkout is as it was — which must catch a changed index,
 * branch or working tree. The whole command runs in tests/e2e/try.test.ts.
 */
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { resolveKnobs } from '../../cli/config.js';
import { outcomeLines, TRY_OWN_DEFAULTS, tryKnobs, type TryEnd } from '../../cli/try.js';
import { checkoutChanges, discardTry, planTry, prepareTry, readCheckout, rehearsalScenario, tryRunId } from '../../cli/try-setup.js';
import { defaultKnobs } from '../../schemas/knobs.js';
import type { IterationRecord } from '../../schemas/run.js';
import { parseScenario } from '../../schemas/scenario.js';
import { git, makeRepo, ROOT } from '../support/harness.js';

const resolved = (sets: string[] = [], env: Record<string, string> = {}, flags: Record<string, string> = {}) =>
  resolveKnobs({ flags, sets, env, cwd: mkdtempSync(path.join(os.tmpdir(), 'vigil-try-cwd-')) });

describe('tryKnobs', () => {
  it('takes the defaults, puts the scripted agent in, and shortens only the cap and the backoff', () => {
    const k = tryKnobs(resolved(), '.vigil/try/scenario.json', ROOT);
    expect(k.own).toEqual(['maxIterations=8', 'baseWaitSeconds=2', 'backoffJitterSeconds=0']);
    expect(k.replaced).toEqual([]);
    expect(k.knobs).toEqual({
      ...defaultKnobs(),
      ...TRY_OWN_DEFAULTS,
      provider: 'command',
      agentCommand: [path.join(ROOT, 'examples/agents/scripted-agent/scripted-agent'), '--scenario', '.vigil/try/scenario.json'],
      deliverToCurrent: false,
    });
  });

  it('keeps what the person set, says which agent and delivery it does not use, and drops its own value for a knob they set', () => {
    const k = tryKnobs(
      resolved(
        ['maxIterations=5', 'gateDocCoverage=false'],
        { VIGIL_PROVIDER: 'claude', VIGIL_AGENT_COMMAND: 'my-agent --fast' },
        { deliverToCurrent: 'true' },
      ),
      's.json',
      ROOT,
    );
    expect(k.own).toEqual(['baseWaitSeconds=2', 'backoffJitterSeconds=0']);
    expect(k.knobs).toMatchObject({ maxIterations: 5, gateDocCoverage: false, provider: 'command', deliverToCurrent: false });
    expect(k.replaced).toEqual([
      'provider claude (VIGIL_PROVIDER)',
      'agentCommand "my-agent --fast" (VIGIL_AGENT_COMMAND)',
      'deliverToCurrent (--deliver-to-current): it delivers on vigil/<run id>',
    ]);
  });
});

const iteration = (n: number, exitCode: number): IterationRecord =>
  ({ iteration: n, exitCode, logPath: `/repo/.vigil/runs/r/iteration-000${n}.log` }) as IterationRecord;

function end(over: Partial<TryEnd['snapshot'] & object>, pause: string | null = null): TryEnd {
  return {
    snapshot: { iteration: 5, outcome: null, recentIterations: [iteration(1, 0), iteration(2, 0)], ...over },
    temporalStatus: 'COMPLETED',
    pause,
  };
}

describe('outcomeLines', () => {
  it('says an approved rehearsal passed everything, and nothing about a refusal', () => {
    const lines = outcomeLines(end({ iteration: 3, outcome: { status: 'council_approved', reason: 'ok', exitCode: 0 } }));
    expect(lines).toEqual([
      'The rehearsal was approved after 3 iteration(s): every gate, the review, the checklist and the council passed.',
    ]);
  });

  it('puts a refusal on the repository and the knobs when the scripted agent did its part', () => {
    const lines = outcomeLines(
      end({ outcome: { status: 'max_iterations_reached', reason: 'iteration cap reached: 5 of 5', exitCode: 20 } }),
    );
    expect(lines[0]).toBe(
      'The rehearsal ended without approval after 5 iteration(s): max_iterations_reached — iteration cap reached: 5 of 5',
    );
    expect(lines.join('\n')).toContain('The scripted agent did its part; what refused it is your repository');
    expect(lines.join('\n')).toContain('`vigil try --set key=value`');
  });

  it("never blames the repository when the scripted agent's own call failed, and names its log", () => {
    const failed = end({
      outcome: { status: 'failed', reason: '3 failed iterations in a row', exitCode: 1 },
      recentIterations: [iteration(1, 0), iteration(2, 2), iteration(3, 2)],
    });
    const text = outcomeLines(failed).join('\n');
    expect(text).not.toContain('did its part');
    expect(text).not.toContain('your repository with these knobs');
    expect(text).toContain("The scripted agent's own call failed at iteration 2 (exit 2), which no repository should cause");
    expect(text).toContain('its log says why: /repo/.vigil/runs/r/iteration-0002.log');
  });

  it('says why a run paused and that vigil try ended it', () => {
    const lines = outcomeLines(
      end({ iteration: 4, outcome: { status: 'stopped', reason: 'stopped', exitCode: 0 } }, 'paused by tester: looking'),
    );
    expect(lines[0]).toBe('The run paused for a person at iteration 4: paused by tester: looking');
    expect(lines[1]).toContain('vigil try ended it, since a rehearsal waits for nobody');
  });

  it('says how the workflow ended when the run has no outcome', () => {
    expect(outcomeLines({ snapshot: null, temporalStatus: 'TERMINATED', pause: null })[0]).toBe(
      'The rehearsal ended without approval after 0 iteration(s): workflow terminated',
    );
  });
});

describe('the scratch worktree and the person’s checkout', () => {
  it('prepares a worktree at HEAD with the PRD and the scenario, leaves the checkout as it was, and removes it', () => {
    const repo = makeRepo({ files: { 'src/a.js': 'export const a = 1;\n' } });
    writeFileSync(path.join(repo, 'wip.txt'), 'not committed\n');
    const before = readCheckout(path.join(repo, 'src'));
    expect(before).toMatchObject({ top: repo, branch: 'main', changes: 1 });
    const home = mkdtempSync(path.join(os.tmpdir(), 'vigil-try-home-'));
    const plan = prepareTry(planTry(home, before), before, ROOT, null);

    expect(plan.readmeAdded).toBe(true);
    expect(plan.worktree).toBe(path.join(home, 'try', plan.runId, 'repo'));
    expect(git(plan.worktree, 'rev-parse', 'HEAD')).toBe(before.head);
    expect(readFileSync(path.join(plan.worktree, 'src/a.js'), 'utf8')).toBe('export const a = 1;\n');
    expect(readFileSync(plan.prdFile, 'utf8')).toContain('A SAMPLE PRD, written by `vigil try`.** You gave no PRD of your own.');
    // In the worktree, where the sandbox shows it; filled in and valid; the README the repository lacks written at iteration 2.
    expect(plan.scenarioFile).toBe(path.join(plan.worktree, '.vigil', 'try', 'scenario.json'));
    const scenario = parseScenario(JSON.parse(readFileSync(plan.scenarioFile, 'utf8')));
    expect(scenario.iterations[0]?.writes?.['VIGIL_TRY.md']).toContain(`It lives on the branch \`vigil/${plan.runId}\` only`);
    expect(scenario.iterations[1]?.writes?.['README.md']).toContain('written by the scripted agent of `vigil try`');
    // The scenario is not part of the worktree's tree: nothing to commit.
    expect(git(plan.worktree, 'status', '--porcelain', '--untracked-files=all', '--', '.', ':!.vigil')).toBe('');

    expect(checkoutChanges(before, readCheckout(repo))).toEqual([]);
    discardTry(plan, before);
    expect(git(repo, 'worktree', 'list', '--porcelain')).not.toContain(plan.worktree);
    expect(checkoutChanges(before, readCheckout(repo))).toEqual([]);
  });

  it('catches a changed index, working tree, HEAD or branch', () => {
    const repo = makeRepo();
    const before = readCheckout(repo);
    writeFileSync(path.join(repo, 'new.txt'), 'x\n');
    expect(checkoutChanges(before, readCheckout(repo))).toEqual(['the working tree changed (git status differs)']);
    git(repo, 'add', 'new.txt');
    expect(checkoutChanges(before, readCheckout(repo))).toEqual(['the index changed', 'the working tree changed (git status differs)']);
    git(repo, 'commit', '-q', '-m', 'more');
    git(repo, 'checkout', '-q', '-b', 'other');
    const changed = checkoutChanges(before, readCheckout(repo));
    expect(changed[0]).toBe('the current branch is other, was main');
    expect(changed[1]).toMatch(/^HEAD is [0-9a-f]{12}, was [0-9a-f]{12}$/);
  });

  it('fills in paths that JSON must escape, and names runs after the folder', () => {
    const template = readFileSync(path.join(ROOT, 'examples/try/scenario.json'), 'utf8');
    const worktree = '/tmp/a "quoted"\\folder/repo';
    const text = rehearsalScenario(template, { branch: 'vigil/x', worktree, head: 'abcdef0123456789' }, null);
    const scenario = parseScenario(JSON.parse(text));
    expect(scenario.iterations[0]?.writes?.['VIGIL_TRY.md']).toContain(`\`${worktree}\`, checked out at your HEAD (abcdef012345)`);
    expect(Object.keys(scenario.iterations[1]?.writes ?? {})).toEqual([]);
    expect(tryRunId('/src/My App!', new Date('2026-01-02T03:04:05.678Z'))).toBe('vigil-try-my-app-20260102-030405');
    expect(tryRunId('/src/###', new Date('2026-01-02T03:04:05Z'))).toBe('vigil-try-repo-20260102-030405');
  });
});
