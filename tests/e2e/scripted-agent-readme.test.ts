/**
 * The scripted agent's README example, run exactly as the README shows it: its scenario (the JSON
 * block under "## Example") saved as scenario.json, `vigil up` running beside (on a fresh
 * VIGIL_HOME: the embedded event store, so the memory judge is asked at the end too, on the
 * suite's Temporal server), and its shell lines run by bash, with `vigil` the CLI of this
 * checkout. Taken from the README at test time, so the two cannot drift. The default knobs, the
 * sandbox on: it must end council_approved, with no answer in the wrong format.
 */
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { execa, type ResultPromise } from 'execa';
import { afterAll, beforeAll, expect, inject, it } from 'vitest';
import { parseScenario } from '../../schemas/scenario.js';
import { assertBuilt, CLI, ROOT, temporalAddress, uniqueId } from '../support/harness.js';
import { cleanEnv, runVigil, show, waitUntil } from './cli-helpers.js';
import { patient } from '../support/patience.js';

const README = readFileSync(path.join(ROOT, 'examples/agents/scripted-agent/README.md'), 'utf8');

/** The first fenced block of `lang` after the heading `## Example`. */
function exampleBlock(lang: string): string {
  const section = README.slice(README.indexOf('\n## Example\n'));
  const m = new RegExp('```' + lang + '\\n([\\s\\S]*?)\\n```').exec(section);
  if (!m) throw new Error(`no \`\`\`${lang} block under "## Example" in the scripted agent's README`);
  return `${m[1]}\n`;
}

const base = {
  VIGIL_HOME: mkdtempSync(path.join(os.tmpdir(), 'vigil-readme-home-')),
  TEMPORAL_ADDRESS: temporalAddress(),
  TEMPORAL_CLI: inject('temporalCli'),
  VIGIL_TASK_QUEUE: uniqueId('vigil-readme'),
};
let up: ResultPromise | undefined;
let upOut = '';

beforeAll(async () => {
  assertBuilt();
  // "keep `vigil up` running in another terminal"
  up = execa(process.execPath, [CLI, 'up'], {
    env: cleanEnv(base),
    extendEnv: false,
    all: true,
    reject: false,
    buffer: false,
  });
  up.all?.on('data', (d: Buffer) => {
    upOut += d.toString();
  });
  await waitUntil('vigil up to poll', () => upOut.includes('polling') || up?.exitCode !== null, 120_000, 200);
  expect(upOut).toMatch(/event store {2}: 127\.0\.0\.1:\d+\/vigil_events \(embedded Postgres/);
}, patient(150_000));
afterAll(async () => {
  // Ctrl+C: the worker stops, then the store it started.
  up?.kill('SIGINT');
  await up;
});

it("runs the README's example as written and ends council_approved", async () => {
  const scenario = exampleBlock('json');
  expect(() => parseScenario(JSON.parse(scenario))).not.toThrow();
  const lines = exampleBlock('sh');
  expect(lines).toContain('vigil start ');
  const dir = mkdtempSync(path.join(os.tmpdir(), 'vigil-readme-'));
  writeFileSync(path.join(dir, 'scenario.json'), scenario);
  // `vigil` as the README's reader has it (an installed CLI, or the checkout's alias), and an author for its commit.
  const script = `set -e\nvigil() { "${process.execPath}" "${CLI}" "$@"; }\n${lines}`;
  const r = await execa('bash', ['-c', script], {
    cwd: dir,
    env: cleanEnv({
      ...base,
      VIGIL_SRC: ROOT,
      GIT_AUTHOR_NAME: 'Reader',
      GIT_AUTHOR_EMAIL: 'reader@example.com',
      GIT_COMMITTER_NAME: 'Reader',
      GIT_COMMITTER_EMAIL: 'reader@example.com',
    }),
    extendEnv: false,
    reject: false,
    all: true,
    timeout: 150_000,
  });
  expect(r.exitCode, `${r.all}\n--- vigil up ---\n${upOut}`).toBe(0);
  expect(r.all).toMatch(/code review 1 \(iteration 3\): PASS/);
  expect(r.all).toMatch(/council round 1 \(iteration 3, [a-z ]+\): APPROVED · 3 of 3 approve/);
  expect(r.all).toMatch(/finished: council_approved \(exit 0\)/);
  expect(r.all).not.toMatch(/contract error/i);
  const repo = path.join(dir, 'add-demo');
  expect(readFileSync(path.join(repo, 'README.md'), 'utf8')).toContain('add(2, 3)');
  // Every reviewing answer in its role's format, and the run journaled into the store `vigil up` started.
  const id = /^started run (\S+)$/m.exec(String(r.all))?.[1] ?? '';
  const status = await runVigil(['status', id, '--json'], base);
  expect(status.code, show(status)).toBe(0);
  expect((JSON.parse(status.stdout) as { contract?: { total: number } }).contract?.total ?? 0).toBe(0);
  const report = await runVigil(['report', id], base);
  expect(report.code, show(report)).toBe(0);
  expect(report.stdout).toMatch(/outcome: council_approved \(exit 0\) at iteration 3/);
  expect(upOut).not.toContain('memory judgement changed nothing');
});
