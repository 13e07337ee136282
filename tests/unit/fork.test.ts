/**
 * Attempts from a stuck point (onStuck=fork, rules/fork.ts): whether a stuck run forks, from which
 * checkpoint, what each fork runs with, which fork continues the run (a fork that claimed done and
 * was refused never does), and what the run says of it. The forkWith grammar's refusals are in
 * tests/unit/knobs.test.ts; the forks on a real server in tests/workflow/fork.test.ts.
 */
import { describe, expect, it } from 'vitest';
import { parseForkWith } from '../../schemas/knobs-fork.js';
import { defaultKnobs } from '../../schemas/knobs.js';
import {
  forkConfigs,
  forkDirective,
  forkOutcomeReason,
  forkPoint,
  forkStatusLines,
  forksWhenStuck,
  forkVerdict,
  type ForkPoint,
} from '../../rules/fork.js';

const cp = (iteration: number, tests: 'pass' | 'fail' | 'inconclusive' | null) => ({
  iteration,
  commit: `c${iteration}`,
  tree: `t${iteration}`,
  tests,
});
const START = { sha: 'head', treeHash: 't0' };

describe('forksWhenStuck', () => {
  it('forks only with onStuck=fork, never from a fork, and once per run', () => {
    expect(forksWhenStuck({ onStuck: 'fork' }, { isFork: false, forkedAlready: false })).toBe(true);
    expect(forksWhenStuck({ onStuck: 'stop' }, { isFork: false, forkedAlready: false })).toBe(false);
    // An older run's knobs, read without the schema's default: no knob, no fork.
    expect(forksWhenStuck({}, { isFork: false, forkedAlready: false })).toBe(false);
    expect(forksWhenStuck({ onStuck: 'fork' }, { isFork: true, forkedAlready: false })).toBe(false);
    expect(forksWhenStuck({ onStuck: 'fork' }, { isFork: false, forkedAlready: true })).toBe(false);
  });

  it('is off by default', () => {
    expect(defaultKnobs().onStuck).toBe('stop');
    expect(forksWhenStuck(defaultKnobs(), { isFork: false, forkedAlready: false })).toBe(false);
  });
});

describe('forkPoint', () => {
  it('is the latest checkpoint whose tests passed, even when later ones did not fail', () => {
    const p = forkPoint([cp(1, 'pass'), cp(2, 'pass'), cp(3, 'fail'), cp(4, null)], START);
    expect(p).toMatchObject({ iteration: 2, commit: 'c2', tree: 't2', why: 'the latest checkpoint whose tests passed' });
  });

  it('without a passing one, the latest whose tests did not fail', () => {
    expect(forkPoint([cp(1, null), cp(2, 'inconclusive'), cp(3, 'fail')], START)).toMatchObject({ iteration: 2, tree: 't2' });
  });

  it('falls back to the run start when every checkpoint fails its tests, or none was kept', () => {
    expect(forkPoint([cp(1, 'fail'), cp(2, 'fail')], START)).toEqual({
      iteration: 0,
      commit: 'head',
      tree: 't0',
      why: 'the run start: every checkpoint kept fails its tests',
    });
    expect(forkPoint([], START)?.why).toBe('the run start: the run kept no checkpoint');
    expect(forkPoint([], null)).toBeNull();
  });
});

describe('forkConfigs', () => {
  const knobs = { ...defaultKnobs(), provider: 'claude' as const, model: 'sonnet', tier: 'development' as const };

  it('by default: forkAttempts forks at the planning tier, on the run’s agent and model', () => {
    expect(forkConfigs(knobs)).toEqual([
      { n: 1, provider: 'claude', model: 'sonnet', tier: 'planning' },
      { n: 2, provider: 'claude', model: 'sonnet', tier: 'planning' },
    ]);
  });

  it('cycles the entries; what an entry leaves out is the run’s; another agent without a model takes its own', () => {
    const c = forkConfigs({ ...knobs, forkAttempts: 4, forkWith: 'model:opus, agent:codex, agent:codex+model:gpt-5+tier:fast' });
    expect(c).toEqual([
      { n: 1, provider: 'claude', model: 'opus', tier: 'development' },
      { n: 2, provider: 'codex', model: '', tier: 'development' },
      { n: 3, provider: 'codex', model: 'gpt-5', tier: 'fast' },
      { n: 4, provider: 'claude', model: 'opus', tier: 'development' },
    ]);
  });

  it('empty forkWith: every fork as the run', () => {
    expect(forkConfigs({ ...knobs, forkAttempts: 1, forkWith: '' })).toEqual([
      { n: 1, provider: 'claude', model: 'sonnet', tier: 'development' },
    ]);
  });
});

describe('parseForkWith', () => {
  it('says which entry is wrong', () => {
    expect(parseForkWith('model:a,agent:gpt')).toEqual({ ok: false, error: expect.stringContaining('agent "gpt" is not one of') });
    expect(parseForkWith('opus')).toEqual({ ok: false, error: expect.stringContaining('"opus" in "opus" is not agent:') });
    expect(parseForkWith(' , ')).toEqual({ ok: true, variations: [] });
  });
});

describe('forkVerdict', () => {
  it('the first fork to end approved continues the run, whatever the others are doing', () => {
    expect(forkVerdict([{ n: 2, status: 'council_approved' }], 3)).toEqual({ kind: 'won', n: 2 });
    expect(
      forkVerdict(
        [
          { n: 3, status: 'force_stopped' },
          { n: 1, status: 'completion_promise_fulfilled' },
          { n: 2, status: 'council_approved' },
        ],
        3,
      ),
    ).toEqual({ kind: 'won', n: 1 });
  });

  it('adversarial: a fork that claimed done and was refused (force_stopped, failed, stopped) never continues the run', () => {
    const refused = [
      { n: 1, status: 'force_stopped' },
      { n: 2, status: 'max_iterations_reached' },
    ];
    expect(forkVerdict(refused, 3)).toEqual({ kind: 'wait' });
    expect(forkVerdict([...refused, { n: 3, status: 'stopped' }], 3)).toEqual({ kind: 'none' });
    expect(forkVerdict([{ n: 1, status: 'failed' }], 1)).toEqual({ kind: 'none' });
  });
});

describe('what the run says', () => {
  const from: ForkPoint = { iteration: 3, commit: 'c3', tree: 't3', why: 'the latest checkpoint whose tests passed' };
  const attempts = [
    { n: 1, provider: 'command', model: 'weak', tier: 'planning' as const, status: 'force_stopped', iterations: 10, reason: 'stuck' },
    { n: 2, provider: 'command', model: 'strong', tier: 'planning' as const, status: 'council_approved', iterations: 2, reason: 'ok' },
  ];

  it('the winner, from which checkpoint', () => {
    expect(forkOutcomeReason({ stuck: 'no change for 10', stuckAt: 10, from, winner: 2 }, attempts)).toBe(
      'stuck at iteration 10 (no change for 10); forked 2 attempt(s) from the checkpoint of iteration 3: fork 2 (command strong, ' +
        "tier planning) council_approved after 2 iteration(s) continued the run, its tree delivered as the run's",
    );
  });

  it('none approved: every fork and how it ended', () => {
    const r = forkOutcomeReason({ stuck: 'x', stuckAt: 10, from: { iteration: 0 }, winner: null }, [attempts[0] as (typeof attempts)[0]]);
    expect(r).toBe(
      'stuck at iteration 10 (x); forked 1 attempt(s) from the run start; none was approved: ' +
        'fork 1 (command weak, tier planning) force_stopped after 10 iteration(s)',
    );
  });

  it('status: where it forked from, and each fork with the winner marked', () => {
    const rows = attempts.map((a) => ({ ...a, workflowId: `r1-attempt-${a.n}` }));
    expect(forkStatusLines({ stuckAt: 10, from, phase: 'ended', winner: 2 }, rows)).toEqual([
      'stuck at iteration 10: forked 2 attempt(s) from the checkpoint of iteration 3; fork 2 continued the run',
      'fork 1 (command weak, tier planning) force_stopped after 10 iteration(s): vigil status r1-attempt-1',
      'fork 2 (command strong, tier planning) council_approved after 2 iteration(s) (winner): vigil status r1-attempt-2',
    ]);
    expect(forkStatusLines({ stuckAt: 4, from: { iteration: 0 }, phase: 'running', winner: null }, [])).toEqual([
      'stuck at iteration 4: forked 0 attempt(s) from the run start; running',
    ]);
  });

  it('the fork’s first prompt names the run, the stuck point and what refused it', () => {
    const d = forkDirective({ parentId: 'r1', n: 2, k: 3, from, stuck: 'no change for 10 iterations', findings: 'the tests fail' });
    expect(d).toContain('You are fork 2 of 3 of run r1, which got stuck: no change for 10 iterations.');
    expect(d).toContain('the checkpoint of iteration 3 of that run (the latest checkpoint whose tests passed)');
    expect(d).toContain('What refused its last completion check:\nthe tests fail');
  });
});
