/**
 * The slow tier's file order: as tests/support/tiers.ts lists it (the list pairs the CPU-bound
 * matrix with the files that mostly wait), not vitest's own order nor the main suite's longest
 * first. A file the list does not name (one run by path that the list lost) goes last.
 */
import path from 'node:path';
import { BaseSequencer, type TestSpecification } from 'vitest/node';
import { SLOW_TIER } from './tiers.js';

export default class ListedOrderSequencer extends BaseSequencer {
  override sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const root = this.ctx.config.root;
    const rank = (f: TestSpecification): number => {
      const i = SLOW_TIER.indexOf(path.relative(root, f.moduleId).split(path.sep).join('/'));
      return i === -1 ? SLOW_TIER.length : i;
    };
    return Promise.resolve([...files].sort((a, b) => rank(a) - rank(b)));
  }
}
