/**
 * The pure half of the worker's Vigil metrics: what a call's input and result say
 * (workers/call-facts.ts), what the run gauges make of the open runs' status answers
 * (workers/run-gauges.ts), the series VigilMetrics exposes after observations, the activity
 * observer on the wire forms of each activity (compact results included), the readiness of a
 * process without workers, and that the alert rules and the Grafana dashboard in deploy/ name only
 * series the worker serves. The endpoint itself, during a real run: tests/e2e/metrics.test.ts.
 */
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Histogram } from 'prom-client';
import { describe, expect, it } from 'vitest';
import { agentCallFacts, AgentInputWire, AgentResultWire, callOutcome, gatePassFacts, GatesPassWire } from '../../workers/call-facts.js';
import {
  activityObserver,
  callSpanAttributes,
  type ObservationSink,
  type SpanAttributes,
  type SpanHooks,
} from '../../workers/activity-observer.js';
import { VigilMetrics } from '../../workers/metrics.js';
import { WorkerReadiness } from '../../workers/metrics-server.js';
import { summarizeRuns, type OpenRun } from '../../workers/run-gauges.js';
import { blankAgentResult } from '../../schemas/activities.js';
import { compactAgentResult } from '../../activities/iteration.js';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const loadYaml = (createRequire(import.meta.url)('js-yaml') as { load(text: string): unknown }).load;

const input = { runId: 'run-1', role: 'iteration', iteration: 3, provider: 'claude', tier: 'fast' } as const;

describe('call facts', () => {
  it('read an iteration from its input and a compact result', () => {
    const result = compactAgentResult(
      blankAgentResult({
        exitCode: 0,
        attempt: 2,
        durationMs: 4200,
        provider: 'claude',
        model: 'opus',
        usage: { costUsd: 0.42, inputTokens: 10, outputTokens: 5, cacheReadTokens: 1, cacheWriteTokens: 0, model: 'opus' },
      }),
    );
    const r = AgentResultWire.parse(result);
    const facts = agentCallFacts(AgentInputWire.parse(input), r, 9999, 'run-1');
    expect(facts).toEqual({
      runId: 'run-1',
      workflowId: 'run-1',
      iteration: 3,
      round: null,
      role: 'iteration',
      tier: 'fast',
      provider: 'claude',
      model: 'opus',
      exitCode: 0,
      outcome: 'succeeded',
      durationMs: 4200,
      costUsd: 0.42,
      tokens: { input: 10, output: 5, cacheRead: 1, cacheWrite: 0 },
      attempt: 2,
    });
    // A model-override file that set the call's tier: counted at the tier it ran at; one it ignored changes nothing.
    const overridden = { ...result, modelOverride: { tier: 'development', model: null, said: 'sonnet', capped: false } };
    expect(agentCallFacts(AgentInputWire.parse(input), AgentResultWire.parse(overridden), 1, 'run-1').tier).toBe('development');
    const ignored = { ...result, modelOverride: { ignored: '.vigil/model-override says "x": ignored' } };
    expect(agentCallFacts(AgentInputWire.parse(input), AgentResultWire.parse(ignored), 1, 'run-1').tier).toBe('fast');
    expect(callSpanAttributes(facts)).toMatchObject({
      'vigil.run_id': 'run-1',
      'vigil.iteration': 3,
      'vigil.role': 'iteration',
      'vigil.provider': 'claude',
      'vigil.exit_code': 0,
      'vigil.cost_usd': 0.42,
    });
  });

  it("carry a round's member call with the run's iteration, and its round beside it (never in its place)", async () => {
    const spans: { name: string; attrs: SpanAttributes }[] = [];
    const hooks: SpanHooks = {
      annotate: (attrs) => {
        const last = spans.at(-1);
        if (last) Object.assign(last.attrs, attrs);
      },
      child: (name, attrs, fn) => {
        spans.push({ name, attrs: { ...attrs } });
        return fn();
      },
    };
    const observer = activityObserver({ spans: hooks, log: false });
    // A council round held at iteration 5, its first round: the member's input as the round makes it.
    const member = {
      runId: 'run-1',
      role: 'council',
      iteration: 5,
      provider: 'command',
      extraEnv: { VIGIL_MEMBER: '0', VIGIL_COUNCIL_ROUND: '1' },
    };
    await observer.inProcess(member as never, () => Promise.resolve(blankAgentResult({ exitCode: 0, attempt: 1, durationMs: 10 })));
    const reviewer = { ...member, role: 'reviewer', extraEnv: { VIGIL_REVIEWER: 'security', VIGIL_REVIEW_ROUND: '2' } };
    await observer.inProcess(reviewer as never, () => Promise.resolve(blankAgentResult({ exitCode: 0, attempt: 1, durationMs: 10 })));
    expect(spans.map((s) => [s.name, s.attrs['vigil.iteration'], s.attrs['vigil.round']])).toEqual([
      ['AgentCall:council', 5, 1],
      ['AgentCall:reviewer', 5, 2],
    ]);
    // Control: the builder's call has no round.
    expect(callSpanAttributes(agentCallFacts(AgentInputWire.parse(input), null, 1, 'run-1'))).not.toHaveProperty('vigil.round');
  });

  it('name how a call ended, the worst reason first', () => {
    const base = AgentResultWire.parse(blankAgentResult({ exitCode: 0, attempt: 1 }));
    expect(callOutcome(base)).toBe('succeeded');
    expect(callOutcome({ ...base, exitCode: 2 })).toBe('failed');
    expect(callOutcome({ ...base, exitCode: 124, timedOut: true })).toBe('timed_out');
    expect(callOutcome({ ...base, exitCode: 1, authError: 'invalid key' })).toBe('auth_error');
    expect(callOutcome({ ...base, exitCode: 1, rateLimit: { waitSeconds: 30, source: 'rpm' } })).toBe('rate_limited');
    expect(callOutcome({ ...base, ioError: 'ENOSPC' })).toBe('io_error');
    // A call that threw: cancelled or an error, its duration the wall time.
    expect(agentCallFacts(AgentInputWire.parse(input), null, 1234.6, null, true)).toMatchObject({
      outcome: 'cancelled',
      exitCode: null,
      durationMs: 1235,
    });
    expect(agentCallFacts(AgentInputWire.parse(input), null, 5, null, false).outcome).toBe('error');
  });

  it('read a gate pass, its test run as the tests gate', () => {
    const pass = GatesPassWire.parse({
      treeHash: 't',
      results: [
        { gate: 'secret_scan', verdict: 'pass' },
        { gate: 'doc_coverage', verdict: 'fail', reason: 'x' },
      ],
      tests: { passed: true, verdict: 'pass' },
      interrupted: false,
    });
    expect(gatePassFacts(pass)).toEqual([
      { gate: 'secret_scan', verdict: 'pass' },
      { gate: 'doc_coverage', verdict: 'fail' },
      { gate: 'tests', verdict: 'pass' },
    ]);
  });
});

describe('run gauges', () => {
  const now = Date.parse('2030-01-01T12:00:00Z');
  const run = (workflowId: string, status: string, pause: { by: string; at: string } | null, usd = 0): OpenRun => ({
    workflowId,
    facts: { status: status as never, pause, spend: { usd } },
    searchStatus: null,
  });

  it('count runs by status, the paused ones as waiting for a person since their pause, and the unreadable by their search attribute', () => {
    const s = summarizeRuns(
      [
        run('a', 'running', null, 1.5),
        run('b', 'paused', { by: 'vigil', at: '2030-01-01T10:00:00Z' }, 2),
        run('c', 'paused', { by: 'alice', at: '2030-01-01T11:59:00Z' }),
        // Pausing: its agent call still runs, so nobody is waited for yet.
        run('d', 'pausing', { by: 'bob', at: '2030-01-01T11:00:00Z' }),
        { workflowId: 'e', facts: null, searchStatus: 'backing_off' },
        { workflowId: 'f', facts: null, searchStatus: null },
      ],
      now,
    );
    expect(s.byStatus).toMatchObject({ running: 1, paused: 2, pausing: 1, backing_off: 1, unknown: 1, finished: 0 });
    expect(s.waiting).toEqual([
      { workflowId: 'b', pausedBy: 'vigil', seconds: 7200 },
      { workflowId: 'c', pausedBy: 'person', seconds: 60 },
    ]);
    expect(s.spendUsd).toBe(3.5);
    expect(s.unreadable).toBe(2);
  });
});

/** Sample values of a Prometheus text, by `name{labels}`. */
function samples(text: string): Map<string, number> {
  const out = new Map<string, number>();
  for (const line of text.split('\n')) {
    if (!line || line.startsWith('#')) continue;
    const at = line.lastIndexOf(' ');
    out.set(line.slice(0, at), Number(line.slice(at + 1)));
  }
  return out;
}

describe('VigilMetrics and the activity observer', () => {
  it('count what the activities report, from their wire forms, and derive the run gauges at scrape time', async () => {
    const metrics = new VigilMetrics();
    const sink: ObservationSink = metrics;
    const observer = activityObserver({ sink, log: false });
    const interceptors = (type: string) =>
      observer.interceptors({
        info: { activityType: type, workflowExecution: { workflowId: 'run-1', runId: 'r' } },
        cancellationSignal: new AbortController().signal,
      } as never);
    const run = async (type: string, arg: unknown, result: unknown): Promise<void> => {
      const inbound = interceptors(type).inbound;
      await inbound?.execute?.({ args: [arg], headers: {} }, () => Promise.resolve(result));
    };
    const usage = { costUsd: 0.5, inputTokens: 100, outputTokens: 10, cacheReadTokens: 0, cacheWriteTokens: 0, model: null };
    await run(
      'runAgent',
      input,
      compactAgentResult(blankAgentResult({ exitCode: 0, attempt: 1, durationMs: 2000, provider: 'claude', usage })),
    );
    await run('runAgent', input, {
      ...compactAgentResult(blankAgentResult({ exitCode: 1, attempt: 1, durationMs: 500, provider: 'claude' })),
      gates: { treeHash: 't', results: [{ gate: 'static_analysis', verdict: 'fail' }], tests: null, interrupted: false },
    });
    await run(
      'runGates',
      {},
      { treeHash: 't', results: [{ gate: 'secret_scan', verdict: 'pass' }], tests: { verdict: 'fail', passed: false }, interrupted: false },
    );
    await run(
      'reviewRound',
      {},
      { record: { result: 'blocked', reviewers: [{ verdict: 'FAIL' }, { verdict: 'PASS' }], devilsAdvocate: null }, usages: [] },
    );
    await run('councilRound', {}, { verdict: { result: 'APPROVED', trigger: 'claim' }, usages: [] });
    await run('inspectRepo', {}, { treeHash: 't' });
    // A failed call: counted with the error outcome, and the failure passes through unchanged.
    const boom = new Error('worker lost');
    await expect(interceptors('runAgent').inbound?.execute?.({ args: [input], headers: {} }, () => Promise.reject(boom))).rejects.toBe(
      boom,
    );
    // An in-process member call (a council round's), through the same observer.
    await observer.inProcess({ ...input, role: 'council', provider: 'codex' } as never, () =>
      Promise.resolve(blankAgentResult({ exitCode: 0, attempt: 1, durationMs: 3000, provider: 'codex' })),
    );

    metrics.setRunsSource(() =>
      Promise.resolve(
        summarizeRuns(
          [
            {
              workflowId: 'w',
              facts: { status: 'paused', pause: { by: 'vigil', at: new Date(Date.now() - 90_000).toISOString() }, spend: { usd: 4 } },
              searchStatus: null,
            },
          ],
          Date.now(),
        ),
      ),
    );
    const m = samples(await metrics.text());
    expect(m.get('vigil_agent_calls_total{provider="claude",role="iteration",outcome="succeeded"}')).toBe(1);
    expect(m.get('vigil_agent_calls_total{provider="claude",role="iteration",outcome="failed"}')).toBe(1);
    expect(m.get('vigil_agent_calls_total{provider="claude",role="iteration",outcome="error"}')).toBe(1);
    expect(m.get('vigil_agent_calls_total{provider="codex",role="council",outcome="succeeded"}')).toBe(1);
    expect(m.get('vigil_iterations_total{outcome="succeeded"}')).toBe(1);
    expect(m.get('vigil_iterations_total{outcome="failed"}')).toBe(1);
    expect(m.get('vigil_iterations_total{outcome="timed_out"}')).toBe(0);
    // By tier: the iterations' (not the council member's), the failed one too; spend from the priced one.
    expect(m.get('vigil_tier_iterations_total{tier="fast",outcome="succeeded"}')).toBe(1);
    expect(m.get('vigil_tier_iterations_total{tier="fast",outcome="failed"}')).toBe(1);
    expect(m.get('vigil_tier_spend_usd_total{tier="fast"}')).toBe(0.5);
    expect(m.get('vigil_agent_call_duration_seconds_count{provider="claude",role="iteration"}')).toBe(3);
    expect(m.get('vigil_agent_call_duration_seconds_bucket{le="5",provider="claude",role="iteration"}')).toBe(3);
    expect(m.get('vigil_agent_spend_usd_total{provider="claude",role="iteration"}')).toBe(0.5);
    expect(m.get('vigil_agent_unpriced_calls_total{provider="claude",role="iteration"}')).toBe(1);
    expect(m.get('vigil_agent_tokens_total{provider="claude",role="iteration",kind="input"}')).toBe(100);
    expect(m.get('vigil_gate_results_total{gate="static_analysis",verdict="fail"}')).toBe(1);
    expect(m.get('vigil_gate_results_total{gate="secret_scan",verdict="pass"}')).toBe(1);
    expect(m.get('vigil_gate_results_total{gate="tests",verdict="fail"}')).toBe(1);
    expect(m.get('vigil_review_rounds_total{result="blocked"}')).toBe(1);
    expect(m.get('vigil_reviewer_verdicts_total{verdict="FAIL"}')).toBe(1);
    expect(m.get('vigil_council_rounds_total{result="APPROVED",trigger="claim"}')).toBe(1);
    expect(m.get('vigil_runs{status="paused"}')).toBe(1);
    expect(m.get('vigil_runs_waiting_for_person{paused_by="vigil"}')).toBe(1);
    expect(m.get('vigil_run_waiting_for_person_seconds{workflow_id="w",paused_by="vigil"}')).toBeGreaterThanOrEqual(90);
    expect(m.get('vigil_open_runs_spend_usd')).toBe(4);
    expect(m.get('vigil_worker_ready')).toBe(0);
  });

  it('a process without workers is not ready and has taken no task', () => {
    const r = new WorkerReadiness();
    expect(r.ready()).toEqual({ ready: false, why: 'starting: the workers are not polling yet' });
    expect(r.report()).toMatchObject({ ready: false, workers: [], lastTaskAt: null });
    r.taskTaken(Date.parse('2030-01-01T00:00:00Z'));
    expect(r.report(Date.parse('2030-01-01T00:01:00Z'))).toMatchObject({ lastTaskAt: '2030-01-01T00:00:00.000Z', lastTaskAgeSeconds: 60 });
  });
});

describe('deploy/ monitoring examples', () => {
  const served = new Set(
    new VigilMetrics().registry
      .getMetricsAsArray()
      .flatMap((m) => (m instanceof Histogram ? [`${m.name}_bucket`, `${m.name}_count`, `${m.name}_sum`] : [m.name])),
  );
  /** The vigil_* series an expression names. */
  const named = (expr: string): string[] => [...expr.matchAll(/\bvigil_[a-z_]+/g)].map((m) => m[0]);

  it('alert on a run waiting for a person for an hour, spend per hour and failing iterations, with series the worker serves', () => {
    const rules = loadYaml(readFileSync(path.join(ROOT, 'deploy/prometheus/vigil-alerts.yml'), 'utf8')) as {
      groups: { rules: { alert: string; expr: string }[] }[];
    };
    const all = rules.groups.flatMap((g) => g.rules);
    for (const r of all) for (const name of named(r.expr)) expect(served, `${r.alert}: ${name}`).toContain(name);
    const by = (a: string): string => all.find((r) => r.alert === a)?.expr ?? '';
    expect(by('VigilRunWaitingForPerson')).toMatch(/vigil_run_waiting_for_person_seconds\)? > 3600/);
    expect(by('VigilSpendPerHourHigh')).toContain('increase(vigil_agent_spend_usd_total[1h])');
    expect(by('VigilIterationsFailing')).toContain('vigil_iterations_total');
  });

  it('the Grafana dashboard charts only series the worker serves, and every one of them', () => {
    const dash = JSON.parse(readFileSync(path.join(ROOT, 'deploy/grafana/vigil-dashboard.json'), 'utf8')) as {
      panels: { title: string; targets: { expr: string }[] }[];
    };
    const used = new Set<string>();
    for (const p of dash.panels)
      for (const t of p.targets)
        for (const n of named(t.expr)) {
          expect(served, `${p.title}: ${n}`).toContain(n);
          used.add(n.replace(/_(bucket|count|sum)$/, ''));
        }
    const families = new Set([...served].map((n) => n.replace(/_(bucket|count|sum)$/, '')));
    const unused = [...families].filter(
      (f) => !used.has(f) && !['vigil_agent_unpriced_calls_total', 'vigil_runs_unreadable', 'vigil_open_runs_spend_usd'].includes(f),
    );
    expect(unused).toEqual([]);
  });
});
