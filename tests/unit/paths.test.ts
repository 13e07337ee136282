/**
 * Run folder names (schemas/paths.ts): one folder per workflow id, injectively, so two runs whose
 * ids differ only in punctuation never share pid files, logs or prompts.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { runDirPath, safeSegment } from '../../schemas/paths.js';

describe('safeSegment', () => {
  it('keeps plain ids as they are', () => {
    expect(safeSegment('vigil-demo')).toBe('vigil-demo');
    expect(safeSegment('run_1.2-x')).toBe('run_1.2-x');
  });

  it('gives ids that differ only in punctuation different folders', () => {
    expect(safeSegment('a:1')).not.toBe(safeSegment('a_1'));
    expect(safeSegment('a/1')).not.toBe(safeSegment('a_1'));
    expect(safeSegment('a%3A1')).not.toBe(safeSegment('a:1'));
    expect(runDirPath('/r', 'a:1')).toBe('/r/.vigil/runs/a%3A1');
  });

  it('never yields a path separator, a dot folder or an empty name', () => {
    for (const id of ['..', '.', '.hidden', '/', '', 'a/../b']) {
      const s = safeSegment(id);
      expect(s).not.toContain('/');
      expect(s.startsWith('.')).toBe(false);
      expect(s.length).toBeGreaterThan(0);
    }
  });

  it('is injective and bounded on arbitrary ids (property)', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'grapheme', maxLength: 300 }), fc.string({ unit: 'grapheme', maxLength: 300 }), (a, b) => {
        const sa = safeSegment(a);
        expect(sa.length).toBeLessThanOrEqual(200);
        expect(sa).not.toContain('/');
        if (a !== b) expect(sa).not.toBe(safeSegment(b));
      }),
      { numRuns: 500, seed: 7 },
    );
  });

  it('keeps long ids apart by a hash of the whole id', () => {
    const long = 'x'.repeat(250);
    expect(safeSegment(`${long}a`)).not.toBe(safeSegment(`${long}b`));
    expect(safeSegment(`${long}a`).length).toBe(200);
  });
});
