/**
 * Well-known locations: the package root (works from sources and from dist/), VIGIL_HOME
 * (default ~/.vigil) for the dev server's database and demo files, and the tools folder where
 * setup installs the Temporal CLI.
 */
import { existsSync, readFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { safeSegment } from '../schemas/paths.js';

/** The name Vigil is published under (`vigil` on the registry is another project); the command stays `vigil`. */
export const PACKAGE_NAME = 'vigil-temporal';

let cachedRoot: string | undefined;

export function packageRoot(): string {
  if (cachedRoot) return cachedRoot;
  let dir = path.dirname(fileURLToPath(import.meta.url));
  for (;;) {
    const pkg = path.join(dir, 'package.json');
    if (existsSync(pkg)) {
      try {
        if ((JSON.parse(readFileSync(pkg, 'utf8')) as { name?: string }).name === PACKAGE_NAME) return (cachedRoot = dir);
      } catch {
        /* keep looking */
      }
    }
    const up = path.dirname(dir);
    if (up === dir) throw new Error(`cannot find the ${PACKAGE_NAME} package root`);
    dir = up;
  }
}

export function vigilHome(env: NodeJS.ProcessEnv = process.env): string {
  const home = env.VIGIL_HOME?.trim();
  return path.resolve(home || path.join(os.homedir(), '.vigil'));
}

/** A git checkout of Vigil's sources (bootstrap, `npm test`), as opposed to an installed package. */
export function isSourceCheckout(root = packageRoot()): boolean {
  return existsSync(path.join(root, '.git'));
}

/**
 * Where `vigil setup` installs tools: an installed package's folder may be read-only and is
 * replaced on every upgrade, so tools go to VIGIL_HOME/tools; a source checkout keeps its own
 * `.tools/` (ignored by git), as the bootstrap always has.
 */
export function toolsDir(env: NodeJS.ProcessEnv = process.env, root = packageRoot()): string {
  return isSourceCheckout(root) ? path.join(root, '.tools') : path.join(vigilHome(env), 'tools');
}

/** Every folder a tool installed earlier may be in: toolsDir() first, then VIGIL_HOME/tools. */
export function toolsDirs(env: NodeJS.ProcessEnv = process.env, root = packageRoot()): string[] {
  return [...new Set([toolsDir(env, root), path.join(vigilHome(env), 'tools')])];
}

/** The task queue workers poll and runs start on unless VIGIL_TASK_QUEUE says otherwise. */
export const DEFAULT_TASK_QUEUE = 'vigil';

/**
 * A run's private folder outside the repository (`$VIGIL_HOME/private/<run>/`), for what the
 * builder must not read: the checklist extraction and the held-out items' verification.
 */
export function privateRunDir(runId: string): string {
  return path.join(vigilHome(), 'private', safeSegment(runId));
}
