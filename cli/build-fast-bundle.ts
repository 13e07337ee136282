/**
 * A step of `npm run build`, run from dist/ after tsc: bundles the bin entry's pre-dispatch
 * (dist/cli/fast.js and the modules it loads for `status`, `pause`, `resume`, `stop` and `input`
 * with the light client) into one file, dist/cli/fast.bundle.js. Node resolves, reads and compiles
 * one module instead of some twenty, which saves ~20 ms of a command that takes ~110 ms.
 *
 * What the pre-dispatch loads only off its usual path stays a module of its own, loaded from
 * dist/cli/ as before: the endpoint from a profile or TLS settings and the SDK's client for a
 * payload codec key (connection.js, with envconfig and @temporalio/client), the host hint of a
 * hosted run (hosts.js). Their errors reach the bundle's copy of the code: CliError and
 * UpdateRejectedError therefore match by name, not by class identity (cli/errors.ts).
 */
import { statSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';

const cliDir = path.dirname(fileURLToPath(import.meta.url));
const entry = path.join(cliDir, 'fast.js');
const outfile = path.join(cliDir, 'fast.bundle.js');
const LOADED_SEPARATELY = ['./connection.js', './hosts.js'];

const started = Date.now();
const result = await build({
  entryPoints: [entry],
  outfile,
  bundle: true,
  format: 'esm',
  platform: 'node',
  target: 'node20',
  external: LOADED_SEPARATELY,
  metafile: true,
  logLevel: 'warning',
  legalComments: 'none',
  banner: { js: '// Built by `npm run build` (cli/build-fast-bundle.ts) from dist/cli/fast.js and what it loads; do not edit.' },
});
// The quick path must not grow a package dependency (the SDK's client alone takes ~0.7 s to load).
const packages = Object.keys(result.metafile.inputs).filter((p) => p.includes('node_modules/'));
if (packages.length > 0)
  throw new Error(`build-fast-bundle: the CLI's quick path must not load packages, but bundles ${packages.join(', ')}`);
process.stdout.write(
  `build: ${path.relative(process.cwd(), outfile)} from ${Object.keys(result.metafile.inputs).length} compiled files ` +
    `(${Math.round(statSync(outfile).size / 1024)} KiB) in ${((Date.now() - started) / 1000).toFixed(1)} s\n`,
);
