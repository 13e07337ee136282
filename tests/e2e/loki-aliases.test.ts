/**
 * loki-mode aliases as a person migrating sees them: `vigil config --explain` run with LOKI_*
 * variables in the environment prints one stderr line per alias naming the Vigil knob, shows the
 * alias as the value's source, lets a VIGIL_* variable win, and refuses a bad alias value (exit 2).
 */
import { expect, it } from 'vitest';
import { assertBuilt } from '../support/harness.js';
import { runVigil, show } from './cli-helpers.js';

it('vigil config --explain reads LOKI_* aliases, says so on stderr, and shows the alias as the source', async () => {
  assertBuilt();
  const r = await runVigil(['config', '--explain'], {
    LOKI_MAX_ITERATIONS: '40',
    LOKI_COUNCIL_SIZE: '5',
    VIGIL_MAX_RETRIES: '7',
    LOKI_MAX_RETRIES: '99',
  });
  expect(r.code, show(r)).toBe(0);
  expect(r.stderr.trim().split('\n')).toEqual([
    'vigil: LOKI_MAX_ITERATIONS is read as knob maxIterations (VIGIL_MAX_ITERATIONS); loki-mode alias',
    'vigil: LOKI_MAX_RETRIES is ignored: VIGIL_MAX_RETRIES is set (knob maxRetries)',
    'vigil: LOKI_COUNCIL_SIZE is read as knob councilSize (VIGIL_COUNCIL_SIZE); loki-mode alias',
  ]);
  // The source column is cut to the terminal's width; --json has it whole.
  expect(r.stdout).toMatch(/^maxIterations +40 +env LOKI_MAX_ITERATIONS \(alias of/m);
  expect(r.stdout).toMatch(/^maxRetries +7 +env VIGIL_MAX_RETRIES$/m);
  expect(r.stdout).toMatch(/^councilSize +5 +env LOKI_COUNCIL_SIZE \(alias of/m);
  const js = await runVigil(['config', '--json'], { LOKI_COUNCIL_SIZE: '5' });
  expect(js.code, show(js)).toBe(0);
  expect((JSON.parse(js.stdout) as { name: string }[]).find((x) => x.name === 'councilSize')).toMatchObject({
    value: 5,
    source: 'env',
    detail: 'LOKI_COUNCIL_SIZE (alias of VIGIL_COUNCIL_SIZE)',
  });

  const bad = await runVigil(['config', '--json'], { LOKI_AUTONOMY_MODE: 'checkpoint' });
  expect(bad.code, show(bad)).toBe(2);
  expect(bad.stderr).toContain('invalid value for knob "autonomyMode" (from LOKI_AUTONOMY_MODE (alias of VIGIL_AUTONOMY_MODE))');
});
