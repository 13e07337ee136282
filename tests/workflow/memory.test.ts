/**
 * The run memory on a real dev server: the repository's learnings reach the first prompt; each
 * iteration's facts and the agent's SUMMARY, and the agent's CONTINUITY.md, reach the next prompts;
 * after a context clear (the agent's CONTEXT_CLEAR_REQUESTED) the fresh session's prompt holds
 * the run so far; across continue-as-new the memory is carried and every prompt's "run so far"
 * stays within memoryBudgetChars; the decisions around the iterations (a failing tests gate, a
 * completion refused before the council, a rejected council round) join it; a prompt template
 * file (knob promptTemplate) shapes the prompts.
 */
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import {
  assertBuilt,
  createTestEnv,
  makeRepo,
  makeWorker,
  loopInput,
  startRun,
  status,
  uniqueId,
  writeScenario,
  type TestEnv,
} from '../support/harness.js';

let env: TestEnv;
beforeAll(async () => {
  assertBuilt();
  env = await createTestEnv();
});
afterAll(async () => env?.close());

function prompts(repo: string): (n: number) => string {
  const runDir = path.join(repo, '.vigil/runs', readdirSync(path.join(repo, '.vigil/runs'))[0] as string);
  return (n: number) => readFileSync(path.join(runDir, `iteration-${String(n).padStart(4, '0')}.prompt.md`), 'utf8');
}

/** The text of one section of a prompt: from its heading to the next blank line. */
function section(prompt: string, heading: string): string | null {
  const at = prompt.indexOf(`${heading}\n`);
  if (at < 0) return null;
  const rest = prompt.slice(at + heading.length + 1);
  const end = rest.indexOf('\n\n');
  return end < 0 ? rest : rest.slice(0, end);
}

it('after a context clear the fresh session starts with the run so far, the continuity notes and the learnings', async () => {
  const repo = makeRepo();
  mkdirSync(path.join(repo, '.vigil'), { recursive: true });
  writeFileSync(path.join(repo, '.vigil/learnings.md'), '- Run the tests with `node --test`; the old runner hangs.\n');
  const scenario = writeScenario(repo, {
    version: 1,
    iterations: [
      {
        writes: {
          'parser.js': 'export const parse = () => 1;\n',
          '.vigil/signals/SUMMARY': 'Created the parser skeleton.\n',
          '.vigil/CONTINUITY.md': '# Notes\nNEXT: wire the parser into cli.js\n',
        },
      },
      {
        writes: {
          'cli.js': 'import "./parser.js";\n',
          '.vigil/signals/SUMMARY': 'Wired the parser into the CLI.',
          '.vigil/signals/CONTEXT_CLEAR_REQUESTED': 'context is full',
        },
      },
      { claim: 'promise' },
    ],
  });
  const tq = uniqueId('memory');
  const worker = await makeWorker(env, tq);
  await worker.runUntil(async () => {
    const handle = await startRun(env, tq, loopInput(repo, scenario));
    const outcome = await handle.result();
    expect(outcome.status).toBe('completion_promise_fulfilled');
    const snap = await status(handle);
    expect(snap.memory).toMatchObject({ continuity: true, learnings: true });
    expect(snap.memory?.entries).toBeGreaterThanOrEqual(4); // 3 iterations and the context clear
  });
  const prompt = prompts(repo);

  // Iteration 1: the learnings of earlier runs on this repository; nothing has happened yet.
  expect(section(prompt(1), 'Learnings about this repository from earlier runs (.vigil/learnings.md):')).toBe(
    '- Run the tests with `node --test`; the old runner hangs.',
  );
  expect(prompt(1)).not.toContain('The run so far');
  expect(prompt(1)).not.toContain('Your continuity notes');

  // Iteration 2: iteration 1 in the agent's words, and its notes.
  expect(section(prompt(2), 'The run so far (newest first):')).toBe(
    '- iteration 1: ACT · exit 0 · changed 1 file(s): parser.js (1 line(s)) · 1 file(s) vs run start (+1 -0) — agent: "Created the parser skeleton."',
  );
  expect(section(prompt(2), 'Your continuity notes (.vigil/CONTINUITY.md, as you left them):')).toBe(
    '# Notes\nNEXT: wire the parser into cli.js',
  );

  // Iteration 3, after the context clear: a fresh session that starts with the whole memory.
  const fresh = prompt(3);
  expect(fresh).toContain('This is a FRESH SESSION');
  const soFar = section(fresh, 'The run so far (newest first):') ?? '';
  expect(soFar.split('\n')).toEqual([
    '- iteration 2: context cleared (the agent asked for a context clear): the next iteration starts a fresh session',
    '- iteration 2: REFLECT · exit 0 · changed 1 file(s): cli.js (1 line(s)) · 2 file(s) vs run start (+2 -0) — agent: "Wired the parser into the CLI."',
    '- iteration 1: ACT · exit 0 · changed 1 file(s): parser.js (1 line(s)) · 1 file(s) vs run start (+1 -0) — agent: "Created the parser skeleton."',
  ]);
  expect(section(fresh, 'Your continuity notes (.vigil/CONTINUITY.md, as you left them):')).toBe(
    '# Notes\nNEXT: wire the parser into cli.js',
  );
  expect(section(fresh, 'Learnings about this repository from earlier runs (.vigil/learnings.md):')).toContain('node --test');
  // The SUMMARY files were consumed, the continuity notes kept where the agent keeps them.
  expect(readdirSync(path.join(repo, '.vigil/signals'))).not.toContain('SUMMARY');
  expect(readFileSync(path.join(repo, '.vigil/CONTINUITY.md'), 'utf8')).toContain('NEXT:');
});

it('carries the memory across continue-as-new and keeps every prompt within memoryBudgetChars', async () => {
  const repo = makeRepo();
  const iterations = 9;
  const budget = 700;
  const scenario = writeScenario(repo, {
    version: 1,
    iterations: Array.from({ length: iterations }, (_, i) => ({
      writes: { [`f${i + 1}.txt`]: `${i + 1}\n`, '.vigil/signals/SUMMARY': `Step ${i + 1}: ${'wrote a file and checked it; '.repeat(4)}` },
      ...(i === iterations - 1 ? { claim: 'promise' as const } : {}),
    })),
  });
  const tq = uniqueId('memory-can');
  const worker = await makeWorker(env, tq);
  await worker.runUntil(async () => {
    const handle = await startRun(env, tq, loopInput(repo, scenario, { continueAsNewEvery: 2, memoryBudgetChars: budget }));
    const outcome = await handle.result();
    expect(outcome.iteration).toBe(iterations);
    const snap = await status(handle);
    expect(snap.generations).toBe(4);
    // One entry per iteration, and the tier ladder's step down after five single-file successes.
    expect(snap.memory?.entries).toBe(iterations + 1);
  });
  const prompt = prompts(repo);
  for (let n = 2; n <= iterations; n++) {
    const soFar = section(prompt(n), 'The run so far (newest first):') ?? '';
    expect(soFar.length, `iteration ${n}`).toBeLessThanOrEqual(budget);
    // The newest entry is the previous iteration, even when it ran in an earlier execution.
    expect(soFar.split('\n')[0], `iteration ${n}`).toMatch(new RegExp(`^- iteration ${n - 1}: `));
    expect(soFar, `iteration ${n}`).toMatch(new RegExp(`^- iteration ${n - 1}: .*agent: "Step ${n - 1}:`, 'm'));
  }
  const last = section(prompt(iterations), 'The run so far (newest first):') ?? '';
  expect(last).toMatch(/\n- … \d+ older entries not shown \(iteration \d+ and before\)$/);
});

it('remembers the decisions around the iterations: a failing gate, a refused completion, a rejected council round', async () => {
  const repo = makeRepo();
  const vote = (v: 'APPROVE' | 'REJECT', reason = `member says ${v.toLowerCase()}`) => ({
    output: `Looked at the evidence.\nVOTE: ${v}\nREASON: ${reason}\n`,
  });
  const scenario = writeScenario(repo, {
    version: 1,
    iterations: [
      { writes: { 'a.txt': 'a' }, claim: 'promise' }, // the tests gate fails: refused before the council
      { writes: { 'b.txt': 'b' }, claim: 'promise' }, // green: the council rejects (1 of 3)
      { writes: { 'c.txt': 'c' }, claim: 'promise' }, // the council approves
    ],
    roles: {
      council: { rounds: [vote('REJECT', 'c.txt is missing'), vote('APPROVE')], members: { '0': { rounds: [vote('APPROVE')] } } },
      'devils-advocate': { default: vote('APPROVE', 'found nothing') },
    },
  });
  const only = {
    gateStaticAnalysis: false,
    gateSecretScan: false,
    gateMockIntegrity: false,
    gateTestMutation: false,
    gateDocCoverage: false,
  };
  const tq = uniqueId('memory-decisions');
  const worker = await makeWorker(env, tq);
  await worker.runUntil(async () => {
    const handle = await startRun(
      env,
      tq,
      loopInput(repo, scenario, {
        ...only,
        qualityGates: true,
        testCommand: 'test -f b.txt',
        councilEnabled: true,
        councilMinIterations: 1,
        councilCheckInterval: 1000,
        councilEarlyCheck: false,
        councilMemberTimeoutSeconds: 30,
      }),
    );
    const outcome = await handle.result();
    expect(outcome).toMatchObject({ status: 'council_approved', iteration: 3 });
  });
  const soFar = (section(prompts(repo)(3), 'The run so far (newest first):') ?? '').split('\n');
  // Two claims in a row trip the circuit breaker, which is what convenes this round.
  expect(soFar[0]).toBe('- iteration 2: council round 1 (circuit breaker): REJECTED · 1 of 3 approve, 2 needed — REJECT: c.txt is missing');
  expect(soFar[1]).toBe('- iteration 2: gate tests passed');
  expect(soFar[2]).toMatch(/^- iteration 2: REFLECT · exit 0 · changed 1 file\(s\): b\.txt .* · claimed completion$/);
  expect(soFar[3]).toMatch(/^- iteration 1: completion refused before the council: tests: /);
  expect(soFar[4]).toMatch(/^- iteration 1: gate tests fail: /);
  expect(soFar[5]).toMatch(/^- iteration 1: ACT · exit 0 · changed 1 file\(s\): a\.txt .* · claimed completion$/);
});

it('renders the prompts with a template file (knob promptTemplate)', async () => {
  const repo = makeRepo();
  const dir = path.join(repo, '..', `${path.basename(repo)}-template`);
  mkdirSync(dir, { recursive: true });
  const template = path.join(dir, 'prompt.md');
  writeFileSync(
    template,
    'TEAM PROMPT for iteration {{iteration}} ({{phase}}) of {{prdPath}}\n\n{{directives}}\n\n{{runSoFar}}\n\n{{completion}}\n',
  );
  const scenario = writeScenario(repo, { version: 1, iterations: [{ writes: { 'a.txt': 'a' } }, { claim: 'promise' }] });
  const tq = uniqueId('memory-template');
  const worker = await makeWorker(env, tq);
  await worker.runUntil(async () => {
    const handle = await startRun(env, tq, loopInput(repo, scenario, { promptTemplate: template }));
    expect((await handle.result()).status).toBe('completion_promise_fulfilled');
  });
  const prompt = prompts(repo);
  expect(prompt(1)).toMatch(/^TEAM PROMPT for iteration 1 \(ACT\) of \/\S+\.md\n\nWhen every requirement is implemented/);
  expect(prompt(2)).toMatch(
    /^TEAM PROMPT for iteration 2 \(REFLECT\) of \/.*\n\nThe run so far \(newest first\):\n- iteration 1: ACT · exit 0/,
  );
  expect(prompt(2)).not.toContain('You are an autonomous coding agent');
  expect(prompt(2)).toContain('claim completion by');
});
