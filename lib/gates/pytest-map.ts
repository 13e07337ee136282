/**
 * pytest's per-test map (the rules are rules/per-test-map.ts): a full run records,
 * under coverage.py, which repository files each test executed; a partial run keeps only the
 * selected tests. Both are a small pytest plugin of Vigil's (`PLUGIN`, written into the call's
 * report folder) loaded with `-p vigil_test_map` through PYTEST_ADDOPTS, with coverage.py on
 * PYTHONPATH from Vigil's own cache (scripts/install-test-tools.sh); nothing is installed into the
 * repository or its environment, and the sandbox reads the cache read-only.
 *
 * Why coverage.py (pinned, COVERAGE_VERSION) and not pytest-testmon: coverage.py is the measuring
 * engine testmon itself is built on, kept by its author for two decades; its public API
 * (`Coverage.switch_context`, `CoverageData.contexts_by_lineno`) gives the per-test files directly,
 * so the map, its freshness and the selection stay Vigil's (the same rules as every other runner:
 * harness changes, staleness, the full suite at each check), where testmon keeps its own database
 * and decides the selection itself. pytest-cov's `--cov-context=test` would do the recording too,
 * but it reads the repository's own coverage settings and clashes with a suite that already runs
 * under it.
 *
 * Recording is costly (every line traced: 5× the suite's time on more-itertools, whose tests are
 * tight loops), so a full run records only when the run has no fresh map (the rules in
 * activities/gates/affected-tests.ts); a suite that already runs under coverage (`--cov`,
 * `coverage run`) is left as it is, selected by imports.
 */
import { existsSync, mkdirSync, readFileSync, readdirSync, realpathSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { z } from 'zod';

export const COVERAGE_VERSION = '7.17.3';

/** The folder coverage.py is installed in by scripts/install-test-tools.sh (null: not installed). */
export function coverageDir(env: NodeJS.ProcessEnv = process.env): string | null {
  const cache = env.VIGIL_TEST_TOOLS_DIR || path.join(env.XDG_CACHE_HOME || path.join(os.homedir(), '.cache'), 'vigil', 'test-tools');
  const dir = path.join(cache, `coverage-${COVERAGE_VERSION}`);
  return existsSync(path.join(dir, '.installed')) ? path.join(dir, 'lib') : null;
}

/** Why a pytest command is not recorded (null: it can be). */
export function notRecordable(command: string, env: Readonly<Record<string, string>>): string | null {
  const all = `${command} ${env.PYTEST_ADDOPTS ?? ''}`;
  if (/(?:^|\s)--cov\b|\bcoverage\s+run\b/.test(all)) return 'the suite already runs under coverage';
  if (/(?:^|\s)-n\s*\S|--numprocesses\b|--dist\b/.test(all)) return 'the suite runs in several processes (xdist)';
  return null;
}

/** The plugin: records the map (VIGIL_TEST_MAP_RECORD) and keeps the selection (VIGIL_TEST_MAP_SELECT), in the first pytest process only. */
export const PLUGIN = String.raw`"""Vigil's per-test map for pytest (written by Vigil; see lib/gates/pytest-map.ts)."""
import json
import os

_OUT = os.environ.get("VIGIL_TEST_MAP_OUT")
_ACTIVE = bool(_OUT) and not os.environ.get("VIGIL_TEST_MAP_SEEN")
os.environ["VIGIL_TEST_MAP_SEEN"] = "1"
_ROOT = os.path.realpath(os.environ.get("VIGIL_TEST_MAP_ROOT") or os.getcwd())
_cov = None
_problem = None

if _ACTIVE and os.environ.get("VIGIL_TEST_MAP_RECORD"):
    try:
        import coverage

        _cov = coverage.Coverage(
            data_file=None,
            config_file=False,
            source=[_ROOT],
            omit=["*/site-packages/*", "*/dist-packages/*", "*/.venv/*", "*/venv/*", "*/.tox/*", "*/.nox/*", "*/node_modules/*"],
        )
        _cov.start()
    except Exception as e:
        _cov = None
        _problem = ("coverage.py could not start: %s: %s" % (type(e).__name__, e))[:300]

import pytest  # noqa: E402


def _write(doc):
    target = os.path.join(_OUT, "test-map-%d.json" % os.getpid())
    with open(target + ".tmp", "w") as f:
        json.dump(doc, f)
    os.replace(target + ".tmp", target)


def pytest_collection_modifyitems(session, config, items):
    sel = os.environ.get("VIGIL_TEST_MAP_SELECT")
    if not _ACTIVE or not sel:
        return
    with open(sel) as f:
        want = json.load(f)
    tests = set(want.get("tests", []))
    files = set(want.get("files", []))
    keep, drop = [], []
    for item in items:
        (keep if item.nodeid in tests or item.nodeid.split("::", 1)[0] in files else drop).append(item)
    if drop:
        config.hook.pytest_deselected(items=drop)
        items[:] = keep


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item, nextitem):
    if _cov is not None:
        _cov.switch_context(item.nodeid)
    yield
    if _cov is not None:
        _cov.switch_context("")


def pytest_sessionfinish(session, exitstatus):
    if not _ACTIVE or not os.environ.get("VIGIL_TEST_MAP_RECORD"):
        return
    if _cov is None:
        _write({"problem": _problem or "coverage.py was not started"})
        return
    _cov.stop()
    data = _cov.get_data()
    files, tests, imports = [], {}, {}
    for measured in sorted(data.measured_files()):
        rel = os.path.relpath(os.path.realpath(measured), _ROOT)
        if rel.startswith(".."):
            continue
        index = len(files)
        files.append(rel.replace(os.sep, "/"))
        for line, contexts in (data.contexts_by_lineno(measured) or {}).items():
            for c in contexts:
                if c:
                    tests.setdefault(c, {}).setdefault(str(index), []).append(line)
                else:
                    imports.setdefault(index, []).append(line)
    ran = [item.nodeid for item in session.items]
    _write({
        "rootdir": str(session.config.rootpath),
        "files": files,
        "tests": {t: {i: sorted(l) for i, l in tests.get(t, {}).items()} for t in ran},
        "imports": {str(i): sorted(l) for i, l in imports.items()},
    })
`;

/** What the plugin wrote after a recording run. */
const RecordedSchema = z.union([
  z.object({ problem: z.string() }),
  z.object({
    rootdir: z.string(),
    files: z.array(z.string()),
    tests: z.record(z.string(), z.record(z.string(), z.array(z.number().int().min(0)))),
    imports: z.record(z.string(), z.array(z.number().int().min(0))),
  }),
]);

export interface PytestMapSetup {
  env: Record<string, string>;
  /** Folders the sandbox must let the run read (coverage.py's). */
  readable: string[];
}

/**
 * The environment that loads the plugin for a pytest run: `record` asks for the map; `select`,
 * the node ids and whole test files a partial run keeps. `dir`: the call's report folder.
 */
export function pytestMapSetup(o: {
  dir: string;
  repoPath: string;
  env: Readonly<Record<string, string>>;
  coverage: string | null;
  record: boolean;
  select: { tests: string[]; files: string[] } | null;
}): PytestMapSetup {
  const pluginDir = path.join(o.dir, 'vigil-py');
  mkdirSync(pluginDir, { recursive: true, mode: 0o700 });
  writeFileSync(path.join(pluginDir, 'vigil_test_map.py'), PLUGIN);
  const env: Record<string, string> = {
    PYTHONPATH: [pluginDir, ...(o.record && o.coverage ? [o.coverage] : []), ...(o.env.PYTHONPATH ? [o.env.PYTHONPATH] : [])].join(':'),
    PYTEST_ADDOPTS: `${o.env.PYTEST_ADDOPTS ?? ''} -p vigil_test_map`.trim(),
    VIGIL_TEST_MAP_OUT: o.dir,
    VIGIL_TEST_MAP_ROOT: o.repoPath,
  };
  if (o.record) env.VIGIL_TEST_MAP_RECORD = '1';
  if (o.select) {
    const file = path.join(o.dir, 'vigil-select.json');
    writeFileSync(file, JSON.stringify(o.select));
    env.VIGIL_TEST_MAP_SELECT = file;
  }
  return { env, readable: o.record && o.coverage ? [o.coverage] : [] };
}

/** The map a recording run left (a problem: the plugin could not record; null: it wrote nothing, or nothing readable). */
export function readPytestMap(
  dir: string,
  repoPath: string,
): { files: string[]; tests: Record<string, Record<string, number[]>>; imports: Record<string, number[]> } | { problem: string } | null {
  let names: string[];
  try {
    names = readdirSync(dir).filter((n) => /^test-map-\d+\.json$/.test(n));
  } catch {
    return null;
  }
  if (names.length !== 1) return null;
  try {
    const doc = RecordedSchema.parse(JSON.parse(readFileSync(path.join(dir, names[0] as string), 'utf8')));
    if ('problem' in doc) return doc;
    // Node ids are relative to pytest's rootdir: a map is kept only where that is the repository's root.
    if (realpathSync(doc.rootdir) !== realpathSync(repoPath)) return { problem: "pytest's rootdir is not the repository's root" };
    return { files: doc.files, tests: doc.tests, imports: doc.imports };
  } catch {
    return null;
  }
}
