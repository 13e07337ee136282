/**
 * docs/knobs.md is generated (scripts/knob-docs.ts, `npm run docs:knobs`): the committed page is
 * what the registry, the sections, the profiles and the page text render today.
 */
import { readFileSync } from 'node:fs';
import { expect, it } from 'vitest';
import { KNOBS_DOC_PATH, renderKnobsDoc } from '../../scripts/knob-docs.js';
import { KNOB_SECTIONS } from '../../schemas/knob-sections.js';

it('the committed docs/knobs.md is the generated one (run `npm run docs:knobs` after changing a knob)', () => {
  expect(readFileSync(KNOBS_DOC_PATH, 'utf8')).toBe(renderKnobsDoc());
});

it('has a heading per section, and each knob row under its own section', () => {
  const doc = renderKnobsDoc();
  for (const s of KNOB_SECTIONS) {
    const at = doc.indexOf(`\n### ${s.title}\n`);
    expect(at, s.title).toBeGreaterThan(0);
    const next = doc.indexOf('\n### ', at + 1);
    const body = doc.slice(at, next < 0 ? undefined : next);
    for (const k of s.knobs) expect(body, k).toContain(`| \`${k}\` |`);
  }
});
