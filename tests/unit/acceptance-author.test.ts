/**
 * The acceptance role's pure parts (rules/acceptance-author.ts): the map of the
 * repository it is shown (bounded, without dependency and build folders), its prompt (the PRD, the
 * folder to write into, nothing of any test), and what the person reads once its tests are sealed.
 * The role in whole runs: tests/workflow/acceptance-from-prd.test.ts.
 */
import { describe, expect, it } from 'vitest';
import {
  acceptanceAuthorPrompt,
  draftedAcceptanceNote,
  MAX_ACCEPTANCE_DRAFTS,
  REPO_MAP_MAX_PATHS,
  repositoryMap,
  toothlessDraftNote,
  withRepositoryMap,
} from '../../rules/acceptance-author.js';
import { answerOf, REQUIRED_ANSWER } from '../../rules/contract.js';
import { parseScenario } from '../../schemas/scenario.js';

describe('repositoryMap', () => {
  it('lists the tracked files sorted, once each, without dependency, build and Vigil folders', () => {
    const listing = [
      'src/b.py',
      'src/a.py',
      'node_modules/x/index.js',
      '.vigil/runs/r/log',
      'dist/app.js',
      'src/a.py',
      'pkg/__pycache__/m.pyc',
      '',
    ].join('\n');
    expect(repositoryMap(listing)).toBe('src/a.py\nsrc/b.py');
  });

  it('is bounded in paths and characters, and says how many it left out', () => {
    const many = Array.from({ length: REPO_MAP_MAX_PATHS + 25 }, (_, i) => `src/f${String(i).padStart(4, '0')}.py`).join('\n');
    const map = repositoryMap(many);
    expect(map.split('\n')).toHaveLength(REPO_MAP_MAX_PATHS + 1);
    expect(map).toMatch(/… and 25 more file\(s\)$/);
    const long = repositoryMap(['a'.repeat(60), 'b'.repeat(60), 'c'.repeat(60)].join('\n'), 100, 130);
    expect(long).toBe(`${'a'.repeat(60)}\n${'b'.repeat(60)}\n… and 1 more file(s)`);
  });

  it('says so when the repository tracks nothing', () => {
    expect(repositoryMap('')).toBe('(the repository tracks no file yet)');
    expect(repositoryMap('node_modules/a.js\n')).toBe('(the repository tracks no file yet)');
  });
});

describe('acceptanceAuthorPrompt', () => {
  it('names the PRD and the folder to write into, asks for runnable tests of the PRD, and says the builder never sees them', () => {
    const p = acceptanceAuthorPrompt({ prdPath: '/prd/GAP.md' });
    expect(p).toContain('Read the PRD at /prd/GAP.md');
    expect(p).toContain('VIGIL_ACCEPTANCE_DIR');
    expect(p).toMatch(/read only: you may not change it/);
    expect(p).toMatch(/Never test the current code's bugs/);
    expect(p).toMatch(/builder never sees these files/);
    expect(withRepositoryMap(p, 'gap.py\ntest_gap.py')).toMatch(/## The repository's files\n\ngap\.py\ntest_gap\.py\n$/);
  });
});

describe('acceptanceAuthorPrompt, asked again', () => {
  it('says the earlier tests all passed before any work, and asks for tests that fail until the PRD is done', () => {
    const first = acceptanceAuthorPrompt({ prdPath: '/prd/GAP.md' });
    const again = acceptanceAuthorPrompt({ prdPath: '/prd/GAP.md', earlier: { passed: 3 } });
    expect(first).not.toMatch(/earlier tests/);
    expect(again.startsWith(first)).toBe(true);
    expect(again).toMatch(/Your earlier tests all passed \(3 of them\) on the repository as it is now, before any work/);
    expect(again).toMatch(/fail until the PRD is done, and pass once\nit is/);
    expect(MAX_ACCEPTANCE_DRAFTS).toBe(2);
  });
});

describe('toothlessDraftNote', () => {
  it('supervised: says the tests passed before any work, that the run does not rest on them, and what resume and stop do', () => {
    const note = toothlessDraftNote({ dir: '/v/private/r/acceptance', passed: 4, attempts: 2, supervised: true });
    expect(note).toContain('passed on the tree the run started with, before any work (4 passed), in each of its 2 calls');
    expect(note).toContain('so the run does not rest on them (they are in /v/private/r/acceptance, to read)');
    expect(note).toMatch(/`vigil resume` to build without acceptance tests.*`vigil stop`.*--acceptance DIR/);
  });
  it('perpetual: the builder starts now, judged without them; one call is said as one', () => {
    const note = toothlessDraftNote({ dir: '/d', passed: 1, attempts: 1, supervised: false });
    expect(note).toContain('(1 passed), in its one call');
    expect(note).toMatch(/The run is perpetual, so the builder starts now, judged without acceptance tests/);
    expect(note).not.toMatch(/vigil resume/);
  });
});

describe('draftedAcceptanceNote', () => {
  const base = { dir: '/home/v/.vigil/private/run-1/acceptance', files: ['test_wall.py', 'tests/test_edge.py'] };
  it('supervised: names the folder, the files and the starting tree, and says to read them, then resume or stop', () => {
    const note = draftedAcceptanceNote({ ...base, base: { verdict: 'fail', passed: 1, failed: 3 }, supervised: true });
    expect(note).toContain('sealed in /home/v/.vigil/private/run-1/acceptance: test_wall.py, tests/test_edge.py.');
    expect(note).toContain('On the tree the run started with they fail (1 passed, 3 failed).');
    expect(note).toMatch(/Read them there before the builder starts/);
    expect(note).toMatch(/`vigil resume`.*`vigil stop`.*--acceptance DIR/);
  });
  it('perpetual: says the builder starts now; an unjudged base and many files are said shortly', () => {
    const files = Array.from({ length: 23 }, (_, i) => `test_${i}.py`);
    const note = draftedAcceptanceNote({
      ...base,
      files,
      base: { verdict: 'inconclusive', passed: null, failed: null },
      supervised: false,
    });
    expect(note).toContain('they are inconclusive.');
    expect(note).toContain('test_19.py, and 3 more.');
    expect(note).toMatch(/The run is perpetual, so the builder starts now/);
    expect(note).not.toMatch(/vigil resume/);
    expect(draftedAcceptanceNote({ ...base, base: null, supervised: false })).not.toMatch(/starting tree|started with/);
  });
});

describe('the acceptance role in the agent contract and the scripted agent', () => {
  it('owes files, and the page says where', () => {
    expect(answerOf({ role: 'acceptance', parse: null, parseVote: false })).toBe('files');
    expect(REQUIRED_ANSWER.files).toContain('$VIGIL_ACCEPTANCE_DIR');
  });
  it('is a role a scenario can script', () => {
    const s = parseScenario({ version: 1, iterations: [], roles: { acceptance: { default: { writes: { 'test_a.py': 'x' } } } } });
    expect(s.roles.acceptance?.default?.writes).toEqual({ 'test_a.py': 'x' });
  });
});
