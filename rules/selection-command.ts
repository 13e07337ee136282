/**
 * The command line that runs a selection of the tests (the selection itself is
 * rules/affected-tests.ts): each runner is handed it its own way. Pure; every name
 * put on the command line is checked first (SAFE_NAME), so an agent's file name cannot add a
 * shell word.
 */
import { SAFE_NAME } from './affected-tests.js';

/**
 * How a runner is handed a selection: test files appended (unittest: a name pattern per file), its own related-tests mode,
 * or the packages in place of `./...`.
 */
export type SelectionMode = 'files' | 'related' | 'packages';

const SIMPLE_COMMAND = /^[^;&|<>`$()\n]+$/;
const NPM_SCRIPT = /^(?:npm|pnpm|yarn)\s+(?:run\s+)?test\b/;
const VITEST_RUN = /(^|\s)(\S*vitest)\s+run(?=\s|$)/;

/**
 * The command that runs a selection, or null when the command cannot take one. `files`: the
 * selected test files (Go: package import paths); `changed`: the changed source files that still
 * exist, for a runner's own related-tests mode, which selects the tests that import them by its
 * own module graph (vitest: vite's, with the project's aliases and plugins; jest: its resolver,
 * with moduleNameMapper) on top of the test files named, which it always runs.
 *
 * - vitest run directly: `vitest related --run <changed> <files>` (an npm script: files appended);
 * - jest: `--findRelatedTests <changed> <files>` appended;
 * - go test: the selected packages in place of the one `./...`;
 * - unittest: a `-k` pattern per test file, its dotted module (`-k 'tests.test_add.*'`: discovery
 *   still imports every test module, and runs only the tests whose full name matches);
 * - pytest, node's test runner, and vitest through an npm script: the test files appended.
 */
export function selectionCommand(
  runner: string,
  command: string,
  files: readonly string[],
  changed: readonly string[],
): { command: string; mode: SelectionMode } | null {
  if (!SIMPLE_COMMAND.test(command) || [...files, ...changed].some((f) => !SAFE_NAME.test(f))) return null;
  const c = command.trim();
  const append = (args: string): string => (NPM_SCRIPT.test(c) ? (/ -- /.test(c) ? `${c} ${args}` : `${c} -- ${args}`) : `${c} ${args}`);
  const related = [...new Set([...changed, ...files])].join(' ');
  if (runner === 'go-test') {
    const parts = c.split(/\s+/);
    if (parts.filter((p) => p === './...').length !== 1) return null;
    return { command: parts.map((p) => (p === './...' ? files.join(' ') : p)).join(' '), mode: 'packages' };
  }
  if (runner === 'unittest') {
    if (files.some((f) => !f.endsWith('.py'))) return null;
    return { command: append(files.map((f) => `-k '${f.slice(0, -3).replace(/\//g, '.')}.*'`).join(' ')), mode: 'files' };
  }
  if (runner === 'jest') return { command: append(`--findRelatedTests ${related}`), mode: 'related' };
  if (runner === 'vitest' && !NPM_SCRIPT.test(c) && VITEST_RUN.test(c))
    return { command: `${c.replace(VITEST_RUN, '$1$2 related --run')} ${related}`, mode: 'related' };
  return { command: append(files.join(' ')), mode: 'files' };
}
