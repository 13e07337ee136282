/**
 * The lean iteration's prompt parts (activities/iteration.ts): a long part sent as text is stored
 * under the run folder by its sha256, a later reference reads it back, and a reference that is not
 * stored (or whose file no longer matches its hash) fails before any agent starts. The workflow's
 * side (workflows/prompt-parts.ts PromptParts) sends each long part as text once, then by hash.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { ApplicationFailure } from '@temporalio/common';
import { afterEach, describe, expect, it } from 'vitest';
import { resolvePromptParts } from '../../activities/iteration.js';
import { PROMPT_PART_MISSING, type PromptInput, type RunAgentInput } from '../../schemas/activities.js';
import { PromptParts } from '../../workflows/prompt-parts.js';
import { sha256Hex } from '../../rules/sha256.js';

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

const LONG = `Checklist:\n${'- REQ: a requirement that is long enough to be worth a reference\n'.repeat(12)}`;

function prompt(over: Partial<PromptInput> = {}): PromptInput {
  return {
    prdPath: '/p/PRD.md',
    prdTitle: 'T',
    iteration: 1,
    maxIterations: 9,
    phase: 'ACT',
    tier: 'development',
    retry: 0,
    directives: [],
    findings: 'short',
    completionPromise: '',
    checklist: LONG,
    ...over,
  };
}

function call(repoPath: string, promptInput: PromptInput, promptRefs?: RunAgentInput['promptRefs']): RunAgentInput {
  return {
    runId: 'run-1',
    repoPath,
    role: 'iteration',
    iteration: 1,
    phase: 'ACT',
    tier: 'development',
    timeoutSeconds: 5,
    completionPromise: '',
    promptInput,
    ...(promptRefs ? { promptRefs } : {}),
  };
}

describe('prompt parts by reference', () => {
  it('the workflow sends a long part once as text, then its sha256; short parts always travel as text', () => {
    const parts = new PromptParts();
    const first = parts.split(prompt());
    expect(first.promptInput.checklist).toBe(LONG);
    expect(first.promptRefs).toEqual({});
    const second = parts.split(prompt({ iteration: 2 }));
    expect(second.promptInput.checklist).toBeNull();
    expect(second.promptRefs).toEqual({ checklist: sha256Hex(LONG) });
    expect(second.promptInput.findings).toBe('short');
    parts.forget();
    expect(parts.split(prompt()).promptInput.checklist).toBe(LONG);
  });

  it('the activity stores a long part it receives and reads it back for a reference (the hash is the same on both sides)', () => {
    const repo = mkdtempSync(path.join(os.tmpdir(), 'vigil-parts-'));
    dirs.push(repo);
    resolvePromptParts(call(repo, prompt()));
    const parts = new PromptParts();
    parts.split(prompt());
    const { promptInput, promptRefs } = parts.split(prompt({ iteration: 2 }));
    const resolved = resolvePromptParts(call(repo, promptInput, promptRefs));
    expect(resolved.promptInput?.checklist).toBe(LONG);
    expect(resolved.promptInput?.iteration).toBe(2);
  });

  it('a reference that is not stored, or whose file was changed, fails as PromptPartMissing', () => {
    const repo = mkdtempSync(path.join(os.tmpdir(), 'vigil-parts-'));
    dirs.push(repo);
    const ref = sha256Hex(LONG);
    const missing = (): unknown => resolvePromptParts(call(repo, prompt({ checklist: null }), { checklist: ref }));
    expect(missing).toThrow(ApplicationFailure);
    try {
      missing();
    } catch (err) {
      expect((err as ApplicationFailure).type).toBe(PROMPT_PART_MISSING);
      expect((err as ApplicationFailure).nonRetryable).toBe(true);
    }
    resolvePromptParts(call(repo, prompt()));
    writeFileSync(path.join(repo, '.vigil', 'runs', 'run-1', 'prompt-parts', `${ref}.md`), 'tampered');
    expect(missing).toThrow(/prompt part checklist/);
  });
});
