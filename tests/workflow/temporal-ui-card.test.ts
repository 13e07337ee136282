/**
 * The run's card as the Temporal UI renders it: a real dev server with its UI (the CLI's embedded
 * ui-server, whose `/render` turns the card's markdown into the page the UI frames), asked to
 * render the card of a run paused on its budget. Unescaped, its dollar amounts open inline math
 * (`$1.20 of $` became `\(1.20 of \)`); escaped (workflows/ui.ts, cardMarkdown), they read as
 * written and the commands in code spans are untouched.
 */
import { mkdtempSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, expect, inject, it } from 'vitest';
import { StatusSnapshotSchema, type StatusSnapshot } from '../../schemas/status.js';
import { currentDetails } from '../../workflows/ui.js';
import { freePort, startDevServer, type DevServer } from '../../workers/dev-server.js';
import { patient } from '../support/patience.js';

let server: DevServer | undefined;
let ui = '';

beforeAll(async () => {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'vigil-ui-card-'));
  const port = await freePort();
  server = await startDevServer({ cliPath: inject('temporalCli'), dbFile: path.join(dir, 'temporal.db'), port, uiPort: await freePort() });
  ui = server.uiUrl ?? '';
}, patient(120_000));
afterAll(async () => server?.stop());

/** The body of the page the UI's renderer makes of `markdown`. */
async function rendered(markdown: string): Promise<string> {
  const res = await fetch(`${ui.replace(/\/$/, '')}/render?content=${encodeURIComponent(markdown)}`);
  expect(res.status).toBe(200);
  const page = await res.text();
  return /<main>([\s\S]*)<\/main>/.exec(page)?.[1] ?? page;
}

const pausedOnBudget = (): StatusSnapshot => {
  const at = '2026-11-29T10:00:00.000Z';
  return StatusSnapshotSchema.parse({
    workflowId: 'card-run',
    runId: 'r1',
    status: 'paused',
    iteration: 4,
    maxIterations: 10,
    phase: 'ACT',
    tier: 'development',
    paused: true,
    pause: { by: 'vigil', at, reason: 'budget exceeded: $1.20 of $1.00' },
    consecutiveFailures: 0,
    consecutiveNoChange: 0,
    recentHashes: [],
    runStartSha: null,
    pendingDirectives: 0,
    backoffUntil: null,
    agentRunning: false,
    lastIteration: null,
    recentIterations: [],
    lastCompletion: null,
    outcome: null,
    invalidMessages: [],
    invalidMessageCount: 0,
    generations: 0,
    repoPath: '/r/app',
    prdPath: '/r/app/PRD.md',
    doneSignals: 0,
    totalDoneSignals: 0,
    breaker: null,
    council: { enabled: true, rounds: 0, verdicts: [], forceReviewPending: false },
    lastEvidence: null,
    lastTests: null,
    autonomyMode: 'supervised',
    uncertainty: {
      enabled: true,
      noChangeMin: 4,
      consecutiveCoOccur: 0,
      escalatedEpisode: false,
      escalatedAtIteration: -1,
      ring: [],
      lastRoundIteration: -1,
      lastProxies: { p1: false, p2: false, p3: false },
    },
    ladder: null,
    escalations: [],
    notifications: { sent: 0, failed: 0, recentFailures: [] },
    driftReports: 0,
    latestHandoff: null,
    spend: { usd: 1.2, inputTokens: 10, outputTokens: 10, calls: 4 },
    budgetUsd: 1,
  });
};

it('the UI reads an unescaped dollar amount as math (the defect, shown on the real renderer)', async () => {
  const html = await rendered('Paused by vigil: budget exceeded: $1.20 of $1.00');
  expect(html).toContain('class="math inline"');
  expect(html).not.toContain('$1.20 of $1.00');
});

it("shows the card's dollar amounts as written, and its commands in code spans untouched", async () => {
  const card = currentDetails(pausedOnBudget());
  const html = await rendered(card);
  expect(html).not.toContain('math');
  expect(html).toContain('budget exceeded: $1.20 of $1.00');
  expect(html).toContain('Spend $1.20 of $1.00 budget (4 call(s))');
  // The next step's command, in a code span: as written, no backslash added.
  expect(html).toContain('<code>vigil budget card-run --usd 3</code>');
});
