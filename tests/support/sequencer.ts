/**
 * The order test files start in: longest first, so the forks finish together instead of one
 * starting the slowest file last. Durations come from vitest's own cache when this checkout has
 * run the file before, else from `durations.json` (seconds per file, from a full run; refresh it
 * with `npm run test:durations` after a full run). A file known to neither counts as 20 s.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { BaseSequencer, type TestSpecification } from 'vitest/node';

const RECORDED = JSON.parse(readFileSync(new URL('./durations.json', import.meta.url), 'utf8')) as Record<string, number>;
const UNKNOWN_SECONDS = 20;

export default class LongestFirstSequencer extends BaseSequencer {
  override sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const root = this.ctx.config.root;
    const seconds = (f: TestSpecification): number => {
      const rel = path.relative(root, f.moduleId).split(path.sep).join('/');
      const cached = this.ctx.cache.getFileTestResults(`${f.project.name}:${rel}`);
      if (cached && cached.duration > 0) return cached.duration / 1000;
      return RECORDED[rel] ?? UNKNOWN_SECONDS;
    };
    return Promise.resolve([...files].sort((a, b) => seconds(b) - seconds(a)));
  }
}
