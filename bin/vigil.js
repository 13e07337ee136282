#!/usr/bin/env node
// Entry point of the `vigil` command. The CLI is written in TypeScript and compiled to dist/
// by `npm run build` (the bootstrap script does this on a fresh checkout; the published package
// ships dist/ already built).
import { existsSync } from 'node:fs';
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
await import(main);
