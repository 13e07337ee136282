/**
 * The suite's corpus of recorded runs (tests/fixtures/rejudge/*.json, recorded from whole runs of
 * the scripted agent by tests/e2e/rejudge.test.ts) rejudged by `vigil rejudge --from`: the report
 * with today's rules is kept beside it (report.txt), so a rule change that flips a recorded
 * verdict shows as a diff of that file; refresh it, once the flip is meant, with
 * `VIGIL_RECORD_REJUDGE=1 npx vitest run tests/unit/rejudge-corpus.test.ts`.
 *
 * Unchanged rules flip nothing on the runs recorded with them; a stricter knob flips the verdicts
 * it should and no other; the run recorded before the integrity gates (its input has no knob for
 * them) is reported with what they would have said, and refused by them.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { readRecordedRuns, rejudgeAll, rejudgeCommand, rejudgeText } from '../../cli/rejudge.js';
import { RejudgeReportSchema } from '../../schemas/rejudge.js';
import { ROOT } from '../support/harness.js';

const CORPUS = path.join(ROOT, 'tests/fixtures/rejudge');
const REPORT = path.join(CORPUS, 'report.txt');

async function run(args: { set?: string[]; json?: boolean }): Promise<string> {
  let text = '';
  const code = await rejudgeCommand(
    [],
    { from: [CORPUS], ...args },
    { out: (t) => (text += t), env: {}, client: () => Promise.resolve(null) },
  );
  expect(code).toBe(0);
  return text;
}

describe('the corpus of recorded runs', () => {
  const runs = readRecordedRuns([CORPUS]);
  const byName = (part: string): string => runs.find((r) => r.workflowId.includes(part))?.workflowId ?? `no run ${part}`;

  it('holds whole runs: each approved by the council after its gates, review and checklist', () => {
    expect(runs.length).toBe(3);
    for (const r of runs) {
      const kinds = new Set(r.events.map((e) => e.event.kind));
      for (const k of ['run_started', 'iteration', 'gate', 'review', 'council_round', 'outcome'])
        expect(kinds, `${r.workflowId}: ${k}`).toContain(k);
      expect(r.startTree).not.toBeNull();
    }
  });

  it("rejudged with today's rules gives the report kept beside it (a rule change that flips a verdict is a diff of report.txt)", async () => {
    const text = await run({});
    if (process.env.VIGIL_RECORD_REJUDGE === '1') writeFileSync(REPORT, text);
    expect(text).toBe(readFileSync(REPORT, 'utf8'));
  });

  it(
    'unchanged rules flip nothing on the runs recorded with them; the run from before the integrity gates is refused by what ' +
      'they would have said',
    async () => {
      const r = RejudgeReportSchema.parse(JSON.parse(await run({ json: true })));
      const flips = Object.fromEntries(r.runs.map((x) => [x.workflowId, x.flips]));
      expect(flips).toEqual({ [byName('advisory')]: 0, [byName('clean')]: 0, [byName('harness')]: 1 });
      expect(r.needsNewJudgement).toBe(0);
      const before = r.runs.find((x) => x.workflowId === byName('harness'));
      expect(before?.knobChanges.map((c) => c.knob)).toEqual(['gateTestMutation', 'gateTestGaming']);
      const check = before?.checks.find((c) => c.flipped);
      expect(check?.recorded.verdict).toBe('approved');
      expect(check?.now.by).toBe('test_mutation');
      expect(check?.now.reason).toMatch(
        /it would have said\): 1 finding\(s\): harness_changed-[0-9a-f]{8}: \.github\/workflows\/test\.yml: a harness file was added/,
      );
    },
  );

  it('a stricter knob flips the verdicts it should and no other: reviewMergeabilityMin=100 refuses the approval whose review had a Low finding', () => {
    const stricter = rejudgeAll(runs, { reviewMergeabilityMin: 100 });
    const unchanged = rejudgeAll(runs, {});
    const diff = stricter.runs.map((x, i) => x.flips - (unchanged.runs[i]?.flips ?? 0));
    expect(Object.fromEntries(stricter.runs.map((x, i) => [x.workflowId, diff[i]]))).toEqual({
      [byName('advisory')]: 1,
      [byName('clean')]: 0,
      [byName('harness')]: 0,
    });
    expect(rejudgeText(stricter)).toMatch(
      /FLIP iteration \d+ \(\w+, round \d+\): approved → refused by code_review: code review: mergeability \d+ is below the minimum 100/,
    );
  });

  it('--set is validated as vigil start validates it', async () => {
    await expect(run({ set: ['reviewMergeabilityMin=101'] })).rejects.toThrow(/reviewMergeabilityMin/);
    await expect(run({ set: ['noSuchKnob=1'] })).rejects.toThrow(/noSuchKnob/);
  });
});
