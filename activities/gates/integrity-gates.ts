/**
 * The gates that hold the run to what it started with (rules/integrity.ts and
 * gaming.ts hold the rules): `test_mutation` compares the test files and the harness with the run
 * start tree (a deleted, skipped or rewritten test, a changed harness: each finding high, so it
 * blocks), and `test_gaming` reads the product code the run added for code that games its tests
 * (each finding high). Both read files only: the start tree's through git (never a command of the
 * repository's, lib/git-env.ts), the working tree's as capped, link-refusing reads. A start
 * tree git does not have makes the comparison impossible: inconclusive, never a pass.
 */
import { createHash } from 'node:crypto';
import type { FindingInput, GateResultInput } from '../../schemas/gates.js';
import { failingInputs, gamingFindings, type GamingKind } from '../../rules/gaming.js';
import { integrityFindings, isTestPath, type FileDelta, type IntegrityKind } from '../../rules/integrity.js';
import { git, objectExists, readAtTree } from '../git.js';
import { readBaseline } from '../tests.js';
import { finding, gateResult, mutationProblems, readRepoText, scopeFiles } from './test-integrity.js';
import { testProvenance, type ProvenanceOptions } from './test-provenance.js';

const TREEISH = /^[A-Za-z0-9][A-Za-z0-9._/^~{}@-]{0,199}$/;
const LABELS: Record<IntegrityKind | GamingKind, string> = {
  test_deleted: 'baseline test deleted',
  skip_added: 'skip marker added',
  assertion_changed: 'baseline assertion changed',
  harness_changed: 'test harness changed',
  reads_caller: "reads its caller's frame",
  probes_runner: 'probes for the test runner',
  exits: 'exits the process',
  opens_tests: 'reads test files',
  hard_codes_input: 'hard-codes a failing input',
};

async function startTreeProblem(repoPath: string, startTree: string | null): Promise<string | null> {
  if (startTree === null) return 'the run start tree is unknown; nothing to compare with';
  const ok = TREEISH.test(startTree) && (await objectExists(repoPath, `${startTree}^{tree}`));
  return ok ? null : 'the run start tree is not in the repository; cannot compare';
}

async function deltas(repoPath: string, startTree: string, files: readonly string[]): Promise<FileDelta[]> {
  const out: FileDelta[] = [];
  for (let i = 0; i < files.length; i += 8) {
    const batch = await Promise.all(
      files.slice(i, i + 8).map(async (file) => {
        const now = readRepoText(repoPath, file);
        return { file, before: await readAtTree(repoPath, startTree, file), after: now.kind === 'text' ? now.text : null };
      }),
    );
    out.push(...batch);
  }
  return out;
}

const asFinding = (
  gate: 'test_mutation' | 'test_gaming',
  f: { kind: IntegrityKind | GamingKind; id: string; file: string; line: number | null; message: string },
): FindingInput => {
  // A short id a person can type (`vigil waive <run> assertion_changed-1a2b3c4d`), stable while the change stands.
  const id = `${f.kind}-${createHash('sha256').update(f.id).digest('hex').slice(0, 8)}`;
  return { ...finding(gate, 'high', f.file, f.line, `${LABELS[f.kind]} (${id}): ${f.message}`), id };
};

/**
 * Test integrity from the run's start: `files` are those changed since `startTree`. With
 * `provenance` (the run's id; what is left of the gate's budget), the tests the run added are
 * also run on the code it started from (activities/gates/test-provenance.ts).
 */
export async function testIntegrityGate(opts: {
  repoPath: string;
  files: string[];
  startTree: string | null;
  provenance?: Omit<ProvenanceOptions, 'repoPath' | 'startTree' | 'files'> | undefined;
}): Promise<GateResultInput> {
  const startedAt = Date.now();
  const scope = scopeFiles(opts.files, () => true);
  const problem = await startTreeProblem(opts.repoPath, opts.startTree);
  if (problem !== null) return { ...gateResult('test_mutation', [], '', startedAt), verdict: 'inconclusive', reason: problem };
  const ds = await deltas(opts.repoPath, opts.startTree as string, scope);
  const high = integrityFindings(ds).map((f) => asFinding('test_mutation', f));
  // The test files' density (low, advisory) as before.
  const low = mutationProblems(ds.filter((d) => isTestPath(d.file))).filter((f) => f.severity !== 'high' && f.severity !== 'critical');
  const tests = scope.filter(isTestPath).length;
  const provenance = opts.provenance
    ? await testProvenance({ ...opts.provenance, repoPath: opts.repoPath, startTree: opts.startTree as string, files: scope })
    : { findings: [], note: '' };
  return gateResult(
    'test_mutation',
    [...high, ...provenance.findings, ...low],
    `${tests} test file(s) and the harness compared with the run start; no change to a baseline test${provenance.note ? `; ${provenance.note}` : ''}`,
    startedAt,
  );
}

/** The tests that failed when the run started (from its baseline), with the literals of their assertions. */
async function failingAtStart(repoPath: string, runId: string, startTree: string): Promise<ReturnType<typeof failingInputs>> {
  const failing = (readBaseline(runId)?.report?.tests ?? []).filter((t) => t.status === 'failed' || t.status === 'error').map((t) => t.id);
  if (failing.length === 0) return [];
  const names = (await git(repoPath, ['ls-tree', '-r', '-z', '--name-only', startTree])).split('\0').filter((f) => f && isTestPath(f));
  const files = await Promise.all(
    names.slice(0, 500).map(async (file) => ({ file, text: (await readAtTree(repoPath, startTree, file)) ?? '' })),
  );
  return failingInputs(files, failing.slice(0, 50));
}

/** Code that games its tests, in the product files changed since `startTree`. */
export async function testGamingGate(opts: {
  repoPath: string;
  runId: string;
  files: string[];
  startTree: string | null;
}): Promise<GateResultInput> {
  const startedAt = Date.now();
  const scope = scopeFiles(opts.files, (f) => !isTestPath(f));
  const problem = await startTreeProblem(opts.repoPath, opts.startTree);
  if (problem !== null) return { ...gateResult('test_gaming', [], '', startedAt), verdict: 'inconclusive', reason: problem };
  const ds = await deltas(opts.repoPath, opts.startTree as string, scope);
  const failing = await failingAtStart(opts.repoPath, opts.runId, opts.startTree as string);
  const found = gamingFindings(ds, failing).map((f) => asFinding('test_gaming', f));
  return gateResult('test_gaming', found, `${scope.length} product file(s) read for code that games its tests; none`, startedAt);
}
