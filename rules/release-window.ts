/**
 * The support window of releases (docs/operations.md, Upgrading Vigil under open runs): a run
 * started by release N replays on N+1; before N+2 it must finish or be stopped. Each run carries
 * the release that started it in the search attribute `VigilRelease` (the client stamps it at
 * start; a stream carries its run's); runs started by 0.4.0 or earlier carry none.
 *
 * `releaseWindow` says, for one open run, whether this code replays it: `vigil doctor` and
 * `vigil worker` list the runs it does not (cli/release-window.ts).
 *
 * Pure: no I/O.
 */

/**
 * The oldest release whose open runs this code replays. Runs of an older release may have taken
 * paths that this code's workflow deleted (workflows/run/eras.ts, `DEPRECATED_PATCHES`: every
 * patch there was deprecated by the release after this one). Moves on by one each release: the
 * release before the package's version (tests/unit/release-window.test.ts holds it).
 */
export const OLDEST_REPLAYED_RELEASE = '0.5.0';

/** The last release whose runs carry no release stamp: a run without one was started by it, or by an earlier build. */
export const LAST_UNSTAMPED_RELEASE = '0.4.0';

/** A release's numbers (`0.4.0`, `v0.4.0`, `0.5.0-rc.1` as 0.5.0), or null for anything else. */
export function releaseNumbers(release: string): [number, number, number] | null {
  const m = /^v?(\d{1,6})\.(\d{1,6})\.(\d{1,6})(?:[-+].*)?$/.exec(release.trim());
  return m ? [Number(m[1]), Number(m[2]), Number(m[3])] : null;
}

/** Negative when `a` is older than `b`, 0 when the same release, positive when newer; null when either is not a release. */
export function compareReleases(a: string, b: string): number | null {
  const x = releaseNumbers(a);
  const y = releaseNumbers(b);
  if (!x || !y) return null;
  for (let i = 0; i < 3; i += 1) if (x[i] !== y[i]) return (x[i] as number) - (y[i] as number);
  return 0;
}

/**
 * The release after `release` in the window's sense: the next minor release while the major is 0
 * (0.4.0 → 0.5.0), else the next major. Null for what is not a release.
 */
export function nextRelease(release: string): string | null {
  const n = releaseNumbers(release);
  if (!n) return null;
  return n[0] === 0 ? `0.${n[1] + 1}.0` : `${n[0] + 1}.0.0`;
}

/** Where one open run stands for this code. */
export type ReleaseStanding =
  /** Started within the window: it replays here. `lastRelease`: this is the last release that replays it (it must finish before the next one). */
  | { kind: 'replays'; release: string; lastRelease: boolean }
  /** Started by a release before the window: its history may need a path this code deleted. */
  | { kind: 'too_old'; release: string }
  /** No stamp: started by LAST_UNSTAMPED_RELEASE (it replays) or an earlier build (it may not); this code cannot tell which. */
  | { kind: 'unstamped' }
  /** A stamp that names no release (set by hand?): nothing can be said. */
  | { kind: 'unknown'; release: string };

/** Whether this code replays a run stamped `stamp` (null: no stamp), given the oldest release it replays. */
export function releaseWindow(stamp: string | null | undefined, oldest: string = OLDEST_REPLAYED_RELEASE): ReleaseStanding {
  if (stamp === null || stamp === undefined || stamp.trim() === '') {
    // Every unstamped run is LAST_UNSTAMPED_RELEASE's or older: too old once the window has moved past it.
    const c = compareReleases(LAST_UNSTAMPED_RELEASE, oldest);
    return c !== null && c < 0
      ? { kind: 'too_old', release: `${LAST_UNSTAMPED_RELEASE} or earlier (no release stamp)` }
      : { kind: 'unstamped' };
  }
  const c = compareReleases(stamp, oldest);
  if (c === null) return { kind: 'unknown', release: stamp };
  if (c < 0) return { kind: 'too_old', release: stamp };
  return { kind: 'replays', release: stamp, lastRelease: c === 0 };
}

/** One open run, as a listing shows it. */
export interface OpenRun {
  workflowId: string;
  /** Its VigilRelease search attribute (null: none). */
  release: string | null;
}

/** What the open runs mean for this code: the ones it may not replay, and how many must finish before the next release. */
export interface WindowReport {
  open: number;
  /** Runs started before the window (or unstamped ones that may be): each with the release it names. */
  outside: { workflowId: string; release: string; certain: boolean }[];
  /** Runs this code replays but the next release will not (started by the oldest release it replays). */
  finishBeforeNext: number;
  /** Runs whose stamp names no release. */
  unknown: { workflowId: string; release: string }[];
}

/** The open runs against the window (see `releaseWindow`). */
export function windowReport(runs: readonly OpenRun[], oldest: string = OLDEST_REPLAYED_RELEASE): WindowReport {
  const report: WindowReport = { open: runs.length, outside: [], finishBeforeNext: 0, unknown: [] };
  for (const r of runs) {
    const s = releaseWindow(r.release, oldest);
    if (s.kind === 'too_old') report.outside.push({ workflowId: r.workflowId, release: s.release, certain: true });
    else if (s.kind === 'unstamped') {
      report.outside.push({ workflowId: r.workflowId, release: `${LAST_UNSTAMPED_RELEASE} or earlier (no release stamp)`, certain: false });
      report.finishBeforeNext += 1;
    } else if (s.kind === 'unknown') report.unknown.push({ workflowId: r.workflowId, release: s.release });
    else if (s.lastRelease) report.finishBeforeNext += 1;
  }
  return report;
}
