/**
 * The I/O of affected tests (the rules are rules/affected-tests.ts): the tree a test
 * run is about to test and its import graph, the run's test map in its private folder (remade by
 * every full run, its failures updated by each partial one), and the files changed since the map's
 * tree. Whatever cannot be read (no git, a tree gone, a broken map) runs the full suite.
 */
import { execFile } from 'node:child_process';
import { existsSync, readFileSync, realpathSync, statSync } from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { TestMapSchema, type TestMap, type TestReport } from '../../schemas/test-report.js';
import {
  SELECTABLE_RUNNERS,
  goGraph,
  importGraph,
  isSource,
  isTestFile,
  mapAfterPartialRun,
  mapOfFullRun,
  planTests,
  type AffectedLang,
  type GoPackage,
  type ImportGraph,
  type TestPlan,
} from '../../rules/affected-tests.js';
import { selectionCommand } from '../../rules/selection-command.js';
import { EVERY_TEST, parseZeroDiff, planPerTest, type FileChange, type PerTestPlan } from '../../rules/per-test-map.js';
import { ensurePrivateRunDir } from '../artifacts.js';
import { changedPaths, git, workingTreeHash } from '../git.js';
import { writePrivateFile } from '../../lib/safe-files.js';
import { coverageDir, notRecordable, readPytestMap } from '../../lib/gates/pytest-map.js';

/** Files larger than this are not read for imports (generated code, data); a graph of more files than MAX_FILES is not made. */
const MAX_FILE_BYTES = 512 * 1024;
const MAX_FILES = 20_000;
/** `go list` of the module: bounded in time and output. */
const GO_LIST_TIMEOUT_MS = 60_000;
const GO_LIST_MAX_BYTES = 64 * 1024 * 1024;
const GO_LIST_FORMAT = [
  '{{.ImportPath}}',
  '{{.Dir}}',
  '{{join .GoFiles " "}} {{join .CgoFiles " "}}',
  '{{join .TestGoFiles " "}} {{join .XTestGoFiles " "}}',
  '{{join .Imports " "}}',
  '{{join .TestImports " "}} {{join .XTestImports " "}}',
].join('\t');

export interface TestScope {
  plan: TestPlan;
  /** The tree tested and its graph (null: the runner's tests cannot be selected, or the tree could not be read). */
  tree: string | null;
  graph: ImportGraph | null;
  lang: AffectedLang | null;
  map: TestMap | null;
  /** The source files changed since the map's tree that are still there (a runner's related-tests mode is handed them). */
  changed: string[];
  /** pytest: the tests the per-test map selects (null: the selection, if any, is by test files). */
  perTest: Extract<PerTestPlan, { kind: 'tests' }> | null;
  /** pytest: this full run records the per-test map (coverage.py's folder); null: it does not. */
  record: string | null;
  /** pytest: why its tests are selected by imports, not by the per-test map (null: they are not, or not pytest). */
  byImports: string | null;
}

function mapPath(runId: string): string {
  return path.join(ensurePrivateRunDir(runId), 'tests-map.json');
}

/** The run's test map (null: none yet, or unreadable). */
export function readTestMap(runId: string): TestMap | null {
  try {
    return TestMapSchema.parse(JSON.parse(readFileSync(mapPath(runId), 'utf8')));
  } catch {
    return null;
  }
}

function readSmall(file: string): string | null {
  try {
    if (statSync(file).size > MAX_FILE_BYTES) return null;
    return readFileSync(file, 'utf8');
  } catch {
    return null;
  }
}

/**
 * The module's import graph as the go tool reads it: `go list` of every package, which reads the
 * files and go.mod and runs nothing of the repository's (no network: GOPROXY=off; no toolchain
 * download: GOTOOLCHAIN=local). Null when it fails (no module, a broken go.mod, go missing).
 */
export async function goListGraph(repoPath: string): Promise<ImportGraph | null> {
  try {
    const { stdout } = await promisify(execFile)('go', ['list', '-e', '-f', GO_LIST_FORMAT, './...'], {
      cwd: repoPath,
      env: {
        ...process.env,
        GOPROXY: 'off',
        GOTOOLCHAIN: 'local',
        GOFLAGS: (process.env.GOFLAGS ?? '').replace(/(^|\s)-json\b/g, ' ').trim(),
      },
      timeout: GO_LIST_TIMEOUT_MS,
      maxBuffer: GO_LIST_MAX_BYTES,
      killSignal: 'SIGKILL',
    });
    const root = realpathSync(repoPath);
    const words = (s: string | undefined): string[] => (s ?? '').split(' ').filter(Boolean);
    const packages: GoPackage[] = [];
    for (const line of stdout.split('\n')) {
      if (!line.trim()) continue;
      const [importPath, dir, files, tests, imports, testImports] = line.split('\t');
      if (!importPath || !dir) return null;
      const rel = path.relative(root, dir).split(path.sep).join('/');
      if (rel.startsWith('..')) continue; // a package outside the repository (a replace directive)
      const inRepo = (f: string): string => (rel ? `${rel}/${f}` : f);
      packages.push({
        importPath,
        files: words(files).map(inRepo),
        testFiles: words(tests).map(inRepo),
        imports: words(imports),
        testImports: words(testImports),
      });
    }
    return packages.length > 0 ? goGraph(packages) : null;
  } catch {
    return null;
  }
}

/** The tree now and the import graph of its source files (null: git or the go tool could not say). */
async function treeAndGraph(repoPath: string, lang: AffectedLang, runner: string): Promise<{ tree: string; graph: ImportGraph } | null> {
  try {
    const tree = await workingTreeHash(repoPath);
    if (lang === 'go') {
      const graph = await goListGraph(repoPath);
      return graph ? { tree, graph } : null;
    }
    const files = (await git(repoPath, ['ls-tree', '-r', '-z', '--name-only', tree])).split('\0').filter((f) => f && isSource(f, lang));
    if (files.length > MAX_FILES) return null;
    const texts = new Map<string, string>();
    for (const f of files) texts.set(f, readSmall(path.join(repoPath, f)) ?? '');
    return { tree, graph: importGraph(texts, lang, runner) };
  } catch {
    return null;
  }
}

/**
 * What a test run runs: the full suite (asked, or due) or the affected test files. `scope`: the
 * input's; the tree and graph are read for every run of a selectable runner, so a full run can
 * remake the map.
 */
export async function testScope(o: {
  runId: string;
  repoPath: string;
  runner: string;
  command: string;
  iteration: number;
  scope: 'full' | 'affected';
  fullEvery: number;
  /** A full run may record pytest's per-test map (the baseline and ordinary iterations; never a completion check, whose full run is its verdict). */
  mayRecord?: boolean;
}): Promise<TestScope> {
  const lang = SELECTABLE_RUNNERS[o.runner] ?? null;
  const none = { tree: null, graph: null, lang, map: null, changed: [], perTest: null, record: null, byImports: null };
  if (lang === null) {
    const reason = `Vigil cannot select the tests of ${o.runner || 'this test command'}`;
    return { plan: { kind: 'full', reason }, ...none };
  }
  const now = await treeAndGraph(o.repoPath, lang, o.runner);
  if (now === null) return { plan: { kind: 'full', reason: 'the tree or its files could not be read' }, ...none };
  const map = readTestMap(o.runId);
  const usable = map && map.runner === o.runner && map.command === o.command ? map : null;
  const pytest = o.runner === 'pytest' ? await perTestState(o.repoPath, usable, now) : null;
  const recordIf = (plan: TestPlan): string | null => {
    const pp = pytest?.plan;
    if (!pytest || plan.kind !== 'full' || !o.mayRecord || pp?.kind === 'tests') return null;
    // Nothing to select is no reason to record again (what changed is beyond any map); everything selected is.
    if (pp?.kind === 'none' && pp.reason !== EVERY_TEST) return null;
    return coverageDir() !== null && notRecordable(o.command, process.env as Record<string, string>) === null ? coverageDir() : null;
  };
  const scopeOf = (plan: TestPlan, extra: Partial<TestScope> = {}): TestScope => ({
    plan,
    ...now,
    lang,
    map: usable,
    changed: [],
    perTest: null,
    record: recordIf(plan),
    byImports: pytest ? byImportsWhy(o.command, usable, pytest.plan) : null,
    ...extra,
  });
  if (o.scope === 'full') return scopeOf({ kind: 'full', reason: 'the full suite was asked for' });
  let changed: string[] | null = null;
  if (map) changed = await changedPaths(o.repoPath, map.tree, now.tree).catch(() => null);
  const plan = planTests({
    runnerGraph: selectionCommand(o.runner, o.command, [], [])?.mode === 'related',
    lang,
    map,
    runner: o.runner,
    command: o.command,
    iteration: o.iteration,
    fullEvery: o.fullEvery,
    changed,
    ...now,
  });
  const sources = (changed ?? []).filter(
    (f) => isSource(f, lang) && !isTestFile(f, lang, o.runner) && existsSync(path.join(o.repoPath, f)),
  );
  // pytest with a fresh per-test map: the tests it selects, where a selection is not ruled out.
  const selectable = plan.kind === 'affected' || plan.bySelection === true;
  if (selectable && pytest?.plan && usable?.perTest) {
    const pp = pytest.plan;
    if (pp.kind === 'tests') {
      const files = [...new Set([...pp.whole, ...pp.ids.map((id) => id.split('::', 1)[0] as string)])].sort();
      const total = Object.keys(usable.tests).length;
      return scopeOf({ kind: 'affected', files, total }, { changed: sources, perTest: pp, byImports: null });
    }
    if (pp.kind === 'none') return scopeOf({ kind: 'full', reason: pp.reason, bySelection: true }, { changed: sources });
  }
  return scopeOf(plan, { changed: sources });
}

/** pytest's per-test map against the tree now: what it selects, or why it cannot (null: there is none). */
async function perTestState(
  repoPath: string,
  map: TestMap | null,
  now: { tree: string; graph: ImportGraph },
): Promise<{ plan: PerTestPlan | null }> {
  const pt = map?.perTest;
  if (!map || !pt) return { plan: null };
  let changed: string[] | null = null;
  let diffs: Map<string, FileChange> | null = null;
  const oldTexts = new Map<string, string>();
  try {
    changed = await changedPaths(repoPath, pt.tree, now.tree);
    const py = changed.filter((f) => f.endsWith('.py'));
    diffs = py.length
      ? parseZeroDiff(await git(repoPath, ['diff', '-U0', '--no-color', '--no-ext-diff', '--no-renames', pt.tree, now.tree, '--', ...py]))
      : new Map();
    // The old text of each changed file the map knows: which function a change is in.
    for (const f of py) if (pt.files.includes(f) && !isTestFile(f, 'py')) oldTexts.set(f, await git(repoPath, ['show', `${pt.tree}:${f}`]));
  } catch {
    changed = null;
  }
  return { plan: planPerTest({ map: pt, changed, diffs, graph: now.graph, failing: map.failing, dynamic: map.dynamic, oldTexts }) };
}

/** Why pytest's tests are selected by their imports rather than by the per-test map (null: they are not). */
function byImportsWhy(command: string, map: TestMap | null, plan: PerTestPlan | null): string | null {
  if (plan?.kind === 'tests') return null;
  if (plan?.kind === 'stale') return `the per-test map is stale: ${plan.reason}`;
  if (plan?.kind === 'none') return null;
  if (coverageDir() === null) return 'no per-test map: coverage.py is not installed (scripts/install-test-tools.sh)';
  const blocked = notRecordable(command, process.env as Record<string, string>);
  if (blocked) return `no per-test map: ${blocked}`;
  return map?.perTestProblem ? `no per-test map: ${map.perTestProblem}` : 'no per-test map yet';
}

/**
 * After the run: a full run remakes the map, a partial one updates its failures. A run without a
 * complete report leaves it as it was. pytest's per-test map is the one this run recorded, else
 * the one before it while still fresh (`keep`), else none (the next full run that may record, does).
 */
export function keepTestMap(o: {
  runId: string;
  runner: string;
  command: string;
  iteration: number;
  scope: TestScope;
  report: TestReport | null;
  /** The call's report folder, where a recording run's plugin left the map. */
  reportDir: string;
  repoPath: string;
}): void {
  const { scope, report } = o;
  if (!scope.tree || !scope.graph || !report || !report.complete) return;
  let map: TestMap | null = null;
  if (scope.plan.kind === 'full') {
    map = mapOfFullRun({ runner: o.runner, command: o.command, tree: scope.tree, iteration: o.iteration, graph: scope.graph, report });
    const recorded = scope.record ? readPytestMap(o.reportDir, o.repoPath) : null;
    if (recorded && 'files' in recorded) map.perTest = { tree: scope.tree, iteration: o.iteration, ...recorded };
    else if (scope.record) map.perTestProblem = recorded?.problem ?? 'the recording run wrote no map';
    else if (scope.map?.perTest && !scope.byImports) map.perTest = scope.map.perTest;
  } else if (scope.map) map = mapAfterPartialRun(scope.map, scope.plan.files, report);
  if (map) writePrivateFile(mapPath(o.runId), JSON.stringify(map));
}
