/**
 * The notification triggers (rules/notify-triggers.ts), the original tool's `notification-checker`
 * rows: budget-80pct (rules/budget.ts, tested in budget.test.ts), context-90pct, sensitive-file,
 * quality-gate-fail (first failure), stuck-iteration (3 without change) and compaction-freq, each
 * once per occasion.
 */
import { describe, expect, it } from 'vitest';
import { GateResultSchema, type GateTrack } from '../../schemas/gates.js';
import { freshTrack, trackGate } from '../../rules/gates.js';
import {
  compactionsNotice,
  contextNotice,
  gateFailedNotice,
  isSensitivePath,
  sensitiveFileNotice,
  sensitivePaths,
  STUCK_ITERATIONS,
  stuckNotice,
} from '../../rules/notify-triggers.js';
import { NotifyEventSchema } from '../../schemas/notify.js';
import { defaultKnobs } from '../../schemas/knobs.js';

const fail = (reason = 'tsc: 2 errors') =>
  GateResultSchema.parse({ gate: 'static_analysis', verdict: 'fail', reason, findingCount: 2, treeHash: 't1', iteration: 4 });

describe('seed row quality-gate-fail: a gate failed, on its first failure', () => {
  const k = defaultKnobs();
  it('fires on the first failure of a streak, and not on the second or third', () => {
    let track: GateTrack | undefined;
    const fired: boolean[] = [];
    for (let i = 0; i < 3; i++) {
      const next = trackGate(track, fail(), k).track;
      fired.push(gateFailedNotice('run-1', i + 1, track, next, fail(), 'static analysis') !== null);
      track = next;
    }
    expect(fired).toEqual([true, false, false]);
  });

  it('fires again on the first failure after a pass', () => {
    const failed = trackGate(undefined, fail(), k).track;
    const passed = freshTrack('t2');
    const again = trackGate(passed, fail(), k).track;
    expect(gateFailedNotice('run-1', 5, passed, again, fail(), 'static analysis')).not.toBeNull();
    expect(failed.consecutiveFailures).toBe(1);
  });

  it('says which gate, why, and is keyed by run, gate and iteration', () => {
    const n = gateFailedNotice('run-1', 4, undefined, trackGate(undefined, fail(), k).track, fail(), 'static analysis');
    expect(n).toMatchObject({
      event: 'gate_failed',
      severity: 'warning',
      dedupeKey: 'run-1:gate_failed:static_analysis:4',
      details: { gate: 'static_analysis', findings: 2, iteration: 4 },
    });
    expect(n?.message).toContain('tsc: 2 errors');
    expect(NotifyEventSchema.safeParse(n?.event).success).toBe(true);
  });

  it('an inconclusive result or a gate turned off is no failure to tell', () => {
    const inconclusive = GateResultSchema.parse({ ...fail(), verdict: 'inconclusive' });
    expect(gateFailedNotice('r', 1, undefined, trackGate(undefined, inconclusive, k).track, inconclusive, 'x')).toBeNull();
    const off = { ...k, gateStaticAnalysis: false };
    expect(gateFailedNotice('r', 1, undefined, trackGate(undefined, fail(), off).track, fail(), 'x')).toBeNull();
  });

  it('stays quiet when the streak escalates at its first failure (the escalation tells people)', () => {
    const early = { ...k, gateEscalateAfter: 1 };
    const t = trackGate(undefined, fail(), early);
    expect(t.action).toBe('escalate');
    expect(gateFailedNotice('r', 1, undefined, t.track, fail(), 'x')).toBeNull();
  });
});

describe('seed row stuck-iteration: 3 iterations without a change of the tree', () => {
  it('fires once per streak, when the count reaches 3', () => {
    const fired = [0, 1, 2, 3, 4, 5, 0, 1, 2, 3].map((n, i) => stuckNotice('run-1', i + 1, n) !== null);
    expect(fired).toEqual([false, false, false, true, false, false, false, false, false, true]);
    expect(STUCK_ITERATIONS).toBe(3);
  });

  it('names the way out and is keyed by iteration', () => {
    const n = stuckNotice('run-1', 7, 3);
    expect(n).toMatchObject({ event: 'stuck', dedupeKey: 'run-1:stuck:7', severity: 'warning' });
    expect(n?.message).toContain('vigil input run-1');
  });
});

describe('seed row sensitive-file: a file that holds secrets changed', () => {
  it.each([
    '.env',
    'config/.env.production',
    'deploy/server.pem',
    'certs/tls.key',
    'home/.ssh/id_ed25519',
    'k8s/SECRETS.yaml',
    'config/client_secret.json',
    '.aws/credentials',
    '.npmrc',
    'keys/store.p12',
  ])('%s is sensitive', (p) => expect(isSensitivePath(p)).toBe(true));

  it.each([
    'src/environment.ts',
    '.env.example',
    'config/.env.sample',
    'docs/keyboard.md',
    'src/keys.ts',
    'secrets.template.yaml',
    'src/monkey.js',
    'README.md',
  ])('%s is not (an honest change)', (p) => expect(isSensitivePath(p)).toBe(false));

  it('an agent hiding a key among ordinary files is still seen, under any folder and case', () => {
    const paths = [...Array.from({ length: 40 }, (_, i) => `src/mod${i}.ts`), 'a/b/c/Prod.PEM', 'src/z.ts'];
    const n = sensitiveFileNotice('run-1', 3, paths);
    expect(n).toMatchObject({ event: 'sensitive_file', severity: 'critical', dedupeKey: 'run-1:sensitive_file:3' });
    expect(n?.details).toEqual({ paths: ['a/b/c/Prod.PEM'], iteration: 3 });
  });

  it('nothing sensitive: no notice; many: the first 20 named, the title counts the rest', () => {
    expect(sensitiveFileNotice('r', 1, ['src/a.ts', '.env.example'])).toBeNull();
    const many = Array.from({ length: 30 }, (_, i) => `k/${i}.key`);
    expect(sensitivePaths(many)).toHaveLength(20);
    expect(sensitiveFileNotice('r', 1, many)?.title).toBe('Sensitive file changed: k/0.key and 19 more');
  });
});

describe('seed row context-90pct: the context window 90 % full', () => {
  it('fires at 90 % and above, never without the facts (dormant where no call reports them)', () => {
    expect(contextNotice('r', 2, 180_000, 200_000)?.title).toBe("The agent's context is 90% full");
    expect(contextNotice('r', 2, 179_999, 200_000)).toBeNull();
    expect(contextNotice('r', 2, null, 200_000)).toBeNull();
    expect(contextNotice('r', 2, 190_000, null)).toBeNull();
    expect(contextNotice('r', 2, 190_000, 0)).toBeNull();
  });
});

describe('seed row compaction-freq: 3 compactions within an hour', () => {
  const h = 3_600_000;
  it('fires when the third within the hour comes, once', () => {
    expect(compactionsNotice('r', 1, [0, 10, 20], 30)?.event).toBe('compactions');
    expect(compactionsNotice('r', 1, [0, 10], 30)).toBeNull();
    expect(compactionsNotice('r', 1, [0, 10, 20, 25], 30)).toBeNull();
    expect(compactionsNotice('r', 1, [0, 10, h + 5], h + 6)).toBeNull();
    expect(compactionsNotice('r', 1, null, 30)).toBeNull();
    // One call that compacted twice takes the count from 2 to 4: it crossed the line, so it fires; the next does not.
    expect(compactionsNotice('r', 2, [0, 10, 20, 20], 30, 2)?.details).toEqual({ compactions: 4, iteration: 2 });
    expect(compactionsNotice('r', 3, [0, 10, 20, 20, 25], 30, 1)).toBeNull();
  });
});
