#!/usr/bin/env node
// Entry point of the `vigil` command. The CLI is written in TypeScript and compiled to dist/
// by `npm run build` (the bootstrap script does this on a fresh checkout).
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const main = fileURLToPath(new URL('../dist/cli/main.js', import.meta.url));
if (!existsSync(main)) {
  process.stderr.write('vigil: the CLI is not built yet. Run `npm run bootstrap` (or `npm run build`) first.\n');
  process.exit(2);
}
await import(main);
