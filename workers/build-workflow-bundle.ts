/**
 * The last step of `npm run build`, run from dist/ right after tsc: writes the prebuilt workflow
 * bundle and its manifest (see workflow-bundle.ts) next to the freshly compiled code.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { packageRoot } from '../lib/paths.js';
import { workflowBundleOptions, workflowsPath } from './worker.js';
import { BUNDLE_FILE, writePrebuiltBundle } from './workflow-bundle.js';

const distDir = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
if (!workflowsPath().startsWith(distDir + path.sep))
  throw new Error(`build-workflow-bundle: run the compiled script from dist/, not ${workflowsPath()}`);

const pkg = JSON.parse(readFileSync(path.join(packageRoot(), 'package.json'), 'utf8')) as { dependencies?: Record<string, string> };
const quiet = (): void => {};
const started = Date.now();
const manifest = await writePrebuiltBundle({
  distDir,
  ...workflowBundleOptions(),
  dependencies: Object.keys(pkg.dependencies ?? {}),
  logger: {
    trace: quiet,
    debug: quiet,
    info: quiet,
    log: quiet,
    warn: (m: string) => console.warn(m),
    error: (m: string) => console.error(m),
  },
});
process.stdout.write(
  `build: ${path.relative(process.cwd(), path.join(distDir, BUNDLE_FILE)) || BUNDLE_FILE} from ${Object.keys(manifest.inputs).length} compiled files ` +
    `(${Object.entries(manifest.packages)
      .map(([n, v]) => `${n}@${v}`)
      .join(', ')}) in ${((Date.now() - started) / 1000).toFixed(1)} s\n`,
);
