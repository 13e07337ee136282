/**
 * A bench's scratch folder: everything a bench writes (its repositories, the dev server's
 * database, its agent) goes under one folder, removed at the end — also on Ctrl+C or SIGTERM (the
 * dev server is stopped first, at most 5 s), so a bench cut short does not leave hundreds of
 * repositories behind.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { DevServer } from '../workers/dev-server.js';

export interface Scratch {
  readonly dir: string;
  /** A new folder inside, named `<prefix>XXXXXX`. */
  mkdir(prefix: string): string;
  /** The dev server to stop before the folder goes, on a signal (null: none runs). */
  server: DevServer | null;
  /** Removes the folder (retried: agents still in flight may write into it for a moment). */
  remove(): void;
}

export function benchScratch(name: string): Scratch {
  const dir = mkdtempSync(path.join(os.tmpdir(), `vigil-${name}-`));
  const scratch: Scratch = {
    dir,
    mkdir: (prefix) => mkdtempSync(path.join(dir, prefix)),
    server: null,
    remove: () => rmSync(dir, { recursive: true, force: true, maxRetries: 10, retryDelay: 300 }),
  };
  let cleaningUp = false;
  for (const [sig, code] of [
    ['SIGINT', 130],
    ['SIGTERM', 143],
  ] as const) {
    // `on`, not `once`: execa's exit hook re-raises a signal nobody else listens to any more, which
    // would end the process before the cleanup. A second signal ends it at once.
    process.on(sig, () => {
      if (cleaningUp) process.exit(code);
      cleaningUp = true;
      process.stderr.write(`\n${name}: ${sig}: stopping the server and removing ${dir}\n`);
      void Promise.race([scratch.server?.stop() ?? Promise.resolve(), new Promise((r) => setTimeout(r, 5000))]).finally(() => {
        try {
          scratch.remove();
        } catch (err) {
          process.stderr.write(`${name}: could not remove ${dir}: ${err instanceof Error ? err.message : String(err)}\n`);
        }
        process.exit(code);
      });
    });
  }
  return scratch;
}
