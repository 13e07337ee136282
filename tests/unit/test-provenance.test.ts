/**
 * Test provenance (activities/gates/test-provenance.ts), part of the `test_mutation` gate: the
 * tests a run added are run on the code it started from. The adversary adds tests that test
 * nothing it changed (they pass on the old code too): refused, with a finding a person can waive
 * by id. The honest control adds a function and a test of it (which fails on the old code):
 * passes. Real runners (pytest, node's test runner) in the default sandbox, the baseline recorded
 * by the real tests activity, the gate run by the real gate pass; the rule itself is pure and
 * tested case by case below.
 */
import { mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { MockActivityEnvironment } from '@temporalio/testing';
import { DefaultLogger } from '@temporalio/worker';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runGates } from '../../activities/gates/index.js';
import { addedTests, fileOfTest, provenanceFindings } from '../../activities/gates/test-provenance.js';
import { sandboxPlatform } from '../../lib/sandbox-host.js';
import { runTests } from '../../activities/tests.js';
import type { RunGatesResult, TestResult } from '../../schemas/activities.js';
import { GateResultSchema, type GateResult } from '../../schemas/gates.js';
import { ensurePrivateRunDir } from '../../activities/artifacts.js';
import { FINDING_ID, liftFindings } from '../../rules/finding-waivers.js';
import { git } from '../support/harness.js';
import { patient } from '../support/patience.js';

describe('the provenance rule', () => {
  const report = (tests: [string, 'passed' | 'failed' | 'error'][]) => ({
    format: 'junit' as const,
    complete: true,
    incomplete: null,
    tests: tests.map(([id, status]) => ({ id, status })),
  });

  it('finds the added tests by id, with the scratch folder read as the repository', () => {
    const base = report([['/repo/t.test.js::old', 'passed']]);
    const now = report([
      ['/scratch/t.test.js::old', 'passed'],
      ['/scratch/t.test.js::new', 'failed'],
    ]);
    expect(addedTests(base, now, '/scratch', '/repo')).toEqual([{ id: '/repo/t.test.js::new', status: 'failed' }]);
    expect(fileOfTest('tests.test_more::test_x', ['src/a.py', 'tests/test_more.py'])).toBe('tests/test_more.py');
    expect(fileOfTest('/repo/more.test.mjs::x', ['gap.test.mjs', 'more.test.mjs'])).toBe('more.test.mjs');
  });

  it('blocks only when every added test passes on the old code and the start had no failing test', () => {
    const passing = [{ id: 'a::x', status: 'passed' as const }];
    const blocked = provenanceFindings(passing, ['a.py'], false);
    expect(blocked.findings).toHaveLength(1);
    expect(blocked.findings[0]).toMatchObject({ gate: 'test_mutation', severity: 'high', file: 'a.py' });
    expect(FINDING_ID.test(blocked.findings[0]?.id ?? '')).toBe(true);
    expect(blocked.note).toBe('1 added test(s) run on the code before the change, 1 passed there');
    // The start had a failing test: the change is shown by it; the added test is advisory.
    expect(provenanceFindings(passing, ['a.py'], true).findings[0]?.severity).toBe('low');
    // One added test fails on the old code: it tests the change; the other is advisory.
    const mixed = provenanceFindings([...passing, { id: 'a::y', status: 'failed' }], ['a.py'], false);
    expect(mixed.findings.map((f) => f.severity)).toEqual(['low']);
    expect(provenanceFindings([], ['a.py'], false)).toEqual({ findings: [], note: 'no test added' });
  });
});

describe.runIf(sandboxPlatform().problem === null)('added tests run on the code the run started from', () => {
  const saved = { ...process.env };
  let root: string;
  beforeAll(() => {
    root = mkdtempSync(path.join(os.tmpdir(), 'vigil-provenance-'));
    process.env.VIGIL_HOME = path.join(root, 'vigil-home');
    process.env.VIGIL_SANDBOX = 'auto';
  });
  afterAll(() => {
    for (const k of Object.keys(process.env)) if (!(k in saved)) delete process.env[k];
    Object.assign(process.env, saved);
    rmSync(root, { recursive: true, force: true });
  });

  const RUNNERS = {
    pytest: {
      command: 'python3 -m pytest -q',
      start: {
        'calc.py': 'def add(a, b):\n    return a + b\n',
        'test_calc.py': 'from calc import add\n\ndef test_add():\n    assert add(2, 3) == 5\n',
      },
      vacuous: { 'test_more.py': 'from calc import add\n\ndef test_add_zero():\n    assert add(0, 4) == 4\n' },
      honest: {
        'calc.py': 'def add(a, b):\n    return a + b\n\ndef mul(a, b):\n    return a * b\n',
        'test_mul.py': 'from calc import mul\n\ndef test_mul():\n    assert mul(2, 3) == 6\n',
      },
    },
    'node-test': {
      command: 'node --test',
      start: {
        'package.json': '{"name":"calc","private":true,"type":"module","scripts":{"test":"node --test"}}\n',
        'calc.mjs': 'export const add = (a, b) => a + b;\n',
        'calc.test.mjs':
          "import { test } from 'node:test';\nimport assert from 'node:assert/strict';\nimport { add } from " +
          "'./calc.mjs';\ntest('add', () => assert.equal(add(2, 3), 5));\n",
      },
      vacuous: {
        'more.test.mjs':
          "import { test } from 'node:test';\nimport assert from 'node:assert/strict';\nimport { add } from " +
          "'./calc.mjs';\ntest('add zero', () => assert.equal(add(0, 4), 4));\n",
      },
      honest: {
        'calc.mjs': 'export const add = (a, b) => a + b;\nexport const mul = (a, b) => a * b;\n',
        'mul.test.mjs':
          "import { test } from 'node:test';\nimport assert from 'node:assert/strict';\nimport * as calc from " +
          "'./calc.mjs';\ntest('mul', () => assert.equal(calc.mul(2, 3), 6));\n",
      },
    },
  } as const;

  let n = 0;
  /** A repository at its start (committed), its baseline recorded as a run's first test run records it. */
  async function started(r: (typeof RUNNERS)[keyof typeof RUNNERS]): Promise<{ repo: string; runId: string; startTree: string }> {
    const repo = path.join(root, `repo-${(n += 1)}`);
    const runId = `provenance-${n}`;
    rmSync(repo, { recursive: true, force: true });
    git(root, 'init', '-q', repo);
    for (const [f, text] of Object.entries(r.start)) writeFileSync(path.join(repo, f), text);
    writeFileSync(path.join(repo, '.gitignore'), '.vigil/\n__pycache__/\n');
    git(repo, 'add', '-A');
    git(repo, 'commit', '-q', '-m', 'start');
    const base = (await new MockActivityEnvironment({ attempt: 1 }, { logger: new DefaultLogger('ERROR') }).run(runTests, {
      runId,
      repoPath: repo,
      command: r.command,
      iteration: 0,
      timeoutSeconds: 120,
      recordBaseline: true,
    })) as TestResult;
    expect(base.verdict, base.reason).toBe('pass');
    return { repo, runId, startTree: git(repo, 'rev-parse', 'HEAD^{tree}') };
  }

  const mutationGate = async (repo: string, runId: string, startTree: string): Promise<GateResult> => {
    const out = (await new MockActivityEnvironment({}, { logger: new DefaultLogger('ERROR') }).run(runGates, {
      runId,
      repoPath: repo,
      iteration: 2,
      groups: [['test_mutation' as const]],
      sinceTrees: {},
      sinceDefault: startTree,
      runStartTree: startTree,
      timeoutSeconds: 120,
      coverageThreshold: 0,
      tests: null,
    })) as RunGatesResult;
    return GateResultSchema.parse(out.results[0]);
  };

  for (const [name, r] of Object.entries(RUNNERS)) {
    it(
      `${name}: a builder that adds only tests of what was already there is refused, and a waiver lifts it`,
      async () => {
        const { repo, runId, startTree } = await started(r);
        for (const [f, text] of Object.entries(r.vacuous)) writeFileSync(path.join(repo, f), text);
        const gate = await mutationGate(repo, runId, startTree);
        expect(gate.verdict, gate.reason).toBe('fail');
        const [first] = gate.findings;
        expect(first?.severity).toBe('high');
        expect(first?.file).toBe(Object.keys(r.vacuous)[0]);
        expect(first?.message).toMatch(
          /^added test passes on the code before the change \(passes_before-[0-9a-f]{8}\): .*add zero|add_zero/,
        );
        // The same test files again: the kept answer, no second run on the old code.
        const logs = (): string[] =>
          readdirSync(ensurePrivateRunDir(runId)).filter((f) => f.startsWith('provenance-') && f.endsWith('.log'));
        expect(logs()).toHaveLength(1);
        expect((await mutationGate(repo, runId, startTree)).verdict).toBe('fail');
        expect(logs()).toHaveLength(1);
        const waived = liftFindings(gate, [{ id: first?.id ?? '', by: 'alice', reason: 'the PRD asks for tests of add', at: '' }], null);
        expect(waived.verdict).toBe('pass');
      },
      patient(120_000),
    );

    it(
      `${name}: a builder that adds a function and its test (failing on the old code) passes`,
      async () => {
        const { repo, runId, startTree } = await started(r);
        for (const [f, text] of Object.entries(r.honest)) writeFileSync(path.join(repo, f), text);
        const gate = await mutationGate(repo, runId, startTree);
        expect(gate.verdict, gate.reason).toBe('pass');
        expect(gate.reason).toMatch(/1 added test\(s\) run on the code before the change, 0 passed there$/);
        expect(gate.findings).toEqual([]);
      },
      patient(120_000),
    );
  }

  it(
    'says so, and finds nothing, when the run has no per-test baseline',
    async () => {
      const { repo, runId, startTree } = await started(RUNNERS.pytest);
      rmSync(path.join(ensurePrivateRunDir(runId), 'tests-baseline.json'));
      for (const [f, text] of Object.entries(RUNNERS.pytest.vacuous)) writeFileSync(path.join(repo, f), text);
      const gate = await mutationGate(repo, runId, startTree);
      expect(gate.verdict).toBe('pass');
      expect(gate.reason).toMatch(/provenance of added tests not checked: the run has no per-test baseline report$/);
    },
    patient(120_000),
  );
});
