/**
 * `vigil start --issue FILE`, end to end: real `node bin/vigil.js` processes against the suite's
 * Temporal dev server and a `vigil worker` child process, the scripted agent as the builder, the
 * default knobs (the PRD checklist on) but for the judges no run here reaches (FAST).
 *
 * - The issue is the run's PRD, titled by its heading, and its task list (`- [ ] …`, ticked boxes
 *   included, nothing else) is the PRD checklist: no extraction call is made, and status lists
 *   exactly those items.
 * - An issue without a task list starts too, and says that the checklist will be extracted.
 * - Refused before anything starts (exit 2, with what to do): a PRD and --issue together,
 *   --issue with --checklist, neither a PRD nor --issue, and an issue file that does not exist.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Client, Connection } from '@temporalio/client';
import { afterAll, beforeAll, describe, it } from 'vitest';
import {
  agentCalls,
  assertBuilt,
  makeRepo,
  SCRIPTED_AGENT,
  temporalAddress,
  uniqueId,
  writePrd,
  writeScenario,
} from '../support/harness.js';
import { runVigil, show, startWorkerProcess, waitUntil, type CliResult, type WorkerProcess } from './cli-helpers.js';

const NAMESPACE = 'default';
// The run is looked at before any claim: the judges would only add calls nobody asserts here.
const FAST = ['--set', 'councilEnabled=false', '--set', 'qualityGates=false', '--set', 'codeReview=false', '--set', 'maxIterations=50'];
const ISSUE = [
  '# Export the report as CSV',
  '',
  'Users ask for a CSV export of the weekly report.',
  '',
  '- today there is no export button',
  '',
  '## Acceptance',
  '',
  '- [ ] A "CSV" button downloads the report',
  "- [x] (critical) The columns are the table's, in its order",
  '- [ ] EXP-3: dates in ISO 8601',
  '',
].join('\n');

let taskQueue: string;
let worker: WorkerProcess | undefined;
let connection: Connection | undefined;
let client: Client;
const started = new Set<string>();
const dir = mkdtempSync(path.join(os.tmpdir(), 'vigil-start-issue-'));

const baseEnv = (): Record<string, string> => ({
  TEMPORAL_ADDRESS: temporalAddress(),
  TEMPORAL_NAMESPACE: NAMESPACE,
  VIGIL_TASK_QUEUE: taskQueue,
});
const vigil = (args: string[]): Promise<CliResult> => runVigil(args, baseEnv());

function issueFile(name: string, text: string): string {
  const p = path.join(dir, name);
  writeFileSync(p, text);
  return p;
}

/** `vigil start` of a fresh repository whose builder works slowly (no iteration ends while the test looks), under `id`. */
function startArgs(id: string, source: string[], extra: string[] = []): { args: string[]; repo: string } {
  const repo = makeRepo();
  started.add(id);
  const scenario = writeScenario(repo, { version: 1, iterations: [], default: { sleepBeforeMs: 1500, output: 'working\n' } });
  const agent = `"${SCRIPTED_AGENT}" --scenario "${scenario}"`;
  return { args: ['start', ...source, '--repo', repo, '--agent-command', agent, ...FAST, '--id', id, ...extra], repo };
}

interface StatusJson {
  quality?: { checklist?: { id: string; title: string; priority: string; status: string }[] | null } | null;
}
const statusOf = async (id: string): Promise<StatusJson> => JSON.parse((await vigil(['status', id, '--json'])).stdout) as StatusJson;

beforeAll(async () => {
  assertBuilt();
  taskQueue = uniqueId('start-issue');
  connection = await Connection.connect({ address: temporalAddress() });
  client = new Client({ connection, namespace: NAMESPACE });
  worker = await startWorkerProcess(baseEnv());
});

afterAll(async () => {
  if (connection)
    await Promise.all(
      [...started].map((id) =>
        client.workflow
          .getHandle(id)
          .terminate('vigil start --issue e2e cleanup')
          .catch(() => undefined),
      ),
    );
  await worker?.stop();
  await connection?.close();
});

describe.concurrent('vigil start --issue', () => {
  it('runs the issue as the PRD, its task list the checklist: no extraction call, status lists the boxes', async ({ expect }) => {
    const id = uniqueId('issue');
    const { args, repo } = startArgs(id, ['--issue', issueFile('csv.md', ISSUE)]);
    const r = await vigil(args);
    expect(r.code, show(r)).toBe(0);
    expect(r.stdout).toContain(`started run ${id}`);
    expect(r.stdout).toContain('("Export the report as CSV")');
    expect(r.stdout).toContain("checklist  : 3 item(s) from the issue's task list");

    // The builder's first call has started: a checklist extraction, had there been one, came before it.
    await waitUntil('the first builder call', async () => agentCalls(repo).some((c) => c.role === 'iteration'), 60_000, 250);
    expect(agentCalls(repo).map((c) => c.role)).not.toContain('checklist');
    const s = await statusOf(id);
    expect(s.quality?.checklist?.map((i) => [i.id, i.priority, i.title, i.status])).toEqual([
      ['REQ-1', 'medium', 'A "CSV" button downloads the report', 'unverified'],
      ['REQ-2', 'critical', "The columns are the table's, in its order", 'unverified'],
      ['EXP-3', 'medium', 'dates in ISO 8601', 'unverified'],
    ]);
  });

  it('starts an issue without a task list, saying the checklist will be extracted', async ({ expect }) => {
    const id = uniqueId('issue-plain');
    const { args } = startArgs(id, ['--issue', issueFile('plain.md', '# It crashes on start\n\nThe app exits at once.\n')]);
    const r = await vigil(args);
    expect(r.code, show(r)).toBe(0);
    expect(r.stdout).toContain('checklist  : the issue has no task list (- [ ] ...): an agent extracts one from its text');
  });

  it('refuses what it cannot take before anything starts, saying what to do', async ({ expect }) => {
    const issue = issueFile('refused.md', ISSUE);
    const checklist = issueFile('checklist.md', '- [ ] one\n');
    const missing = path.join(dir, 'missing.md');
    const prd = writePrd();
    const cases: [string[], string][] = [
      [[prd, '--issue', issue], `give the PRD (${prd}) or --issue ${issue}, not both: the issue is the PRD`],
      [
        ['--issue', issue, '--checklist', checklist],
        `--issue ${issue} takes the PRD checklist from the issue's task list: drop --checklist, or give the issue as the PRD`,
      ],
      [[], 'missing the PRD: vigil start <prd> [options], vigil start --issue FILE, or vigil start --goal "what to build"'],
      [['--issue', missing], `issue file not found: ${missing}`],
    ];
    const ids = cases.map(() => uniqueId('issue-refused'));
    const results = await Promise.all(cases.map(([source], i) => vigil(startArgs(ids[i] as string, source).args)));
    for (const [i, r] of results.entries()) {
      expect(r.code, show(r)).toBe(2);
      expect(r.stderr).toContain(cases[i]?.[1]);
      expect(r.stdout).not.toContain('started run');
      expect(
        await client.workflow
          .getHandle(ids[i] as string)
          .describe()
          .then(() => 'started')
          .catch(() => 'nothing'),
      ).toBe('nothing');
    }
  });
});
