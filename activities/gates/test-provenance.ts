/**
 * Test provenance, part of the `test_mutation` gate: the tests a run added are run against the code
 * it started from. A test that passes there tests nothing the run changed. When the run's start
 * had no failing test (so the added tests are the only evidence of new behaviour) and every added
 * test passes on the old code, that blocks (`passes_before-…`, lifted by `vigil waive` or a
 * checklist item asking for these tests, for a PRD that asks for tests of existing behaviour);
 * otherwise each such test is an advisory finding.
 *
 * How: the start tree exported into a scratch folder of the run's private one (Vigil's safe git),
 * the repository's dependency folders linked, the run's changed test files laid over it, and the
 * baseline's command run on those files alone, sandboxed like the tests; the tests its report lists
 * that the baseline does not are the added ones. The result depends only on the start tree and the
 * test files, so it is kept per their digest and not run again while they stay the same. A run
 * that cannot say (no per-test baseline, no report, out of time) adds a note, never a finding.
 */
import { createHash } from 'node:crypto';
import { cpSync, existsSync, mkdirSync, readFileSync, rmSync } from 'node:fs';
import path from 'node:path';
import type { FindingInput } from '../../schemas/gates.js';
import type { SandboxMode } from '../../schemas/sandbox.js';
import type { TestCase, TestReport } from '../../schemas/test-report.js';
import { acceptanceCommandLine } from '../../rules/acceptance.js';
import { isTestPath } from '../../rules/integrity.js';
import { ensurePrivateRunDir } from '../artifacts.js';
import { ensurePrivateDir, writePrivateFile } from '../../lib/safe-files.js';
import { exportTree, linkDependencies, ownScratch, runInScratch } from '../scratch-tree.js';
import { readBaseline } from '../tests.js';
import { readReport } from '../../lib/gates/test-report.js';
import { finding, readRepoText } from './test-integrity.js';

export const PROVENANCE_LABEL = 'added test passes on the code before the change';

/** The tests of `report` (a run in `scratch`) that the baseline (a run in `repoPath`) does not list, ids as the baseline's would be. */
export function addedTests(baseline: TestReport, report: TestReport, scratch: string, repoPath: string): TestCase[] {
  const known = new Set(baseline.tests.map((t) => t.id));
  return report.tests.map((t) => ({ ...t, id: t.id.split(scratch).join(repoPath) })).filter((t) => !known.has(t.id));
}

/** The overlaid file an added test lives in, read from its id (a path, or a module path for Python), else the first file. */
export function fileOfTest(id: string, files: readonly string[]): string | null {
  for (const f of files) {
    const module = f.replace(/\.[^./]+$/, '');
    if (id.includes(f) || id.includes(module.replaceAll('/', '.')) || id.includes(module)) return f;
  }
  return files[0] ?? null;
}

/**
 * The rule: added tests that passed on the code before the change are findings, blocking (high)
 * when every added test did and the start had no failing test, else advisory (low).
 */
export function provenanceFindings(
  added: readonly TestCase[],
  files: readonly string[],
  startHadFailures: boolean,
): { findings: FindingInput[]; note: string } {
  if (added.length === 0) return { findings: [], note: 'no test added' };
  const vacuous = added.filter((t) => t.status === 'passed');
  const blocking = vacuous.length === added.length && !startHadFailures;
  const findings = vacuous.map((t) => {
    const id = `passes_before-${createHash('sha256').update(t.id).digest('hex').slice(0, 8)}`;
    const why = blocking
      ? 'it tests nothing the run changed: make it test the change (it should fail on the code before it), or, if the PRD asks ' +
        'for tests of existing behaviour, lift it with a checklist item asking for them or `vigil waive`'
      : 'advisory: other evidence shows the change';
    return {
      ...finding('test_mutation', blocking ? 'high' : 'low', fileOfTest(t.id, files), null, `${PROVENANCE_LABEL} (${id}): ${t.id}; ${why}`),
      id,
    };
  });
  return { findings, note: `${added.length} added test(s) run on the code before the change, ${vacuous.length} passed there` };
}

export interface ProvenanceOptions {
  repoPath: string;
  runId: string;
  startTree: string;
  /** Files changed since the start (repository-relative). */
  files: readonly string[];
  sandbox?: SandboxMode | undefined;
  /** What is left of the gate's budget for the run on the start code. */
  timeoutMs: number;
}

const digest = (s: string | Buffer): string => createHash('sha256').update(s).digest('hex');

/** Runs the added tests on the start tree (see the file comment). */
export async function testProvenance(o: ProvenanceOptions): Promise<{ findings: FindingInput[]; note: string }> {
  const tests = o.files.filter((f) => isTestPath(f) && readRepoText(o.repoPath, f).kind === 'text').sort();
  if (tests.length === 0) return { findings: [], note: '' };
  const baseline = readBaseline(o.runId);
  if (!baseline?.report) return { findings: [], note: 'provenance of added tests not checked: the run has no per-test baseline report' };
  const key = digest(
    [o.startTree, baseline.command, ...tests.map((f) => `${f}\0${digest(readFileSync(path.join(o.repoPath, f)))}`)].join('\n'),
  ).slice(0, 16);
  const priv = ensurePrivateRunDir(o.runId);
  const kept = path.join(priv, 'provenance', `${key}.json`);
  if (existsSync(kept)) return JSON.parse(readFileSync(kept, 'utf8')) as { findings: FindingInput[]; note: string };
  // A folder of its own: an attempt that timed out may still be running beside its retry.
  const { dir: scratch, release } = ownScratch(path.join(priv, 'provenance-run'), key, (d) => ensurePrivateDir(priv, d));
  try {
    await exportTree(o.repoPath, o.startTree, scratch);
    const readable = linkDependencies(o.repoPath, scratch);
    for (const f of tests) {
      const to = path.join(scratch, f);
      rmSync(to, { recursive: true, force: true });
      mkdirSync(path.dirname(to), { recursive: true });
      cpSync(path.join(o.repoPath, f), to);
    }
    const report = await runOnStart(o, { scratch, readable, tests, command: baseline.command, runner: baseline.runner, key });
    if (typeof report === 'string') return { findings: [], note: `provenance of added tests not checked: ${report}` };
    const startHadFailures = baseline.report.tests.some((t) => t.status === 'failed' || t.status === 'error');
    const out = provenanceFindings(addedTests(baseline.report, report, scratch, o.repoPath), tests, startHadFailures);
    ensurePrivateDir(priv, path.dirname(kept));
    writePrivateFile(kept, JSON.stringify(out));
    return out;
  } finally {
    release();
  }
}

/** The baseline's command on the overlaid test files, in the sandbox: the report, or why there is none. */
async function runOnStart(
  o: ProvenanceOptions,
  r: { scratch: string; readable: string[]; tests: string[]; command: string; runner: string; key: string },
): Promise<TestReport | string> {
  const priv = ensurePrivateRunDir(o.runId);
  const { dir: reportDir, release } = ownScratch(path.join(priv, 'provenance-reports'), r.key, (d) =>
    mkdirSync(d, { recursive: true, mode: 0o700 }),
  );
  const logPath = path.join(priv, `provenance-${r.key}.log`);
  const line = acceptanceCommandLine(r.command, r.runner, r.tests);
  try {
    const { setup, proc } = await runInScratch({
      runId: o.runId,
      scratch: r.scratch,
      readable: r.readable,
      runner: r.runner,
      line,
      reportDir,
      logPath,
      pidFile: path.join(priv, `provenance-${path.basename(reportDir)}.pid.json`),
      header: `=== vigil: the run's added tests on the code it started from: ${line} ===`,
      sandbox: o.sandbox,
      timeoutMs: Math.max(1000, o.timeoutMs),
    });
    if (!setup.source) return `${r.runner} gives no per-test report`;
    if (proc.timedOut) return `the run on the start code did not finish within ${Math.round(o.timeoutMs / 1000)} s`;
    return readReport(setup, reportDir, logPath) ?? 'the runner gave no report on the start code';
  } finally {
    release();
  }
}
