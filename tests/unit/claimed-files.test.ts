/**
 * The claimed-files rule (rules/claimed-files.ts): which files a completion claim
 * says it changed, and which of them the diff since the run's start does not hold. Adversaries:
 * a claim naming a file the run never touched, in prose, in a list, in the structured evidence.
 * Honest controls: a claim naming files it only read, ran or left alone, a method name, a URL,
 * a version, a base name of a changed file, Vigil's own notes.
 */
import { describe, expect, it } from 'vitest';
import { claimedPaths, claimFileTexts, claimsNotInDiff, describeFalseClaim, pathOf } from '../../rules/claimed-files.js';

describe('pathOf', () => {
  it('reads paths with a known extension, in backticks or quotes, with a line suffix', () => {
    expect(pathOf('`src/slug.py`')).toBe('src/slug.py');
    expect(pathOf('"package.json",')).toBe('package.json');
    expect(pathOf('src/a.ts:12:3')).toBe('src/a.ts');
    expect(pathOf('./lib/x.js.')).toBe('lib/x.js');
    expect(pathOf('.eslintrc.json')).toBe('.eslintrc.json');
  });
  it('refuses what only looks like a path', () => {
    for (const t of [
      'Foo.bar',
      'os.path',
      'json.dumps',
      '1.2.3',
      'https://x.io/a.py',
      '/etc/passwd.txt',
      '../a.py',
      'e.g.',
      'the',
      'Makefile',
    ])
      expect(pathOf(t), t).toBeNull();
  });
  it("never names Vigil's own files, which are not in the diff", () => {
    expect(pathOf('.vigil/CONTINUITY.md')).toBeNull();
    expect(pathOf('CONTINUITY.md')).toBeNull();
    expect(pathOf('learnings.md')).toBeNull();
  });
});

describe('claimedPaths', () => {
  it('reads change phrases: a verb, a few words, then a path or a list', () => {
    expect(claimedPaths(['Fixed the off-by-one error in src/slug.py and added tests.'])).toEqual(['src/slug.py']);
    expect(claimedPaths(['I modified `calc.py`, `util.py` and `README.md` to handle negatives.'])).toEqual([
      'calc.py',
      'util.py',
      'README.md',
    ]);
    expect(claimedPaths(['Files changed: a.py, b.py'])).toEqual(['a.py', 'b.py']);
    expect(claimedPaths(['Changes to lib/x.ts: handled the empty case'])).toEqual(['lib/x.ts']);
    expect(claimedPaths(['Updated:\n- src/a.js\n- src/b.js\nAll tests pass.'])).toEqual(['src/a.js', 'src/b.js']);
  });
  it('does not count a file the claim only read, ran or saw', () => {
    expect(claimedPaths(['Fixed the bug after reading tests/test_calc.py.'])).toEqual([]);
    expect(claimedPaths(['Fixed it as tests/test_calc.py expects.'])).toEqual([]);
    expect(claimedPaths(['I read tests/test_calc.py and ran pytest; all 3 pass.'])).toEqual([]);
    expect(claimedPaths(['The failure in test_calc.py is gone.'])).toEqual([]);
  });
  it('does not count a negated change', () => {
    expect(claimedPaths(['I did not modify tests/test_calc.py; I fixed calc.py.'])).toEqual(['calc.py']);
    expect(claimedPaths(["Haven't changed conftest.py."])).toEqual([]);
    expect(claimedPaths(['Completed without edited setup.cfg'])).toEqual([]);
  });
  it('stops at the sentence end and after six words', () => {
    expect(claimedPaths(['Fixed the bug. The log is in build.log'])).toEqual([]);
    expect(claimedPaths(['Fixed one two three four five six seven calc.py'])).toEqual([]);
    expect(claimedPaths(['Fixed one two three four five calc.py'])).toEqual(['calc.py']);
  });
  it('reads several texts, each path once, at most 20', () => {
    expect(claimedPaths(['fixed a.py', 'updated a.py and b.py'])).toEqual(['a.py', 'b.py']);
    const many = `changed ${Array.from({ length: 30 }, (_, i) => `f${i}.py`).join(', ')}`;
    expect(claimedPaths([many])).toHaveLength(20);
  });
});

describe('claimFileTexts', () => {
  it("reads a vigil_task_complete body's summary and evidence lines", () => {
    const body = JSON.stringify({
      by: 'vigil_task_complete',
      summary: 'fixed calc.py',
      evidence: ['updated README.md', 3],
      confidence: 0.9,
    });
    expect(claimFileTexts(body)).toEqual(['fixed calc.py', 'updated README.md']);
  });
  it('takes any other body as text', () => {
    expect(claimFileTexts('done: fixed calc.py')).toEqual(['done: fixed calc.py']);
  });
});

describe('claimsNotInDiff', () => {
  const changed = ['src/calc.py', 'README.md'];
  it('refuses a claimed file the diff does not hold (adversary)', () => {
    expect(claimsNotInDiff(['src/calc.py', 'src/util.py'], changed)).toEqual(['src/util.py']);
    expect(claimsNotInDiff(['tests/test_calc.py'], changed)).toEqual(['tests/test_calc.py']);
  });
  it('matches a base name or a full path of a changed file (honest control)', () => {
    expect(claimsNotInDiff(['calc.py', 'README.md', 'src/calc.py'], changed)).toEqual([]);
    // A base name matches a whole path segment only.
    expect(claimsNotInDiff(['alc.py'], changed)).toEqual(['alc.py']);
  });
  it('says what was claimed', () => {
    expect(describeFalseClaim(['a.py'])).toBe('claimed changes to a.py not in the diff since the run started');
    expect(describeFalseClaim(['1.py', '2.py', '3.py', '4.py', '5.py', '6.py', '7.py'])).toBe(
      'claimed changes to 1.py, 2.py, 3.py, 4.py, 5.py and 2 more not in the diff since the run started',
    );
  });
});
