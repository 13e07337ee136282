/**
 * The silence watchdog of an agent call (knob `agentSilenceMinutes`): a call that has printed
 * nothing and changed nothing in its repository for that long is hung (a CLI waiting on a
 * prompt nobody will answer, a stalled stream) and is ended, whatever its overall timeout. The
 * judgement is a pure function (`silentForMs`, `isSilent`); the supervisor (supervised-call.ts)
 * feeds it the time of the call's last output and the newest change under the repository.
 *
 * How a change is seen: the newest ctime under the repository (`newestChange`), `.git` and
 * Vigil's own `.vigil` excluded, links not followed. The tree is walked only when output alone
 * says the call has been quiet for the whole limit, so a call that prints costs no walk at all
 * and a quiet one that writes files costs one walk per limit (15 minutes by default). The ctime,
 * not the mtime: a write, a rename, a deletion (its folder's ctime) and a chmod all move it, and no
 * process can set it back (`touch -d` sets the mtime only). inotify was not used: a recursive
 * watch costs one watch per folder (node_modules alone can exhaust the user's limit) and
 * Node's recursive fs.watch on Linux walks the whole tree at start anyway; this module also runs
 * in the supervisor daemon, which loads Node built-ins only.
 */
import { lstat, readdir } from 'node:fs/promises';
import path from 'node:path';

/** Folders never looked at: git's own (a hash or a checkpoint writes there) and Vigil's (the calls' logs and state files). */
export const SILENCE_EXCLUDED = new Set(['.git', '.vigil']);
/** A tree larger than this is not judged: its walk would cost too much, and the call keeps only its overall timeout. */
export const SILENCE_MAX_ENTRIES = 200_000;

export interface SilenceFacts {
  nowMs: number;
  /** When the call started. */
  startedMs: number;
  /** When it last printed (stdout or stderr); null: never. */
  lastOutputMs: number | null;
  /** The newest change seen in the repository (epoch ms); null: none seen, or not looked yet. */
  newestChangeMs: number | null;
  /** How long a call may stay silent; 0: never judged silent. */
  limitMs: number;
}

/**
 * How long the call has been silent: since its start, its last output or the newest change in
 * its repository, whichever is latest (a change dated after now counts as now: a clock that
 * went back never makes a call look silent).
 */
export function silentForMs(f: SilenceFacts): number {
  const change = f.newestChangeMs === null ? null : Math.min(f.newestChangeMs, f.nowMs);
  const last = Math.max(f.startedMs, f.lastOutputMs ?? f.startedMs, change ?? f.startedMs);
  return Math.max(0, f.nowMs - last);
}

/** Whether the call is silent: quiet on both counts for the whole limit (never with the watchdog off). */
export function isSilent(f: SilenceFacts): boolean {
  return f.limitMs > 0 && silentForMs(f) >= f.limitMs;
}

/** The limit as people read it: `15 min`, `1.5 min`, `6 s`. */
export function silenceDuration(limitMs: number): string {
  if (limitMs >= 60_000) return `${Number((limitMs / 60_000).toFixed(2))} min`;
  return `${Number((limitMs / 1000).toFixed(1))} s`;
}

/** What status, the log's footer and the next prompt say of a call the watchdog ended. */
export function silenceReason(limitMs: number): string {
  return `no output for ${silenceDuration(limitMs)}: ended`;
}

/**
 * The newest ctime (epoch ms) of anything under `root` (folders included, links not followed,
 * `SILENCE_EXCLUDED` skipped at every depth); null when it cannot tell: `root` unreadable, or more
 * than `maxEntries` entries. Asynchronous, so that a daemon supervising other calls goes on
 * relaying their output while it walks.
 */
export async function newestChange(root: string, maxEntries = SILENCE_MAX_ENTRIES): Promise<number | null> {
  let newest: number;
  try {
    newest = (await lstat(root)).ctimeMs;
  } catch {
    return null;
  }
  let seen = 0;
  const folders = [root];
  while (folders.length > 0) {
    const dir = folders.pop() as string;
    let entries;
    try {
      entries = await readdir(dir, { withFileTypes: true });
    } catch {
      continue; // gone meanwhile, or unreadable: its own ctime was counted
    }
    for (const e of entries) {
      if (SILENCE_EXCLUDED.has(e.name)) continue;
      if (++seen > maxEntries) return null;
      const full = path.join(dir, e.name);
      try {
        const st = await lstat(full);
        if (st.ctimeMs > newest) newest = st.ctimeMs;
      } catch {
        continue; // removed meanwhile: its folder's ctime says so
      }
      if (e.isDirectory()) folders.push(full);
    }
  }
  return newest;
}

export interface SilenceWatchOptions {
  limitMs: number;
  /** The repository the call works in. */
  root: string;
  startedMs: number;
  /** When the call last printed; null: never. */
  lastOutputMs: () => number | null;
  /** Called once, with the reason, when the call is found silent. */
  onSilent: (reason: string) => void;
}

/**
 * Watches one call: looks a few times per limit (at most every 5 s) and walks the tree only when
 * output alone says the call is silent. A tree it cannot judge counts as changed (the call keeps
 * its overall timeout). Returns a function that stops the watch.
 */
export function watchSilence(o: SilenceWatchOptions): () => void {
  let newest: number | null = null;
  let stopped = false;
  let timer: NodeJS.Timeout | undefined;
  const every = Math.max(200, Math.min(5000, o.limitMs / 4));
  const facts = (): SilenceFacts => ({
    nowMs: Date.now(),
    startedMs: o.startedMs,
    lastOutputMs: o.lastOutputMs(),
    newestChangeMs: newest,
    limitMs: o.limitMs,
  });
  const tick = async (): Promise<void> => {
    if (isSilent(facts())) {
      const seen = await newestChange(o.root);
      if (stopped) return;
      newest = Math.max(newest ?? 0, seen ?? Date.now());
      if (isSilent(facts())) {
        stopped = true;
        o.onSilent(silenceReason(o.limitMs));
        return;
      }
    }
    if (!stopped) timer = setTimeout(() => void tick(), every);
  };
  if (o.limitMs > 0) timer = setTimeout(() => void tick(), every);
  return () => {
    stopped = true;
    clearTimeout(timer);
  };
}
