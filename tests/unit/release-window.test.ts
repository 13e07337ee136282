/**
 * The release window (rules/release-window.ts) and its words (cli/release-window.ts):
 * which open runs this release may not replay, judged from the `VigilRelease` stamp. A run
 * stamped by a release before the window (the adversary: a stale run an upgrade would strand) is
 * named; runs within it (the honest control) are not; an unstamped run is said to be 0.4.0 or
 * earlier, never passed off as replayable for certain; a stamp that names no release is shown as
 * such.
 */
import { describe, expect, it } from 'vitest';
import { OUTSIDE_FIX, packageRelease, windowCheck, windowLine } from '../../cli/release-window.js';
import {
  compareReleases,
  LAST_UNSTAMPED_RELEASE,
  nextRelease,
  OLDEST_REPLAYED_RELEASE,
  releaseWindow,
  windowReport,
} from '../../rules/release-window.js';

describe('releases', () => {
  it('compares by number, not as text, and refuses what is not a release', () => {
    expect(compareReleases('0.10.0', '0.9.0')).toBeGreaterThan(0);
    expect(compareReleases('0.4.0', 'v0.4.0')).toBe(0);
    expect(compareReleases('0.5.0-rc.1', '0.5.0')).toBe(0);
    expect(compareReleases('1.0.0', '0.99.9')).toBeGreaterThan(0);
    expect(compareReleases('0.3.0', '0.4.0')).toBeLessThan(0);
    expect(compareReleases('latest', '0.4.0')).toBeNull();
    expect(compareReleases('0.4', '0.4.0')).toBeNull();
  });

  it('the next release: the next minor before 1.0, then the next major', () => {
    expect(nextRelease('0.4.0')).toBe('0.5.0');
    expect(nextRelease('0.4.2')).toBe('0.5.0');
    expect(nextRelease('1.3.0')).toBe('2.0.0');
    expect(nextRelease('x')).toBeNull();
  });
});

describe('releaseWindow', () => {
  it('a run of the oldest release replays, and is the last release that does', () => {
    expect(releaseWindow(OLDEST_REPLAYED_RELEASE)).toEqual({ kind: 'replays', release: OLDEST_REPLAYED_RELEASE, lastRelease: true });
    expect(releaseWindow('0.5.0', '0.4.0')).toEqual({ kind: 'replays', release: '0.5.0', lastRelease: false });
  });

  it('a run of an older release is too old', () => {
    expect(releaseWindow('0.3.0', '0.4.0')).toEqual({ kind: 'too_old', release: '0.3.0' });
    expect(releaseWindow('0.4.9', '0.5.0')).toEqual({ kind: 'too_old', release: '0.4.9' });
  });

  it('an unstamped run is the last unstamped release or earlier: uncertain inside its window, too old after it', () => {
    expect(LAST_UNSTAMPED_RELEASE).toBe('0.4.0');
    expect(releaseWindow(null, '0.4.0')).toEqual({ kind: 'unstamped' });
    expect(releaseWindow('', '0.4.0')).toEqual({ kind: 'unstamped' });
    expect(releaseWindow(undefined, '0.5.0')).toEqual({ kind: 'too_old', release: '0.4.0 or earlier (no release stamp)' });
  });

  it('a stamp that names no release is unknown, not replayable', () => {
    expect(releaseWindow('tuesday', '0.4.0')).toEqual({ kind: 'unknown', release: 'tuesday' });
  });
});

describe('the open runs against the window', () => {
  const runs = [
    { workflowId: 'fresh', release: '0.5.0' },
    { workflowId: 'last-call', release: '0.4.0' },
    { workflowId: 'stale', release: '0.3.0' },
    { workflowId: 'unstamped', release: null },
    { workflowId: 'odd', release: 'main' },
  ];

  it('names the stale run as certain, the unstamped one as uncertain, and counts the ones the next release drops', () => {
    const r = windowReport(runs, '0.4.0');
    expect(r.open).toBe(5);
    expect(r.outside).toEqual([
      { workflowId: 'stale', release: '0.3.0', certain: true },
      { workflowId: 'unstamped', release: '0.4.0 or earlier (no release stamp)', certain: false },
    ]);
    expect(r.finishBeforeNext).toBe(2); // last-call, and unstamped (if 0.4.0 started it)
    expect(r.unknown).toEqual([{ workflowId: 'odd', release: 'main' }]);
  });

  // The window of this code (OLDEST_REPLAYED_RELEASE, 0.5.0 in 0.6.0): an unstamped run is certainly before it.
  const now = [
    { workflowId: 'fresh', release: '0.6.0' },
    { workflowId: 'last-call', release: '0.5.0' },
    { workflowId: 'stale', release: '0.4.0' },
    { workflowId: 'unstamped', release: null },
    { workflowId: 'odd', release: 'main' },
  ];

  it('a ✗ with what to do when a run certainly started before the window', () => {
    const c = windowCheck(windowReport(now, OLDEST_REPLAYED_RELEASE));
    expect(c.ok).toBe(false);
    expect(c.detail).toContain('2 of 5 open runs started before the window (this release replays runs started by 0.5.0 or later)');
    expect(c.detail).toContain('stale (0.4.0)');
    expect(c.detail).toContain('unstamped (0.4.0 or earlier (no release stamp))');
    expect(c.detail).not.toContain('fresh');
    expect(c.detail).not.toContain('last-call');
    expect(c.detail).toContain('1 must finish or be stopped before 0.7.0');
    expect(c.detail).toContain('odd: main');
    expect(c.fix).toBe(OUTSIDE_FIX);
    expect(OUTSIDE_FIX).toContain('temporal workflow terminate --workflow-id <id>');
    expect(windowLine(windowReport(now, OLDEST_REPLAYED_RELEASE))).toMatch(
      /^open runs: 2 of 5 open runs started before the window .* — let them finish/,
    );
  });

  it('the control: runs within the window are a ✓ that names none of them', () => {
    const c = windowCheck(windowReport([now[0] as (typeof now)[number], now[1] as (typeof now)[number]], OLDEST_REPLAYED_RELEASE));
    expect(c).toEqual({
      ok: true,
      detail:
        '2 open runs, none started before the window (this release replays runs started by 0.5.0 or later); 1 must finish or be stopped before 0.7.0',
      fix: null,
    });
    expect(windowCheck(windowReport([], OLDEST_REPLAYED_RELEASE))).toEqual({ ok: true, detail: 'no open runs', fix: null });
  });

  it('the window moves with the package: this release replays the runs of the release before it', () => {
    expect(nextRelease(OLDEST_REPLAYED_RELEASE)).toBe(packageRelease());
  });
});
