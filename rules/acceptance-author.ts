/**
 * The acceptance role (knob `acceptanceFromPrd`, docs/agent-contract.md): an agent that writes the
 * run's acceptance tests from the PRD and a map of the repository before the first iteration, into
 * a private folder the builder never sees. What it is asked (`acceptanceAuthorPrompt`), the map of
 * the repository it is shown (`repositoryMap`, bounded), and what the person is told once they are
 * sealed (`draftedAcceptanceNote`).
 *
 * Pure: no clocks, randomness, environment or I/O.
 */

/**
 * How many times the acceptance role is asked when every test it wrote passes on the tree the run
 * started with (tests that cannot tell done from not done): once, then once more with that said.
 */
export const MAX_ACCEPTANCE_DRAFTS = 2;

/** At most this many paths in the map, and this many characters: a map, not the tree. */
export const REPO_MAP_MAX_PATHS = 400;
export const REPO_MAP_MAX_CHARS = 24_000;

/** Folders whose files say nothing about the code's shape (dependencies, caches, Vigil's own). */
const NOISE = /(^|\/)(node_modules|\.git|\.vigil|__pycache__|\.venv|venv|dist|build|target|\.pytest_cache|coverage)\//;

/**
 * The repository's tracked files (`git ls-files`, one per line) as the map the acceptance role
 * reads: dependency and build folders left out, sorted, at most `REPO_MAP_MAX_PATHS` paths and
 * `REPO_MAP_MAX_CHARS` characters, with a last line saying how many were left out.
 */
export function repositoryMap(listing: string, maxPaths = REPO_MAP_MAX_PATHS, maxChars = REPO_MAP_MAX_CHARS): string {
  const paths = [
    ...new Set(
      listing
        .split('\n')
        .map((l) => l.trim())
        .filter((l) => l !== '' && !NOISE.test(l)),
    ),
  ].sort();
  if (paths.length === 0) return '(the repository tracks no file yet)';
  const kept: string[] = [];
  let chars = 0;
  for (const p of paths) {
    if (kept.length >= maxPaths || chars + p.length + 1 > maxChars) break;
    kept.push(p);
    chars += p.length + 1;
  }
  const left = paths.length - kept.length;
  return left > 0 ? `${kept.join('\n')}\n… and ${left} more file(s)` : kept.join('\n');
}

/**
 * The acceptance role's prompt: the PRD's path, where to write (the folder the call's
 * `VIGIL_ACCEPTANCE_DIR` names), and how. The map of the repository is appended by the agent
 * activity (`repositoryMap`), which can read the repository.
 */
export function acceptanceAuthorPrompt(p: { prdPath: string; earlier?: { passed: number } }): string {
  const again = p.earlier
    ? [
        '',
        `Your earlier tests all passed (${p.earlier.passed} of them) on the repository as it is now, before any work on the PRD:`,
        'they cannot tell when the PRD is done. Write them again so that they fail until the PRD is done, and pass once',
        'it is. Those files are gone; start afresh.',
      ]
    : [];
  return [
    'You write the acceptance tests of a coding run, before any code is written for it.',
    '',
    `Read the PRD at ${p.prdPath}, and the repository (read only: you may not change it). Then write tests that pass`,
    'exactly when the PRD is done, as a person who knows the PRD but not the future code would write them:',
    '',
    '- Write every file into the folder named by the environment variable VIGIL_ACCEPTANCE_DIR, and nowhere else.',
    "  Paths inside it are the paths the files take in the repository's tree when they run: the tests are laid over",
    "  a copy of the builder's tree and run there with the repository's own test runner (pytest, unittest, node's",
    "  test runner, vitest, jest, go test), so follow its conventions and the repository's layout: test_*.py or",
    '  *_test.py, *.test.js / *.test.ts / *.spec.ts, *_test.go, at the place the runner finds them.',
    '- Test behaviour the PRD asks for, through the interface it names (functions, commands, files), with concrete',
    "  inputs and expected values, the edge cases it mentions included. Never test the current code's bugs, never",
    '  a test that passes whatever the code does, and never one that needs the network or a secret.',
    '- Give each test a name that says what it checks: the builder will learn which ones fail, by name only.',
    '- Every Python and JavaScript file must parse. At least one test file is required.',
    '',
    'The builder never sees these files, nor does any reviewer; a person may read them before the builder starts.',
    'When you are done, list the files you wrote, one per line, and stop.',
    ...again,
  ].join('\n');
}

/** The prompt with the map of the repository appended (the agent activity renders it). */
export function withRepositoryMap(prompt: string, map: string): string {
  return `${prompt}\n\n## The repository's files\n\n${map}\n`;
}

/**
 * What the person reads once the acceptance role's tests are sealed (supervised: the pause's
 * reason; perpetual: the notification): the folder, its files, how they fared on the tree the run
 * started with, and what to do.
 */
export function draftedAcceptanceNote(p: {
  dir: string;
  files: readonly string[];
  base: { verdict: string; passed: number | null; failed: number | null } | null;
  supervised: boolean;
}): string {
  const shown = p.files.slice(0, 20).join(', ') + (p.files.length > 20 ? `, and ${p.files.length - 20} more` : '');
  const counts =
    p.base !== null && p.base.passed !== null && p.base.failed !== null ? ` (${p.base.passed} passed, ${p.base.failed} failed)` : '';
  const base =
    p.base === null
      ? ''
      : ` On the tree the run started with they ${p.base.verdict === 'fail' ? 'fail' : `are ${p.base.verdict}`}${counts}.`;
  const head = `The acceptance agent wrote the run's acceptance tests from the PRD, sealed in ${p.dir}: ${shown}.${base}`;
  return p.supervised
    ? `${head} Read them there before the builder starts: they decide when the run is done, and the builder never sees them. ` +
        `\`vigil resume\` to build against them, or \`vigil stop\` and start again with --acceptance DIR (your own folder) if they ` +
        `are wrong.`
    : `${head} The run is perpetual, so the builder starts now; read them there to know what done rests on.`;
}

/**
 * What the person reads when every test the acceptance role wrote passed on the tree the run
 * started with, in each of its calls: the run does not rest on them (they would pass whatever the
 * builder does), and what it rests on instead. Supervised: the pause's reason; perpetual: the
 * notification.
 */
export function toothlessDraftNote(p: { dir: string; passed: number; attempts: number; supervised: boolean }): string {
  const head =
    `The acceptance agent's tests passed on the tree the run started with, before any work (${p.passed} passed), in ` +
    `${p.attempts === 1 ? 'its one call' : `each of its ${p.attempts} calls`}: they cannot tell when the PRD is done, so the run ` +
    `does not rest on them (they are in ${p.dir}, to read).`;
  return p.supervised
    ? `${head} \`vigil resume\` to build without acceptance tests (the tests gate, the code review, the checklist and the ` +
        `council still judge every claim), or \`vigil stop\` and start again with --acceptance DIR (your own folder).`
    : `${head} The run is perpetual, so the builder starts now, judged without acceptance tests (the tests gate, the code ` +
        `review, the checklist and the council).`;
}
