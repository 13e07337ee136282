#!/usr/bin/env node
// Entry point of the `vigil` command. The CLI is written in TypeScript and compiled to dist/
// by `npm run build` (the bootstrap script does this on a fresh checkout; the published package
// ships dist/ already built). `vigil status`, `pause`, `resume`, `stop` and `input` with a plainly
// well-formed command line are run by dist/cli/fast.js without loading the whole program (from
// dist/cli/fast.bundle.js, the same code in one file, unless that is missing or older than the
// compiled code, as after a bare `tsc`); every other command line goes to dist/cli/main.js
// (commander).
import { existsSync, statSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const main = fileURLToPath(new URL('../dist/cli/main.js', import.meta.url));
if (!existsSync(main)) {
  process.stderr.write(
    existsSync(fileURLToPath(new URL('../tsconfig.json', import.meta.url)))
      ? 'vigil: the CLI is not built yet. Run `npm run bootstrap` (or `npm run build`) first.\n'
      : 'vigil: this installation lacks its compiled code (dist/). Reinstall it: npm install -g vigil-temporal\n',
  );
  process.exit(2);
}
const fastFile = fileURLToPath(new URL('../dist/cli/fast.js', import.meta.url));
const bundleFile = fileURLToPath(new URL('../dist/cli/fast.bundle.js', import.meta.url));
const bundled = statSync(bundleFile, { throwIfNoEntry: false });
const { parseFast, runFast } = await import(bundled && bundled.mtimeMs >= statSync(fastFile).mtimeMs ? bundleFile : fastFile);
const fast = parseFast(process.argv.slice(2));
if (fast) process.exit(await runFast(fast));
await import(main);
