/**
 * The run memory by reference (rules/prompt-memory.ts, workflows/prompt-parts.ts,
 * activities/prompt-memory.ts): over a long simulated run — entries appended and merged, older
 * ones dropped, a rewind, notes that change, continue-as-new, the activity's store lost — the
 * prompt the activity renders from the reference is byte-identical to the prompt rendered from
 * the memory's text, as runs before `vigil-lean-prompt-v1` send it; and the reference stays small.
 * Reviewers' and council members' prompts sent as their parts render to the same text too.
 */
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { ApplicationFailure } from '@temporalio/common';
import { afterEach, describe, expect, it } from 'vitest';
import { resolvePromptParts } from '../../activities/iteration.js';
import { storeNote } from '../../activities/prompt-memory.js';
import { PROMPT_PART_MISSING, type PromptInput, type RunAgentInput } from '../../schemas/activities.js';
import { emptyMemory, type RunMemory } from '../../schemas/memory.js';
import {
  appendMemory,
  boundedContinuity,
  iterationMemory,
  memoryFromEvent,
  promptMemory,
  renderRunSoFar,
  rewindMemory,
} from '../../rules/memory.js';
import { buildPrompt } from '../../rules/prompt.js';
import { applyMemoryDelta, memoryDelta, memoryWindow, windowHash } from '../../rules/prompt-memory.js';
import { MemoryParts } from '../../workflows/prompt-parts.js';
import { renderPromptSpec } from '../../rules/call-prompt.js';
import { councilPrompt, devilsAdvocatePrompt } from '../../rules/council-prompt.js';
import { devilsAdvocateReviewPrompt, reviewerPrompt } from '../../rules/review.js';
import { PromptSpecSchema } from '../../schemas/activities.js';

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

const RUN = 'run-mem';

function base(iteration: number): PromptInput {
  return {
    prdPath: '/p/PRD.md',
    prdTitle: 'T',
    iteration,
    maxIterations: 500,
    phase: 'ACT',
    tier: 'development',
    retry: 0,
    directives: [],
    findings: null,
    completionPromise: 'DONE',
  };
}

function call(repoPath: string, iteration: number, memoryRef: RunAgentInput['memoryRef']): RunAgentInput {
  return {
    runId: RUN,
    repoPath,
    role: 'iteration',
    iteration,
    phase: 'ACT',
    tier: 'development',
    timeoutSeconds: 5,
    completionPromise: 'DONE',
    promptInput: base(iteration),
    ...(memoryRef ? { memoryRef } : {}),
  };
}

/** One iteration's worth of memory: the iteration's line, a gate failure or two (merged), now and then a council round. */
function grow(m: RunMemory, i: number): RunMemory {
  let out = appendMemory(
    m,
    iterationMemory({
      iteration: i,
      phase: 'ACT',
      exitCode: i % 7 === 0 ? 1 : 0,
      timedOut: false,
      changed: true,
      paths: [`src/f${i}.ts`],
      lines: i,
      filesChangedSinceStart: i,
      insertions: i * 3,
      deletions: i,
      tests: i % 3 === 0 ? 'fail' : 'pass',
      claimed: false,
      provider: 'command',
      summary: `did step ${i} of the plan`,
    }),
  );
  if (i % 2 === 0) {
    out = appendMemory(
      out,
      memoryFromEvent({ kind: 'gate', iteration: i, gate: 'tests', verdict: 'fail', reason: `2 tests fail at ${i}`, findings: 0 }) ?? {
        iteration: i,
        kind: 'gates',
        text: 'x',
      },
    );
    out = appendMemory(out, { iteration: i, kind: 'gates', text: `gate lint failed: ${i} warnings` });
  }
  if (i % 5 === 0) out = appendMemory(out, { iteration: i, kind: 'council', text: `council round ${i / 5}: REJECTED · 0 of 3 approve` });
  return out;
}

describe('the run memory by reference', () => {
  it('renders the same window text as the whole memory, for every budget', () => {
    let m = emptyMemory();
    for (let i = 1; i <= 150; i++) {
      m = grow(m, i);
      for (const budget of [0, 1, 90, 300, 4000, 100_000]) {
        const w = memoryWindow(m, budget);
        expect(renderRunSoFar({ ...m, ...w }, budget)).toBe(renderRunSoFar(m, budget));
        if (budget <= 4000) expect(w.entries.length).toBeLessThanOrEqual(m.entries.length);
      }
    }
    // A delta rebuilds the window it stands for, and refuses a base it does not have.
    const a = memoryWindow(m, 4000);
    const b = memoryWindow(grow(m, 151), 4000);
    const d = memoryDelta({ window: a, hash: windowHash(a) }, b);
    expect(d.base).toBe(windowHash(a));
    expect(d.add.length).toBeLessThanOrEqual(4);
    expect(windowHash(applyMemoryDelta(a, d) ?? { entries: [], dropped: 0 })).toBe(d.sha256);
    expect(applyMemoryDelta(null, d)).toBeNull();
  });

  it('the activity renders a byte-identical prompt across a long run, continue-as-new and a lost store; the reference stays small', () => {
    const repo = mkdtempSync(path.join(os.tmpdir(), 'vigil-memref-'));
    dirs.push(repo);
    mkdirSync(path.join(repo, '.vigil'), { recursive: true });
    const partsDir = path.join(repo, '.vigil', 'runs', RUN, 'prompt-parts');
    const learnings = 'Lessons:\n- run the linter before the tests\n- the fixtures live in tests/data\n';
    writeFileSync(path.join(repo, '.vigil', 'learnings.md'), learnings);

    const budget = 4000;
    let textMemory: RunMemory = { ...emptyMemory(), learnings: learnings.trim() };
    let refMemory: RunMemory = { ...emptyMemory(), learningsRef: storeNote(repo, RUN, learnings.trim()) };
    let parts = new MemoryParts();
    let missing = 0;
    let refBytes = 0;
    let textBytes = 0;
    for (let i = 1; i <= 120; i++) {
      // The prompt of iteration i, both ways.
      const expected = buildPrompt({ ...base(i), memory: promptMemory(textMemory, budget) });
      let resolved: RunAgentInput;
      const ref = parts.ref(refMemory, budget);
      try {
        resolved = resolvePromptParts(call(repo, i, ref));
      } catch (err) {
        // The store was lost: the activity says so, the workflow sends the whole window.
        expect(err).toBeInstanceOf(ApplicationFailure);
        expect((err as ApplicationFailure).type).toBe(PROMPT_PART_MISSING);
        missing += 1;
        parts.forget();
        resolved = resolvePromptParts(call(repo, i, parts.ref(refMemory, budget)));
      }
      expect(buildPrompt(resolved.promptInput as PromptInput), `iteration ${i}`).toBe(expected);
      if (i > 10) {
        refBytes += JSON.stringify(ref).length;
        textBytes += JSON.stringify(promptMemory(textMemory, budget)).length;
      }

      // After the call: the agent's notes (as the inspection reads them), the iteration's memory.
      if (i % 4 === 1) {
        const notes = `# Continuity\nIteration ${i}: next, the parser's error paths.\n${'- detail\n'.repeat(i % 9)}`;
        writeFileSync(path.join(repo, '.vigil', 'CONTINUITY.md'), notes);
        const bounded = boundedContinuity(notes);
        textMemory = { ...textMemory, continuity: bounded };
        refMemory = { ...refMemory, continuityRef: storeNote(repo, RUN, bounded) };
      }
      textMemory = grow(textMemory, i);
      refMemory = grow(refMemory, i);
      if (i === 60) {
        // A rewind drops the entries of the iterations set aside.
        const r = { from: 60, to: 52, by: 'alice', reason: 'wrong approach', savedRef: 'refs/vigil/x' };
        textMemory = rewindMemory(textMemory, r);
        refMemory = rewindMemory(refMemory, r);
      }
      // Continue-as-new: a fresh execution knows of no window sent; the store is still there.
      if (i === 40) parts = new MemoryParts();
      // The store is lost (the run folder removed): the next reference is not found.
      if (i === 80) {
        rmSync(partsDir, { recursive: true, force: true });
        expect(existsSync(partsDir)).toBe(false);
      }
    }
    expect(missing).toBe(1);
    // The reference is a fraction of the text it replaces.
    expect(refBytes).toBeLessThan(textBytes / 4);
  });
});

describe('reviewing prompts as their parts', () => {
  it("the activity renders the text the workflow would have sent, for reviewers, council members and both devil's advocates", () => {
    const review = {
      reviewer: 'security-sentinel',
      diffPath: '/r/.vigil/runs/x/reviews/round-0002/diff.patch',
      diffBytes: 4100,
      files: ['src/a.ts', 'src/b.ts'],
      testSummary: 'tests pass (12)',
      prdPath: '/p/PRD.md',
      round: 2,
      iteration: 10,
    };
    const council = {
      size: 3,
      iteration: 10,
      prdPath: '/p/PRD.md',
      evidencePath: '/r/.vigil/runs/x/council/round-0002/evidence.md',
      severityThreshold: 'medium' as const,
    };
    // Through the schema, as the activity receives them.
    const render = (spec: unknown): string => renderPromptSpec(PromptSpecSchema.parse(JSON.parse(JSON.stringify(spec))));
    expect(render({ kind: 'reviewer', ...review })).toBe(reviewerPrompt(review));
    expect(render({ kind: 'review-devils-advocate', ...review, reviewer: 'devils-advocate' })).toBe(devilsAdvocateReviewPrompt(review));
    for (const [member, role] of (['requirements-verifier', 'test-auditor', 'devils-advocate-minded'] as const).entries()) {
      expect(render({ kind: 'council', role, member, ...council })).toBe(councilPrompt({ role, member, ...council }));
    }
    expect(render({ kind: 'council-devils-advocate', ...council })).toBe(devilsAdvocatePrompt(council));
    expect(JSON.stringify({ kind: 'reviewer', ...review }).length).toBeLessThan(reviewerPrompt(review).length / 3);
  });
});
