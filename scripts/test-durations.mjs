// Writes tests/support/durations.json (seconds per test file, longest first) from the durations
// vitest cached in the last full run: the order tests/support/sequencer.ts starts files in on a
// fresh checkout.
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';

const cacheRoot = path.join('node_modules', '.vite', 'vitest');
const found = readdirSync(cacheRoot, { withFileTypes: true })
  .filter((d) => d.isDirectory())
  .map((d) => path.join(cacheRoot, d.name, 'results.json'));
if (found.length === 0) throw new Error('no vitest results cached: run the whole suite first (npm test)');
const { results } = JSON.parse(readFileSync(found[0], 'utf8'));
const seconds = Object.fromEntries(
  results.map(([file, r]) => [file.replace(/^[^:]*:/, ''), Math.round((r.duration ?? 0) / 1000)]).sort((a, b) => b[1] - a[1]),
);
writeFileSync(path.join('tests', 'support', 'durations.json'), `${JSON.stringify(seconds, null, 1)}\n`);
console.log(`tests/support/durations.json: ${Object.keys(seconds).length} files`);
