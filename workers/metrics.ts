/**
 * Vigil's own metrics, in Prometheus form (prom-client), served beside the SDK's on the worker's
 * metrics endpoint (workers/metrics-server.ts):
 *
 * - per call, counted where the calls run (workers/activity-observer.ts reads the activities'
 *   inputs and results): agent calls and their duration by provider and role, spend and tokens,
 *   iterations by outcome, gate results, code reviews and their reviewers' verdicts, council rounds;
 * - per run, derived at scrape time from Temporal (workers/run-gauges.ts: the open `vigilRun`
 *   workflows and each one's `status` query, cached briefly): runs by Vigil status, runs waiting
 *   for a person and for how long, what the open runs have spent;
 * - the worker's own readiness and the time of its last task.
 *
 * The per-call facts come from workers/call-facts.ts.
 */
import { Counter, Gauge, Histogram, Registry } from 'prom-client';
import { REVIEW_VERDICTS } from '../schemas/gates.js';
import { ITERATION_OUTCOMES, type AgentCallFacts } from './call-facts.js';
import type { RunsSummary } from './run-gauges.js';

/** Agent calls take seconds to an hour: buckets from 1 s to 2 h. */
const CALL_BUCKETS = [1, 5, 15, 30, 60, 120, 300, 600, 1200, 1800, 3600, 7200];

export interface ReadinessSource {
  /** Whether every worker of the process polls its queues; `why` says what is not. */
  ready(): { ready: boolean; why: string | null };
  /** When the process last took a task (workflow activation or activity), ms since the epoch; null: none yet. */
  lastTaskAt(): number | null;
}

export class VigilMetrics {
  readonly registry = new Registry();
  private readonly agentCalls: Counter<'provider' | 'role' | 'outcome'>;
  private readonly callDuration: Histogram<'provider' | 'role'>;
  private readonly spend: Counter<'provider' | 'role'>;
  private readonly unpriced: Counter<'provider' | 'role'>;
  private readonly tokens: Counter<'provider' | 'role' | 'kind'>;
  private readonly iterations: Counter<'outcome'>;
  private readonly tierIterations: Counter<'tier' | 'outcome'>;
  private readonly tierSpend: Counter<'tier'>;
  private readonly gates: Counter<'gate' | 'verdict'>;
  private readonly reviews: Counter<'result'>;
  private readonly reviewers: Counter<'verdict'>;
  private readonly council: Counter<'result' | 'trigger'>;
  private runsSource: (() => Promise<RunsSummary | null>) | null = null;
  private readiness: ReadinessSource | null = null;

  constructor() {
    const registers = [this.registry];
    this.agentCalls = new Counter({
      name: 'vigil_agent_calls_total',
      help: 'Agent calls finished, by provider, role and outcome.',
      labelNames: ['provider', 'role', 'outcome'],
      registers,
    });
    this.callDuration = new Histogram({
      name: 'vigil_agent_call_duration_seconds',
      help: 'How long agent calls took (the agent process), by provider and role.',
      labelNames: ['provider', 'role'],
      buckets: CALL_BUCKETS,
      registers,
    });
    this.spend = new Counter({
      name: 'vigil_agent_spend_usd_total',
      help: 'USD the agent calls reported they cost, by provider and role.',
      labelNames: ['provider', 'role'],
      registers,
    });
    this.unpriced = new Counter({
      name: 'vigil_agent_unpriced_calls_total',
      help: 'Agent calls that reported no cost (their spend is unknown).',
      labelNames: ['provider', 'role'],
      registers,
    });
    this.tokens = new Counter({
      name: 'vigil_agent_tokens_total',
      help: 'Tokens the agent calls reported, by provider, role and kind (input, output, cache_read, cache_write).',
      labelNames: ['provider', 'role', 'kind'],
      registers,
    });
    this.iterations = new Counter({
      name: 'vigil_iterations_total',
      help: "Iterations (the builder's agent calls) by outcome.",
      labelNames: ['outcome'],
      registers,
    });
    this.tierIterations = new Counter({
      name: 'vigil_tier_iterations_total',
      help: "Iterations by the model tier they ran at and outcome: first-tier success and where the ladder's climbs go.",
      labelNames: ['tier', 'outcome'],
      registers,
    });
    this.tierSpend = new Counter({
      name: 'vigil_tier_spend_usd_total',
      help: 'What the iterations cost (priced calls), by the model tier they ran at.',
      labelNames: ['tier'],
      registers,
    });
    this.gates = new Counter({
      name: 'vigil_gate_results_total',
      help: 'Quality gate results, by gate and verdict (pass, fail, inconclusive).',
      labelNames: ['gate', 'verdict'],
      registers,
    });
    this.reviews = new Counter({
      name: 'vigil_review_rounds_total',
      help: 'Code review rounds, by result (pass, blocked, inconclusive, refused).',
      labelNames: ['result'],
      registers,
    });
    this.reviewers = new Counter({
      name: 'vigil_reviewer_verdicts_total',
      help: "Code reviewers' verdicts (PASS, FAIL, NO_VERDICT, NO_OUTPUT).",
      labelNames: ['verdict'],
      registers,
    });
    this.council = new Counter({
      name: 'vigil_council_rounds_total',
      help: 'Completion council rounds, by result (APPROVED, REJECTED, BLOCKED_BY_GATE) and what convened them.',
      labelNames: ['result', 'trigger'],
      registers,
    });

    // Zero series for the outcomes and verdicts a dashboard or an alert divides by.
    for (const o of ITERATION_OUTCOMES) this.iterations.inc({ outcome: o }, 0);
    for (const v of REVIEW_VERDICTS) this.reviewers.inc({ verdict: v }, 0);

    // The collect callbacks get the gauge as `this`: the instance's state through these.
    const runsNow = (): Promise<RunsSummary | null> => this.runsNow();
    const readinessNow = (): ReadinessSource | null => this.readiness;
    const runs = new Gauge({
      name: 'vigil_runs',
      help:
        'Open runs in the namespace by Vigil status (from their status query; the VigilStatus search ' +
        'attribute when the query does not answer). The same on every worker: aggregate with max, not sum.',
      labelNames: ['status'],
      registers,
      async collect() {
        const s = await runsNow();
        this.reset();
        if (s) for (const [status, n] of Object.entries(s.byStatus)) this.set({ status }, n);
      },
    });
    const waiting = new Gauge({
      name: 'vigil_runs_waiting_for_person',
      help:
        'Open runs paused and waiting for a person to resume, stop or answer them, by who paused them ' +
        '(vigil: an escalation, a failing gate, the budget, credentials; person: someone paused it).',
      labelNames: ['paused_by'],
      registers,
      async collect() {
        const s = await runsNow();
        this.reset();
        if (!s) return;
        this.set({ paused_by: 'vigil' }, s.waiting.filter((w) => w.pausedBy === 'vigil').length);
        this.set({ paused_by: 'person' }, s.waiting.filter((w) => w.pausedBy === 'person').length);
      },
    });
    const waitingLongest = new Gauge({
      name: 'vigil_runs_waiting_for_person_longest_seconds',
      help: 'How long the run that has waited longest for a person has waited (0: none waits).',
      registers,
      async collect() {
        const s = await runsNow();
        this.set(s ? Math.max(0, ...s.waiting.map((w) => w.seconds)) : 0);
      },
    });
    const waitingRun = new Gauge({
      name: 'vigil_run_waiting_for_person_seconds',
      help: 'Per waiting run (at most 200): how long it has waited for a person since it paused.',
      labelNames: ['workflow_id', 'paused_by'],
      registers,
      async collect() {
        const s = await runsNow();
        this.reset();
        for (const w of s?.waiting.slice(0, 200) ?? []) this.set({ workflow_id: w.workflowId, paused_by: w.pausedBy }, w.seconds);
      },
    });
    const openSpend = new Gauge({
      name: 'vigil_open_runs_spend_usd',
      help: 'What the open runs have spent so far, in USD (their status), summed.',
      registers,
      async collect() {
        const s = await runsNow();
        this.set(s?.spendUsd ?? 0);
      },
    });
    const scrapeErrors = new Gauge({
      name: 'vigil_runs_unreadable',
      help: 'Open runs whose status query did not answer at the last refresh (counted by their search attribute instead).',
      registers,
      async collect() {
        const s = await runsNow();
        this.set(s?.unreadable ?? 0);
      },
    });
    const ready = new Gauge({
      name: 'vigil_worker_ready',
      help: "1 while every worker of this process polls its task queues (the worker's /readyz), else 0.",
      registers,
      collect() {
        this.set(readinessNow()?.ready().ready ? 1 : 0);
      },
    });
    const lastTask = new Gauge({
      name: 'vigil_worker_last_task_timestamp_seconds',
      help: 'When this worker process last took a task (a workflow activation or an activity), in seconds since the epoch; 0: none yet.',
      registers,
      collect() {
        const at = readinessNow()?.lastTaskAt() ?? null;
        this.set(at === null ? 0 : at / 1000);
      },
    });
    void [runs, waiting, waitingLongest, waitingRun, openSpend, scrapeErrors, ready, lastTask];
  }

  /** Where the run-level gauges come from (workers/run-gauges.ts); until set they read as no runs. */
  setRunsSource(source: () => Promise<RunsSummary | null>): void {
    this.runsSource = source;
  }

  setReadiness(r: ReadinessSource): void {
    this.readiness = r;
  }

  private async runsNow(): Promise<RunsSummary | null> {
    return this.runsSource ? this.runsSource() : null;
  }

  agentCall(c: AgentCallFacts): void {
    const labels = { provider: c.provider, role: c.role };
    this.agentCalls.inc({ ...labels, outcome: c.outcome });
    this.callDuration.observe(labels, c.durationMs / 1000);
    if (c.costUsd !== null) this.spend.inc(labels, c.costUsd);
    else if (c.exitCode !== null) this.unpriced.inc(labels);
    if (c.tokens) {
      this.tokens.inc({ ...labels, kind: 'input' }, c.tokens.input);
      this.tokens.inc({ ...labels, kind: 'output' }, c.tokens.output);
      this.tokens.inc({ ...labels, kind: 'cache_read' }, c.tokens.cacheRead);
      this.tokens.inc({ ...labels, kind: 'cache_write' }, c.tokens.cacheWrite);
    }
    if (c.role !== 'iteration') return;
    this.iterations.inc({ outcome: c.outcome });
    if (c.tier === null) return;
    this.tierIterations.inc({ tier: c.tier, outcome: c.outcome });
    if (c.costUsd !== null) this.tierSpend.inc({ tier: c.tier }, c.costUsd);
  }

  gateResult(gate: string, verdict: string): void {
    this.gates.inc({ gate, verdict });
  }

  reviewRound(result: string, reviewerVerdicts: readonly string[]): void {
    this.reviews.inc({ result });
    for (const v of reviewerVerdicts) this.reviewers.inc({ verdict: v });
  }

  councilRound(result: string, trigger: string): void {
    this.council.inc({ result, trigger });
  }

  /** The Prometheus text of every Vigil metric. */
  async text(): Promise<string> {
    return this.registry.metrics();
  }
}
