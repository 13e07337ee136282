/**
 * Well-known locations: the package root (works from sources and from dist/), VIGIL_HOME
 * (default ~/.vigil) for the dev server's database and demo files, and the project-local tools
 * folder where setup installs the Temporal CLI.
 */
import { existsSync, readFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

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

export function toolsDir(): string {
  return path.join(packageRoot(), '.tools');
}
