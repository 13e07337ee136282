/**
 * The run's card as the Temporal UI renders it: a real dev server with its UI (the CLI's embedded
 * ui-server, whose `/render` turns the card's markdown into the page the UI frames), asked to
 * render the card of a run paused on its budget. Unescaped, its dollar amounts open inline math
 * (`$1.20 of $` became `\(1.20 of \)`); escaped (rules/ui.ts, cardMarkdown), they read as
 * written and the commands in code spans are untouched.
 */
import { mkdtempSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, expect, inject, it } from 'vitest';
import type { StatusSnapshot } from '../../schemas/status.js';
import { currentDetails } from '../../rules/ui.js';
import { freePort, startDevServer, type DevServer } from '../../workers/dev-server.js';
import { patient } from '../support/patience.js';
import { statusSnapshot } from '../support/status-snapshot.js';

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

/** A supervised run that its budget paused: the card's dollar amounts are what this test reads. */
const pausedOnBudget = (): StatusSnapshot =>
  statusSnapshot({
    workflowId: 'card-run',
    status: 'paused',
    paused: true,
    pause: { by: 'vigil', at: '2026-11-29T10:00:00.000Z', reason: 'budget exceeded: $1.20 of $1.00' },
    spend: { usd: 1.2, inputTokens: 10, outputTokens: 10, calls: 4 },
    budgetUsd: 1,
  });

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
