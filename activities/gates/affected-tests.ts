/**
 * The I/O of affected tests (the rules are workflows/decisions/affected-tests.ts): the tree a test
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
  selectionCommand,
  type AffectedLang,
  type GoPackage,
  type ImportGraph,
  type TestPlan,
} from '../../workflows/decisions/affected-tests.js';
import { ensurePrivateRunDir } from '../artifacts.js';
import { changedPaths, git, workingTreeHash } from '../git.js';
import { writePrivateFile } from '../safe-files.js';

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
async function treeAndGraph(repoPath: string, lang: AffectedLang): Promise<{ tree: string; graph: ImportGraph } | null> {
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
    return { tree, graph: importGraph(texts, lang) };
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
}): Promise<TestScope> {
  const lang = SELECTABLE_RUNNERS[o.runner] ?? null;
  const none = { tree: null, graph: null, lang, map: null, changed: [] };
  if (lang === null) {
    const reason = `Vigil cannot select the tests of ${o.runner || 'this test command'}`;
    return { plan: { kind: 'full', reason }, ...none };
  }
  const now = await treeAndGraph(o.repoPath, lang);
  if (now === null) return { plan: { kind: 'full', reason: 'the tree or its files could not be read' }, ...none };
  if (o.scope === 'full') return { plan: { kind: 'full', reason: 'the full suite was asked for' }, ...now, lang, map: null, changed: [] };
  const map = readTestMap(o.runId);
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
  const sources = (changed ?? []).filter((f) => isSource(f, lang) && !isTestFile(f, lang) && existsSync(path.join(o.repoPath, f)));
  return { plan, ...now, lang, map, changed: sources };
}

/** After the run: a full run remakes the map, a partial one updates its failures. A run without a complete report leaves it as it was. */
export function keepTestMap(o: {
  runId: string;
  runner: string;
  command: string;
  iteration: number;
  scope: TestScope;
  report: TestReport | null;
}): void {
  const { scope, report } = o;
  if (!scope.tree || !scope.graph || !report || !report.complete) return;
  const map =
    scope.plan.kind === 'full'
      ? mapOfFullRun({ runner: o.runner, command: o.command, tree: scope.tree, iteration: o.iteration, graph: scope.graph, report })
      : scope.map
        ? mapAfterPartialRun(scope.map, scope.plan.files, report)
        : null;
  if (map) writePrivateFile(mapPath(o.runId), JSON.stringify(map));
}
