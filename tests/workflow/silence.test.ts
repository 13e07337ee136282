/**
 * The silence watchdog in whole runs with the product's default knobs (the sandbox on, the
 * provider's circuit breaker on), on the suite's real server; only `agentSilenceMinutes` is set
 * short (6 s on an idle machine, so that a test need not wait 15 minutes; PATIENCE times that, as
 * every limit of the suite, so that the ordinary calls of a loaded machine, slow to print their
 * first line, are not taken for silent ones). The claude preset runs the fake claude
 * CLI of examples/agents/fake-cli behind tests/support/silent-agent.mjs. The adversary: the first
 * iteration's builder prints nothing and changes nothing, and sleeps (with a child and a grandchild
 * that left its session): the call is ended at the limit, not at `agentTimeoutSeconds` (two
 * hours), every process of it is gone, status says "no output for 6 s: ended", the breaker is
 * told of a hung call and counts it, and the run goes on to the council's approval. The honest
 * control: a first builder that prints nothing for three times the limit but writes a file every
 * second keeps running and succeeds.
 */
import { mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { WorkflowHandle } from '@temporalio/client';
import { expect, it } from 'vitest';
import { sandboxPlatform } from '../../lib/sandbox-host.js';
import { iterationLine } from '../../cli/follow.js';
import { silenceReason } from '../../lib/call-silence.js';
import { patient } from '../support/patience.js';
import { printStatus } from '../../cli/status.js';
import { breakerStateQuery, breakerWorkflowId } from '../../workflows/provider-breaker-messages.js';
import { vigilRun } from '../../workflows/run-workflow.js';
import {
  claimBreaker,
  fileWorker,
  makeRepo,
  ROOT,
  runInput,
  startRun,
  status,
  uniqueId,
  waitForStatus,
  writeScenario,
} from '../support/harness.js';

const dir = mkdtempSync(path.join(os.tmpdir(), 'vigil-silence-run-'));
// Set before the worker starts: the fake CLI it runs reads them.
const shared = fileWorker('silence', () => {
  process.env.FAKE_CLI_LOG = path.join(dir, 'calls.jsonl');
  process.env.VIGIL_SANDBOX_WRITABLE = dir;
  // The fake CLI runs behind the silent agent: its folder must be readable in the sandbox.
  process.env.VIGIL_SANDBOX_READABLE = path.join(ROOT, 'examples/agents/fake-cli');
  process.env.VIGIL_SANDBOX = 'auto';
});

/** The silence limit of these runs: 6 s on an idle machine, waited patiently (whole seconds). */
const LIMIT_MS = Math.round(patient(6000) / 1000) * 1000;
/** What status, the log and the next prompt say of the call ended at it. */
const ENDED = silenceReason(LIMIT_MS);

const CHECKLIST = '[{"id": "REQ-1", "title": "the three files exist", "priority": "critical", "verify": "ls a.txt b.txt c.txt"}]';

/** The fake CLI's script: three builder calls that write a file each, then every reviewing role approves. */
function scenario(name: string): void {
  const file = path.join(dir, `${name}.json`);
  writeFileSync(
    file,
    JSON.stringify({
      calls: [
        { writes: { 'a.txt': 'a\n' } },
        { writes: { 'b.txt': 'b\n' } },
        { writes: { 'c.txt': 'c\n' }, text: 'COMPLETION PROMISE FULFILLED' },
      ],
      roles: {
        checklist: { text: CHECKLIST },
        'checklist-verifier': { text: 'ITEM REQ-1: PASS - a.txt, b.txt and c.txt are there' },
        reviewer: { text: 'VERDICT: PASS\n- [Low] a name could be clearer' },
        'devils-advocate': { text: 'VERDICT: PASS\nVOTE: APPROVE\nREASON: found nothing' },
        council: { text: 'VOTE: APPROVE\nREASON: every file is there' },
      },
    }),
  );
  process.env.FAKE_CLI_SCENARIO = file;
  process.env.FAKE_CLI_STATE = path.join(dir, `${name}.count`);
}

type Handle = WorkflowHandle<typeof vigilRun>;

/** A run with the default knobs but a short silence limit (LIMIT_MS), whose agent is the silent agent in `mode` in front of the fake claude CLI. */
async function startSilenceRun(mode: 'hung-builder' | 'quiet-builder', arg: string): Promise<Handle> {
  scenario(mode);
  const input = runInput(makeRepo(), writeScenario('', { version: 1, iterations: [] }), {
    provider: 'claude',
    agentCommand: [
      process.execPath,
      path.join(ROOT, 'tests/support/silent-agent.mjs'),
      mode,
      arg,
      path.join(ROOT, 'examples/agents/fake-cli', 'claude'),
    ],
    agentSilenceMinutes: LIMIT_MS / 60_000,
    notifyDesktop: false,
  });
  await claimBreaker(shared.env, 'claude', shared.taskQueue);
  return startRun(shared.env, shared.taskQueue, input, uniqueId(`silence-${mode}`));
}

interface Report {
  runId: string;
  outcome: 'success' | 'failure' | 'released';
  reason?: string;
}

/** What the run told the provider's breaker, from its history (the signals it sent), with when. */
async function breakerReports(handle: Handle): Promise<(Report & { atMs: number })[]> {
  const history = await handle.fetchHistory();
  return (history.events ?? []).flatMap((e) => {
    const a = e.signalExternalWorkflowExecutionInitiatedEventAttributes;
    const data = a?.input?.payloads?.[0]?.data;
    if (!a || !String(a.workflowExecution?.workflowId).startsWith('vigil-provider-') || !(data instanceof Uint8Array)) return [];
    const atMs = Number(e.eventTime?.seconds ?? 0) * 1000 + Math.floor((e.eventTime?.nanos ?? 0) / 1e6);
    return [{ ...(JSON.parse(Buffer.from(data).toString('utf8')) as Report), atMs }];
  });
}

/** Pids of live processes whose command line carries `mark`. */
function marked(mark: string): number[] {
  const found: number[] = [];
  for (const e of readdirSync('/proc')) {
    if (!/^\d+$/.test(e)) continue;
    try {
      if (readFileSync(`/proc/${e}/cmdline`, 'utf8').includes(mark)) found.push(Number(e));
    } catch {
      /* gone */
    }
  }
  return found;
}

const sandboxed = sandboxPlatform().problem === null;

it.runIf(sandboxed)(
  'a builder that prints nothing and sleeps is ended after the silence limit: status says so, the breaker counts it, the run goes on',
  async () => {
    const mark = `vigil-silent-${process.pid}-${Date.now()}`;
    const handle = await startSilenceRun('hung-builder', mark);
    // Right after the hung iteration: its processes, and the breaker's count while the failure is within its window.
    await waitForStatus(handle, (x) => x.recentIterations.length >= 1, 120_000);
    const leftovers = marked(mark);
    const breaker = await shared.env.client.workflow.getHandle(breakerWorkflowId('claude')).query(breakerStateQuery);

    const outcome = await handle.result();
    const s = await status(handle);
    expect(outcome.status, JSON.stringify(s.recentIterations)).toBe('council_approved');
    const [hung, ...rest] = s.recentIterations;
    expect(hung?.iteration).toBe(1);
    expect(hung?.exitCode).toBe(124);
    expect(hung?.hung).toBe(ENDED);
    // Ended at the limit (and the sandbox's start), not at agentTimeoutSeconds (7200 s by default).
    expect(hung?.durationMs).toBeGreaterThanOrEqual(LIMIT_MS);
    expect(hung?.durationMs).toBeLessThan(LIMIT_MS + patient(24_000));
    expect(rest.length).toBeGreaterThanOrEqual(1);
    expect(rest.every((r) => r.exitCode === 0 && r.hung === undefined)).toBe(true);
    // Every process of the call was gone when the iteration was recorded: the child and the one that left its session.
    expect(leftovers).toEqual([]);

    // `vigil watch` and `vigil status` say why, on the iteration's line; the log's footer and the next prompt too.
    expect(iterationLine(hung as NonNullable<typeof hung>)).toMatch(new RegExp(`^iteration 1 · .* · exit 124 · .* · ${ENDED}$`));
    const lines: string[] = [];
    printStatus(
      {
        kind: 'running',
        workflowId: handle.workflowId,
        snapshot: s,
        workerAnswered: true,
        iteration: s.iteration,
        searchStatus: 'running',
        taskFailing: null,
      },
      (l = '') => lines.push(l),
    );
    expect(lines.some((l) => l.includes('iteration 1 ') && l.endsWith(ENDED))).toBe(true);
    expect(readFileSync(hung?.logPath ?? '', 'utf8')).toContain(`(${ENDED})`);
    const prompt = readFileSync(path.join(path.dirname(hung?.logPath ?? ''), 'iteration-0002.prompt.md'), 'utf8');
    expect(prompt).toContain(`failed with exit code 124 (${ENDED})`);

    // The breaker was told of a hung call, once, and counted it as a failure in its window.
    const reports = (await breakerReports(handle)).filter((r) => r.outcome !== 'released');
    const failures = reports.filter((r) => r.outcome === 'failure');
    expect(failures.map((r) => r.reason)).toEqual([`${ENDED} (a hung call)`]);
    expect(reports.length).toBeGreaterThanOrEqual(4);
    const failedAt = failures[0]?.atMs ?? 0;
    expect(
      breaker.state.failureTimesMs.some((t) => Math.abs(t - failedAt) < 10_000),
      JSON.stringify(breaker.state),
    ).toBe(true);
  },
);

it.runIf(sandboxed)('the honest control: a builder that prints nothing but writes a file every second keeps running', async () => {
  const handle = await startSilenceRun('quiet-builder', String((3 * LIMIT_MS) / 1000));
  const outcome = await handle.result();
  const s = await status(handle);
  expect(outcome.status, JSON.stringify(s.recentIterations)).toBe('council_approved');
  const [quiet] = s.recentIterations;
  expect(quiet?.iteration).toBe(1);
  expect(quiet?.exitCode, quiet?.logPath).toBe(0);
  expect(quiet?.hung).toBeUndefined();
  // It ran three times the limit, quiet all along (the fake CLI printed only at the end).
  expect(quiet?.durationMs).toBeGreaterThanOrEqual(3 * LIMIT_MS);
  expect(s.recentIterations.filter((r) => r.hung !== undefined)).toEqual([]);
  const reports = (await breakerReports(handle)).filter((r) => r.outcome === 'failure');
  expect(reports).toEqual([]);
});
