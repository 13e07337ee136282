/** `npm run docs:knobs`: writes docs/knobs.md as scripts/knob-docs.ts renders it. */
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { KNOBS_DOC_PATH, renderKnobsDoc } from './knob-docs.js';

writeFileSync(KNOBS_DOC_PATH, renderKnobsDoc());
console.log(`wrote ${path.relative(process.cwd(), KNOBS_DOC_PATH)}`);
