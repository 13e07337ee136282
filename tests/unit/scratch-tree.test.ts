/**
 * The scratch folders of acceptance runs and test provenance (activities/scratch-tree.ts): two
 * uses at once never share one, and neither removes the other's. An activity attempt that timed
 * out may still be running while Temporal's retry of it starts; before, each removed the whole
 * parent folder when it began and when it ended, so one pulled the tree from under the other.
 */
import { existsSync, mkdirSync, mkdtempSync, utimesSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { ownScratch } from '../../activities/scratch-tree.js';

describe('ownScratch', () => {
  const make = (d: string): void => void mkdirSync(d, { recursive: true });

  it('gives each of two uses at once a folder of its own, and each release removes only its own', () => {
    const parent = path.join(mkdtempSync(path.join(os.tmpdir(), 'vigil-scratch-')), 'provenance-run');
    const a = ownScratch(parent, 'key', make);
    writeFileSync(path.join(a.dir, 'test_a.py'), 'x\n');
    const b = ownScratch(parent, 'key', make);
    expect(b.dir).not.toBe(a.dir);
    expect(path.basename(b.dir)).toMatch(/^key-[0-9a-f]{8}$/);
    // The second use's start left the first's files where they were.
    expect(existsSync(path.join(a.dir, 'test_a.py'))).toBe(true);
    a.release();
    expect(existsSync(a.dir)).toBe(false);
    expect(existsSync(b.dir)).toBe(true);
    b.release();
    expect(existsSync(b.dir)).toBe(false);
  });

  it('removes what a dead worker left once it is a day old, and nothing younger', () => {
    const parent = mkdtempSync(path.join(os.tmpdir(), 'vigil-scratch-'));
    const old = path.join(parent, 'key-deadbeef');
    const young = path.join(parent, 'key-0badcafe');
    make(old);
    make(young);
    const dayAgo = (Date.now() - 25 * 3600_000) / 1000;
    utimesSync(old, dayAgo, dayAgo);
    const s = ownScratch(parent, 'key', make);
    expect(existsSync(old)).toBe(false);
    expect(existsSync(young)).toBe(true);
    s.release();
  });
});
