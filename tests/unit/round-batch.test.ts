/**
 * Batched rounds (claude --agents): the pure parts (rules/round-batch.ts) — the
 * sub-agents declared, the schema of the one answer, and its split into per-member answers that
 * the usual parsers read — the claude preset's argv for a batched call, its reading of the
 * call's stream, and which rounds can be batched (activities/round-batch.ts).
 */
import path from 'node:path';
import { ActivityFailure, RetryState } from '@temporalio/common';
import { describe, expect, it } from 'vitest';
import { batchable, makeBatchCall } from '../../activities/round-batch.js';
import { clearProbeCache, presetFlags } from '../../lib/providers/probe.js';
import type { BatchRequest } from '../../rounds/calls.js';
import { blankAgentResult, type AgentResult } from '../../schemas/activities.js';
import { ROOT } from '../support/harness.js';
import { claudePreset, readBatchStream } from '../../lib/providers/claude.js';
import type { InvocationRequest } from '../../lib/providers/index.js';
import type { RunAgentInput } from '../../schemas/activities.js';
import { agentsArgument, batchPrompt, findingsSchema, roundMayBatch, splitFindings, subAgentName } from '../../rules/round-batch.js';
import { defaultKnobs, KnobsSchema } from '../../schemas/knobs.js';
import { reviewerRecord } from '../../rules/review.js';
import { parseVote } from '../../rules/vote.js';

const names = [
  'vigil-council-member-0-requirements-verifier',
  'vigil-council-member-1-test-auditor',
  'vigil-council-member-2-devils-advocate-minded',
];

describe('the batched call', () => {
  it('declares one read-only sub-agent per member, with the member prompt as its instructions', () => {
    const json = JSON.parse(
      agentsArgument(
        [
          { name: 'vigil-a', description: 'member a', prompt: 'You are member 0 of 3' },
          { name: 'vigil-b', description: 'member b', prompt: 'You are member 1 of 3' },
        ],
        ['Read', 'Grep'],
      ),
    ) as Record<string, { prompt: string; tools: string[] }>;
    expect(Object.keys(json)).toEqual(['vigil-a', 'vigil-b']);
    expect(json['vigil-b']).toMatchObject({ prompt: 'You are member 1 of 3', tools: ['Read', 'Grep'] });
  });

  it('names sub-agents as the CLI takes them', () => {
    expect(subAgentName('vigil', 'council member 0 (requirements-verifier)')).toBe('vigil-council-member-0-requirements-verifier');
    expect(subAgentName('vigil', 'Security reviewer')).toBe('vigil-security-reviewer');
  });

  it('asks for one finding per declared agent, by name', () => {
    const schema = findingsSchema('council', names) as {
      properties: { findings: { items: { properties: { agent: { enum: string[] }; vote: { enum: string[] } } }; minItems: number } };
    };
    expect(schema.properties.findings.items.properties.agent.enum).toEqual(names);
    expect(schema.properties.findings.items.properties.vote.enum).toEqual(['APPROVE', 'REJECT', 'CANNOT_VALIDATE']);
    expect(schema.properties.findings.minItems).toBe(3);
    const prompt = batchPrompt({ kind: 'review', round: 2, iteration: 5, names: ['vigil-a', 'vigil-b'] });
    expect(prompt).toMatch(/^Code review round 2, iteration 5: one call for 2 code reviewers/);
    expect(prompt).toContain('- vigil-b');
  });
});

describe("the devil's advocate in the batched call", () => {
  const devil = { name: 'vigil-devil-s-advocate' };

  it('is asked for after the members, only on a unanimous round, and its finding is one more the schema allows', () => {
    const council = batchPrompt({ kind: 'council', round: 1, iteration: 3, names, followUp: devil });
    expect(council).toContain(
      'Then, only if every agent above voted APPROVE: run the agent vigil-devil-s-advocate once, the same way, and add its ' +
        'finding too. Otherwise do not run it.',
    );
    expect(council).not.toContain('- vigil-devil-s-advocate');
    const review = batchPrompt({ kind: 'review', round: 1, iteration: 3, names: ['vigil-a', 'vigil-b'], followUp: devil });
    expect(review).toContain('Then, only if every agent above gave the verdict PASS: run the agent vigil-devil-s-advocate once');
    // With the checklist verifier too: the verifier first, the members, then the devil's advocate.
    const all = batchPrompt({
      kind: 'council',
      round: 1,
      iteration: 3,
      names,
      verifier: { name: 'vigil-v', ids: ['R1'], stopIf: ['R1'] },
      followUp: devil,
    });
    expect(all.indexOf('First run only the agent vigil-v')).toBeLessThan(all.indexOf('Then, only if every agent above voted APPROVE'));
    const schema = findingsSchema('council', names, undefined, devil) as {
      properties: { findings: { items: { properties: { agent: { enum: string[] } } }; minItems: number } };
    };
    expect(schema.properties.findings.items.properties.agent.enum).toEqual([...names, devil.name]);
    expect(schema.properties.findings.minItems).toBe(3);
  });

  it("splits its finding out of the members' answers, when it gave one", () => {
    const members = names.map((agent) => ({ agent, vote: 'APPROVE', reason: 'done' }));
    const withIt = splitFindings(
      'council',
      names,
      {
        findings: [
          ...members,
          { agent: devil.name, vote: 'REJECT', reason: 'the empty input crashes', issues: [{ severity: 'low', description: 'crash' }] },
        ],
      },
      undefined,
      devil,
    );
    expect(withIt.ok).toBe(true);
    if (!withIt.ok) return;
    expect(Object.keys(withIt.answers)).toEqual(names);
    expect(parseVote(withIt.followUp ?? '')).toEqual({
      vote: 'REJECT',
      reason: 'the empty input crashes',
      issues: [{ severity: 'low', description: 'crash' }],
    });
    const without = splitFindings('council', names, { findings: members }, undefined, devil);
    expect(without).toEqual({ ok: true, answers: expect.any(Object) });
    // Its finding never stands in for a member's.
    expect(
      splitFindings(
        'council',
        names,
        { findings: [...members.slice(0, 2), { agent: devil.name, vote: 'APPROVE', reason: 'x' }] },
        undefined,
        devil,
      ),
    ).toEqual({ ok: false, why: `no finding for ${names[2]}` });
    // Undeclared, it is ignored like any stranger.
    const stranger = splitFindings('council', names, { findings: [...members, { agent: devil.name, vote: 'APPROVE', reason: 'x' }] });
    expect(stranger.ok && stranger.followUp).toBe(undefined);
  });
});

describe('splitting the one answer', () => {
  it('renders each member finding as its own call would have answered', () => {
    const split = splitFindings('council', names, {
      findings: [
        {
          agent: names[1],
          vote: 'REJECT',
          reason: 'no test covers the empty input',
          issues: [{ severity: 'high', description: 'empty input crashes' }],
        },
        { agent: names[0], vote: 'APPROVE', reason: 'every requirement is met' },
        { agent: names[2], vote: 'maybe', reason: 'cannot tell' },
        { agent: 'someone-else', vote: 'APPROVE', reason: 'not declared' },
      ],
    });
    expect(split.ok).toBe(true);
    if (!split.ok) return;
    expect(parseVote(split.answers[names[0] as string] as string)).toEqual({
      vote: 'APPROVE',
      reason: 'every requirement is met',
      issues: [],
    });
    expect(parseVote(split.answers[names[1] as string] as string)).toEqual({
      vote: 'REJECT',
      reason: 'no test covers the empty input',
      issues: [{ severity: 'high', description: 'empty input crashes' }],
    });
    // A vote outside the contract cannot approve.
    expect(parseVote(split.answers[names[2] as string] as string).vote).toBe('CANNOT_VALIDATE');
  });

  it('renders a reviewer finding with its verdict and severities', () => {
    const split = splitFindings('review', ['vigil-a', 'vigil-b', 'vigil-c'], {
      findings: [
        { agent: 'vigil-a', verdict: 'PASS', findings: [{ severity: 'low', text: 'a name could be clearer' }] },
        { agent: 'vigil-b', verdict: 'PASS', findings: [{ severity: 'critical', text: 'the secret is logged' }] },
        { agent: 'vigil-c', verdict: 'whatever' },
      ],
    });
    expect(split.ok).toBe(true);
    if (!split.ok) return;
    const rec = (name: string) =>
      reviewerRecord({ reviewer: name, exitCode: 0, output: split.answers[name] as string, lost: false, logPath: '' });
    expect(rec('vigil-a')).toMatchObject({ verdict: 'PASS', blocking: false, counts: { low: 1 } });
    // A critical finding blocks even under PASS, as in a reviewer's own answer.
    expect(rec('vigil-b')).toMatchObject({ verdict: 'FAIL', blocking: true, counts: { critical: 1 } });
    expect(rec('vigil-c').verdict).toBe('NO_VERDICT');
  });

  it('refuses an answer that misses a member, has no findings, or is none', () => {
    expect(splitFindings('council', names, { findings: [{ agent: names[0], vote: 'APPROVE', reason: 'ok' }] })).toEqual({
      ok: false,
      why: `no finding for ${names[1]}, ${names[2]}`,
    });
    expect(splitFindings('council', names, { findings: [] })).toEqual({ ok: false, why: 'no finding for any member' });
    expect(splitFindings('council', names, { verdict: 'ok' })).toEqual({ ok: false, why: 'the answer has no findings list' });
    expect(splitFindings('review', names, null)).toEqual({ ok: false, why: 'no structured answer' });
  });
});

const request = (over: Partial<InvocationRequest>): InvocationRequest => ({
  prompt: 'P',
  promptPath: '/tmp/p.md',
  role: 'council',
  tier: 'development',
  model: null,
  advertisedFlags: new Set(claudePreset.optionalFlags),
  remainingBudgetUsd: null,
  sessionId: null,
  resume: false,
  appendSystemPrompt: null,
  fallbackModel: null,
  ...over,
});

describe('the claude preset', () => {
  it('passes --agents and --json-schema only when the CLI advertises both, and lets the main agent run its agents', () => {
    const subAgents = { agents: '{"vigil-a":{}}', schema: '{"type":"object"}' };
    const argv = claudePreset.buildInvocation(request({ subAgents })).argv;
    expect(argv.slice(argv.indexOf('--agents'), argv.indexOf('--agents') + 4)).toEqual([
      '--agents',
      subAgents.agents,
      '--json-schema',
      subAgents.schema,
    ]);
    expect(argv).toContain('Agent');
    expect(argv).toContain('StructuredOutput');
    expect(argv).not.toContain('--dangerously-skip-permissions');
    const older = claudePreset.buildInvocation(
      request({ subAgents, advertisedFlags: new Set(claudePreset.optionalFlags.filter((f) => f !== '--json-schema')) }),
    ).argv;
    expect(older).not.toContain('--agents');
    expect(older).not.toContain('Agent');
    expect(claudePreset.buildInvocation(request({})).argv).not.toContain('--agents');
    expect(presetFlags(claudePreset)).toEqual(expect.arrayContaining(['--agents', '--json-schema']));
  });

  it("reads the structured answer and each sub-agent's part of the stream", () => {
    const lines = [
      { type: 'system', subtype: 'init', session_id: 's1', model: 'claude-sonnet' },
      {
        type: 'assistant',
        message: {
          id: 'm1',
          content: [
            { type: 'tool_use', id: 'tu_a', name: 'Agent', input: { subagent_type: 'vigil-a', prompt: 'go' } },
            { type: 'tool_use', id: 'tu_b', name: 'Task', input: { subagent_type: 'vigil-b', prompt: 'go' } },
          ],
        },
        parent_tool_use_id: null,
      },
      {
        type: 'assistant',
        message: { id: 'm2', content: [{ type: 'tool_use', id: 'x1', name: 'Read', input: { file_path: '/r/README.md' } }] },
        parent_tool_use_id: 'tu_a',
      },
      { type: 'assistant', message: { id: 'm3', content: [{ type: 'text', text: 'VOTE: APPROVE' }] }, parent_tool_use_id: 'tu_a' },
      { type: 'assistant', message: { id: 'm4', content: [{ type: 'text', text: 'VOTE: REJECT' }] }, parent_tool_use_id: 'tu_b' },
      {
        type: 'user',
        message: {
          content: [{ type: 'tool_result', tool_use_id: 'tu_a', content: [{ type: 'text', text: 'VOTE: APPROVE\nREASON: fine' }] }],
        },
        parent_tool_use_id: null,
      },
      {
        type: 'assistant',
        message: {
          id: 'm5',
          content: [
            {
              type: 'tool_use',
              id: 'so',
              name: 'StructuredOutput',
              input: { findings: [{ agent: 'vigil-a', vote: 'APPROVE', reason: 'from the tool' }] },
            },
          ],
        },
        parent_tool_use_id: null,
      },
      {
        type: 'result',
        subtype: 'success',
        is_error: false,
        result: 'done',
        structured_output: { findings: [{ agent: 'vigil-a', vote: 'APPROVE', reason: 'fine' }] },
      },
    ];
    const text = `=== vigil: header ===\n${lines.map((l) => JSON.stringify(l)).join('\n')}\n`;
    const s = readBatchStream(text);
    expect(s.structured).toEqual({ findings: [{ agent: 'vigil-a', vote: 'APPROVE', reason: 'fine' }] });
    expect(s.agents['vigil-a']).toEqual({
      transcript: ['> tool Read: /r/README.md', 'VOTE: APPROVE'],
      report: 'VOTE: APPROVE\nREASON: fine',
    });
    expect(s.agents['vigil-b']).toEqual({ transcript: ['VOTE: REJECT'], report: null });
    // Without structured_output in the result: the StructuredOutput tool's input, else the result text as JSON.
    expect(
      readBatchStream(
        lines
          .slice(0, -1)
          .map((l) => JSON.stringify(l))
          .join('\n'),
      ).structured,
    ).toEqual({ findings: [{ agent: 'vigil-a', vote: 'APPROVE', reason: 'from the tool' }] });
    expect(readBatchStream(JSON.stringify({ type: 'result', result: 'Here it is:\n{"findings": []}' })).structured).toEqual({
      findings: [],
    });
    expect(readBatchStream('not json at all').structured).toBeNull();
  });
});

describe('which rounds can be batched', () => {
  const member = (over: Partial<RunAgentInput>): RunAgentInput => ({
    runId: 'r',
    repoPath: '/r',
    provider: 'claude',
    argv: [],
    prompt: 'You are member 0',
    role: 'council',
    iteration: 1,
    phase: 'VERIFY',
    tier: 'development',
    timeoutSeconds: 600,
    completionPromise: '',
    ...over,
  });
  it('only several claude calls alike in CLI, model, role and timeout', () => {
    expect(batchable([member({}), member({ prompt: 'You are member 1' })])).toBe(true);
    expect(batchable([member({})])).toBe(false);
    expect(batchable([member({ provider: 'codex' }), member({ provider: 'codex' })])).toBe(false);
    expect(batchable([member({}), member({ model: 'opus' })])).toBe(false);
    expect(batchable([member({}), member({ argv: ['/opt/claude'] })])).toBe(false);
    expect(batchable([member({}), member({ timeoutSeconds: 60 })])).toBe(false);
  });

  it('only while the batchRounds knob is auto, its default (a run from before the knob has it)', () => {
    expect(defaultKnobs().batchRounds).toBe('auto');
    expect(roundMayBatch(defaultKnobs())).toBe(true);
    expect(roundMayBatch({ ...defaultKnobs(), batchRounds: 'off' })).toBe(false);
    const { batchRounds: _left, ...older } = defaultKnobs();
    expect(roundMayBatch(KnobsSchema.parse(older))).toBe(true);
  });
});

describe('the batched call as the round activity makes it (the installed CLI probed, the call injected)', () => {
  const fake = path.join(ROOT, 'examples/agents/fake-cli/claude');
  const input = (i: number, over: Partial<RunAgentInput> = {}): RunAgentInput => ({
    runId: 'r',
    repoPath: '/r',
    provider: 'claude',
    argv: [fake],
    prompt: `You are member ${i + 1} of 3`,
    role: 'council',
    iteration: 1,
    phase: 'VERIFY',
    tier: 'development',
    timeoutSeconds: 600,
    completionPromise: '',
    extraEnv: { VIGIL_MEMBER: String(i), VIGIL_COUNCIL_ROUND: '2', VIGIL_EVIDENCE_FILE: '/r/evidence.md' },
    ...over,
  });
  const request = (over: Partial<RunAgentInput> = {}): BatchRequest => ({
    kind: 'council',
    round: 2,
    iteration: 4,
    inputs: [0, 1, 2].map((i) => input(i, over)),
    labels: ['council member 0 (a)', 'council member 1 (b)', 'council member 2 (c)'],
  });
  const result = (over: Partial<AgentResult>): AgentResult => ({
    ...blankAgentResult({ exitCode: 0, attempt: 1, provider: 'claude', logPath: '/r/.vigil/runs/r/council-round-0002-batch.log' }),
    usage: { costUsd: 0.3, inputTokens: 10, outputTokens: 5, cacheReadTokens: 0, cacheWriteTokens: 0, model: 'sonnet' },
    ...over,
  });

  it('makes one call declaring every member, with the round in its environment', async () => {
    const seen: RunAgentInput[] = [];
    const out = await makeBatchCall(async (i) => {
      seen.push(i);
      return result({ exitCode: 1 });
    })(request());
    expect(seen).toHaveLength(1);
    expect(Object.keys(JSON.parse(seen[0]?.subAgents?.agents ?? '{}') as object)).toEqual([
      'vigil-council-member-0-a',
      'vigil-council-member-1-b',
      'vigil-council-member-2-c',
    ]);
    expect(seen[0]?.extraEnv).toEqual({
      VIGIL_COUNCIL_ROUND: '2',
      VIGIL_EVIDENCE_FILE: '/r/evidence.md',
      VIGIL_BATCH: 'vigil-council-member-0-a,vigil-council-member-1-b,vigil-council-member-2-c',
    });
    expect(seen[0]?.prompt).toMatch(/^Completion council round 2, iteration 4: one call for 3 council members/);
    // A failed batch: each member is asked, its cost still counted once.
    expect(out).toEqual({
      results: null,
      usage: result({}).usage,
      note: {
        batched: false,
        members: 3,
        note: 'the batched call exited with 1: one call per member',
        logPath: '/r/.vigil/runs/r/council-round-0002-batch.log',
      },
    });
  });

  it("declares the devil's advocate last when it can share the call, and reads its finding as its own call's", async () => {
    const devil = {
      input: input(0, {
        role: 'devils-advocate',
        prompt: 'You are the devil',
        extraEnv: { VIGIL_COUNCIL_ROUND: '2', VIGIL_EVIDENCE_FILE: '/r/evidence.md' },
      }),
      label: "devil's advocate",
    };
    const seen: RunAgentInput[] = [];
    await makeBatchCall(async (i) => {
      seen.push(i);
      return result({ exitCode: 1 });
    })({ ...request(), followUp: devil });
    const agents = JSON.parse(seen[0]?.subAgents?.agents ?? '{}') as Record<string, { prompt: string }>;
    expect(Object.keys(agents)).toEqual([
      'vigil-council-member-0-a',
      'vigil-council-member-1-b',
      'vigil-council-member-2-c',
      'vigil-devil-s-advocate',
    ]);
    expect(agents['vigil-devil-s-advocate']?.prompt).toBe('You are the devil');
    expect(seen[0]?.prompt).toContain('Then, only if every agent above voted APPROVE: run the agent vigil-devil-s-advocate once');
    // Another model than the members': not declared (the round asks it on its own when due).
    seen.length = 0;
    await makeBatchCall(async (i) => {
      seen.push(i);
      return result({ exitCode: 1 });
    })({ ...request(), followUp: { ...devil, input: { ...devil.input, model: 'opus' } } });
    expect(Object.keys(JSON.parse(seen[0]?.subAgents?.agents ?? '{}') as object)).not.toContain('vigil-devil-s-advocate');
    expect(seen[0]?.prompt).not.toContain('vigil-devil-s-advocate');
  });

  it('a batch that timed out counts every member as timed out; a lost one asks each member; other CLIs are not batched', async () => {
    const timedOut = await makeBatchCall(async () => result({ exitCode: 124, timedOut: true }))(request());
    expect(timedOut?.results?.map((r) => [r.timedOut, r.exitCode])).toEqual([
      [true, 124],
      [true, 124],
      [true, 124],
    ]);
    expect(timedOut?.note).toMatchObject({
      batched: true,
      note: 'one call for 3 members timed out after 600 s: every member counts as timed out',
    });
    const lost = await makeBatchCall(async () => {
      throw new ActivityFailure(
        'runAgent failed: boom',
        'runAgent',
        undefined,
        RetryState.NON_RETRYABLE_FAILURE,
        undefined,
        new Error('boom'),
      );
    })(request());
    expect(lost).toMatchObject({
      results: null,
      usage: null,
      note: { batched: false, note: 'the batched call failed (boom): one call per member' },
    });
    let called = false;
    const spy = async (): Promise<AgentResult> => {
      called = true;
      return result({});
    };
    expect(await makeBatchCall(spy)(request({ provider: 'codex' }))).toBeNull();
    // A claude without --agents (an older CLI): one call per member.
    process.env.FAKE_CLI_HELP_OMIT = '--agents';
    try {
      clearProbeCache();
      expect(await makeBatchCall(spy)(request())).toBeNull();
    } finally {
      delete process.env.FAKE_CLI_HELP_OMIT;
      clearProbeCache();
    }
    expect(called).toBe(false);
  });
});
