/**
 * Keeps the embedded Postgres of a long-lived process (`vigil server`, `up`, `demo`) running: when
 * it dies (killed, crashed, stopped by the process that owned it) while this process still wants
 * it, it is started again on its cluster — on the same port when that is free —, with a line saying
 * so. When it keeps dying, the pause before each new start grows (none for the first death after
 * it stayed up a while, then 1 s, 2 s, 4 s … up to a minute), as it does while starting fails; a
 * server that stayed up `stableMs` is back to the first step. Another process that restarted it
 * first is reused instead (startEmbeddedPostgres reuses a server running for the cluster).
 */
import type { EmbeddedPostgres } from './postgres.js';

export interface WatchOptions {
  /** Starts (or reuses) the server for the same cluster. */
  start: () => Promise<EmbeddedPostgres>;
  /** After each restart: the migrations, the spool's catch-up. Its failure is a warning. */
  restarted?: (server: EmbeddedPostgres) => Promise<void>;
  say: (line: string) => void;
  warn: (line: string) => void;
  /** How often the server's process is checked (default 1 s). */
  pollMs?: number;
  /** The first pause after a quick death or a failed start (default 1 s), doubled each time up to `maxPauseMs` (default 60 s). */
  firstPauseMs?: number;
  maxPauseMs?: number;
  /** Up this long, a server's next death is restarted at once again (default 60 s). */
  stableMs?: number;
}

export interface WatchedPostgres {
  /** The server now (another object after each restart). */
  current(): EmbeddedPostgres;
  /** Restarts so far. */
  restarts(): number;
  /** Stops watching, then stops the server if this process owns it. */
  stop(): Promise<void>;
}

const errText = (err: unknown): string => (err instanceof Error ? err.message : String(err)).split('\n')[0] ?? '';
const secs = (ms: number): string => (ms < 10_000 ? (ms / 1000).toFixed(1) : (ms / 1000).toFixed(0));

export function watchEmbeddedPostgres(first: EmbeddedPostgres, opts: WatchOptions): WatchedPostgres {
  const pollMs = opts.pollMs ?? 1000;
  const firstPauseMs = opts.firstPauseMs ?? 1000;
  const maxPauseMs = opts.maxPauseMs ?? 60_000;
  const stableMs = opts.stableMs ?? 60_000;
  let server = first;
  let upSince = Date.now();
  let restarts = 0;
  /** Quick deaths and failed starts in a row: the next pause is firstPauseMs × 2^(streak - 1), none at 0. */
  let streak = 0;
  let stopping = false;
  let wake: (() => void) | null = null;

  const nap = (ms: number): Promise<void> =>
    new Promise((resolve) => {
      if (stopping) return resolve();
      const timer = setTimeout(done, ms);
      function done(): void {
        clearTimeout(timer);
        wake = null;
        resolve();
      }
      wake = done;
    });
  const pause = (): number => (streak === 0 ? 0 : Math.min(maxPauseMs, firstPauseMs * 2 ** (streak - 1)));

  /** Starts it again until it runs (or this process stops wanting it). */
  const restart = async (dead: EmbeddedPostgres): Promise<void> => {
    if (Date.now() - upSince >= stableMs) streak = 0;
    const wait = pause();
    opts.warn(`the embedded Postgres (pid ${dead.pid}) has exited; starting it again${wait ? ` in ${secs(wait)} s (it keeps dying)` : ''}`);
    for (;;) {
      await nap(pause());
      if (stopping) return;
      try {
        server = await opts.start();
      } catch (err) {
        streak += 1;
        opts.warn(`the embedded Postgres did not start again: ${errText(err)}; trying again in ${secs(pause())} s`);
        continue;
      }
      restarts += 1;
      streak += 1;
      upSince = Date.now();
      opts.say(
        `the embedded Postgres is back (pid ${server.pid}) at 127.0.0.1:${server.port}${server.reused ? ', started by another process' : ''}`,
      );
      if (stopping) return;
      await opts.restarted?.(server).catch((err: unknown) => opts.warn(`after the embedded Postgres came back: ${errText(err)}`));
      return;
    }
  };

  const loop = (async (): Promise<void> => {
    while (!stopping) {
      await nap(pollMs);
      if (!stopping && !server.running()) await restart(server);
    }
  })();

  return {
    current: () => server,
    restarts: () => restarts,
    async stop(): Promise<void> {
      stopping = true;
      wake?.();
      await loop;
      await server.stop();
    },
  };
}
