/**
 * A round's members (or reviewers) in one call (spec §2.5 A), for the round activities
 * (activities/rounds.ts): when every member's call would go to the claude preset with the same
 * CLI, model and timeout, and the installed `claude` advertises `--agents` and `--json-schema`,
 * the round makes one `claude -p` call that declares one sub-agent per member (the member's own
 * prompt as its instructions, read-only tools) and asks for one structured answer with a finding
 * per member (rules/round-batch.ts). Each sub-agent has its own context: the
 * members stay blind to each other by construction.
 *
 * The one answer is split back into what each member's own call would have left: its prompt, its
 * log and transcript (the sub-agent's part of the stream, then its answer in its role's format)
 * under the member's usual name in the run folder, and its result (the vote or the review read by
 * the usual parsers), so tallies, records and status read them as before. The call's cost is
 * counted once.
 *
 * A batched call that fails (non-zero exit, no answer, an answer that does not parse, a member
 * missing, a member's finding the main agent wrote without running that member as its sub-agent)
 * asks each member on its own, and the round's record says so (`batch.batched: false`, with why):
 * a vote counts only when the member's own answer is in the call's stream. A batched call that ran out of time counts every member as timed out, as each would
 * have been on its own: asking them again would double the round's wait. A batched call that
 * changed the tree voids every member's answer, as it would each member's own.
 */
import path from 'node:path';
import { ActivityFailure } from '@temporalio/common';
import { blankAgentResult, type AgentResult, type RunAgentInput } from '../schemas/activities.js';
import type { RoundBatch } from '../schemas/gates.js';
import type { BatchCall, BatchOutcome, BatchRequest } from '../rounds/calls.js';
import { renderPromptSpec } from '../rules/call-prompt.js';
import { reviewerRecord } from '../rules/review.js';
import { parseVerifierOutput } from '../rules/checklist/verifier.js';
import {
  agentsArgument,
  batchPrompt,
  BATCH_ARGS_MAX_CHARS,
  findingsSchema,
  splitFindings,
  subAgentName,
  type BatchFollowUp,
  type BatchMember,
  type BatchVerifier,
} from '../rules/round-batch.js';
import { redactSecrets } from '../rules/scans.js';
import { parseVote } from '../rules/vote.js';
import { callLabel } from './agent.js';
import { CLAUDE_READ_ONLY_TOOLS, claudePreset, readBatchStream } from '../lib/providers/claude.js';
import { probeCached } from '../lib/providers/probe.js';
import { readRegularFile, writePrivateFile } from '../lib/safe-files.js';

/** How much of a batched call's log is read for its answer (its result record closes it). */
const LOG_READ_MAX = 16 * 1024 * 1024;

const same = (a: unknown, b: unknown): boolean => JSON.stringify(a ?? null) === JSON.stringify(b ?? null);

/** Two calls can be one: both claude, the same CLI, model, tier and timeout, each with a prompt of its own. */
function sameCall(i: RunAgentInput, first: RunAgentInput): boolean {
  return (
    i.provider === 'claude' &&
    same(i.argv, first.argv) &&
    same(i.model, first.model) &&
    same(i.effort, first.effort) &&
    same(i.fallbackModel, first.fallbackModel) &&
    i.tier === first.tier &&
    i.timeoutSeconds === first.timeoutSeconds &&
    (i.prompt !== undefined || i.promptSpec !== undefined)
  );
}

/** The members can go out as one call: all claude, the same CLI, model, tier, timeout and role, each with a prompt of its own. */
export function batchable(inputs: RunAgentInput[]): boolean {
  const first = inputs[0];
  if (first === undefined || inputs.length < 2) return false;
  return inputs.every((i) => sameCall(i, first) && i.role === first.role);
}

/** Whether the installed claude (or the binary the knobs name) can run declared agents with a structured answer. */
export async function claudeCanBatch(argv: string[]): Promise<boolean> {
  // Several words (`npx claude`) cannot be probed: no optional flag is passed to them (lib/providers/call.ts).
  const binary = argv.length === 0 ? claudePreset.binary : argv.length === 1 ? argv[0] : null;
  if (!binary) return false;
  const probe = await probeCached(claudePreset, { binary });
  return probe.helpOk && probe.advertised.includes('--agents') && probe.advertised.includes('--json-schema');
}

function memberPrompt(i: RunAgentInput): string {
  return i.prompt ?? (i.promptSpec ? renderPromptSpec(i.promptSpec) : '');
}

/** Distinct sub-agent names, one per member. */
function namesOf(req: BatchRequest): string[] {
  const seen = new Set<string>();
  return req.labels.map((label, i) => {
    let name = subAgentName('vigil', label);
    if (seen.has(name)) name = subAgentName('vigil', `${label} ${i}`);
    seen.add(name);
    return name;
  });
}

/** What a member's own call would have read from its answer. */
function memberAnswer(
  kind: BatchRequest['kind'],
  input: RunAgentInput,
  answer: string,
  logPath: string,
): Pick<AgentResult, 'vote' | 'review'> {
  if (kind === 'council') return { vote: parseVote(answer), review: null };
  const rec = reviewerRecord({ reviewer: input.extraEnv?.VIGIL_REVIEWER ?? input.role, exitCode: 0, output: answer, lost: false, logPath });
  return { vote: null, review: { ...rec, findings: rec.findings.map((l) => redactSecrets(l).text.slice(0, 300)) } };
}

/** A batched call with the round's own agent call (observed and failing as a member's call would: ActivityFailure). */
export function makeBatchCall(run: (input: RunAgentInput) => Promise<AgentResult>): BatchCall {
  return async (req: BatchRequest): Promise<BatchOutcome | null> => {
    const first = req.inputs[0];
    if (first === undefined || !batchable(req.inputs) || !(await claudeCanBatch(first.argv ?? []))) return null;
    // A verifier that cannot share the call (another model, CLI or timeout): the round asks it on its own first.
    if (req.verifier && !sameCall(req.verifier.input, first)) return null;
    const names = namesOf(req);
    const members: BatchMember[] = req.inputs.map((input, i) => ({
      name: names[i] as string,
      description: `Vigil ${req.labels[i] ?? ''}: follow your instructions and answer in their format`,
      prompt: memberPrompt(input),
    }));
    const verifier: (BatchVerifier & { input: RunAgentInput }) | null = req.verifier
      ? {
          name: subAgentName('vigil', req.verifier.label),
          ids: req.verifier.input.checklistIds ?? [],
          stopIf: req.verifier.stopIf,
          input: req.verifier.input,
        }
      : null;
    // The devil's advocate rides along where it could share the call; otherwise the round asks it on its own when due.
    const followUp: (BatchFollowUp & { input: RunAgentInput; label: string }) | null =
      req.followUp && sameCall(req.followUp.input, first)
        ? { name: subAgentName('vigil', req.followUp.label), input: req.followUp.input, label: req.followUp.label }
        : null;
    const declared: BatchMember[] = [
      ...(verifier
        ? [
            {
              name: verifier.name,
              description: `Vigil ${req.verifier?.label ?? ''}: follow your instructions and answer in their format`,
              prompt: memberPrompt(verifier.input),
            },
          ]
        : []),
      ...members,
      ...(followUp
        ? [
            {
              name: followUp.name,
              description: `Vigil ${followUp.label}: follow your instructions and answer in their format`,
              prompt: memberPrompt(followUp.input),
            },
          ]
        : []),
    ];
    const agents = agentsArgument(declared, CLAUDE_READ_ONLY_TOOLS);
    const schema = JSON.stringify(findingsSchema(req.kind, names, verifier ?? undefined, followUp ?? undefined));
    const note = (batched: boolean, text: string, logPath: string): RoundBatch => ({
      batched,
      members: names.length,
      note: text.slice(0, 300),
      logPath: logPath.slice(0, 4096),
    });
    if (agents.length + schema.length > BATCH_ARGS_MAX_CHARS)
      return {
        results: null,
        usage: null,
        note: note(false, `the members' prompts are too long for one call (${agents.length} characters): one call per member`, ''),
      };

    const { prompt: _p, promptSpec: _s, compact: _c, extraEnv, parseVote: _v, parse: _r, ...common } = first;
    const roundEnv: Record<string, string> =
      req.kind === 'council'
        ? {
            VIGIL_COUNCIL_ROUND: String(req.round),
            ...(extraEnv?.VIGIL_EVIDENCE_FILE ? { VIGIL_EVIDENCE_FILE: extraEnv.VIGIL_EVIDENCE_FILE } : {}),
          }
        : { VIGIL_REVIEW_ROUND: String(req.round) };
    const batchInput: RunAgentInput = {
      ...common,
      prompt: batchPrompt({
        kind: req.kind,
        round: req.round,
        iteration: req.iteration,
        names,
        ...(verifier ? { verifier } : {}),
        ...(followUp ? { followUp } : {}),
      }),
      // With the verifier, the round's number repeats after a check the checklist stopped: the iteration keeps each call's files apart.
      extraEnv: {
        ...roundEnv,
        VIGIL_BATCH: declared.map((m) => m.name).join(','),
        ...(verifier ? { VIGIL_CHECKLIST_ITERATION: String(verifier.input.iteration) } : {}),
      },
      tailOnFailure: true,
      subAgents: { agents, schema, members: declared.length },
      // The verifier's prompt and answer name held-out items: the call's files stay out of the repository.
      ...(verifier ? { privateFiles: true } : {}),
    };
    let r: AgentResult;
    try {
      r = await run(batchInput);
    } catch (err) {
      if (!(err instanceof ActivityFailure)) throw err;
      return {
        results: null,
        usage: null,
        note: note(false, `the batched call failed (${(err.cause?.message ?? err.message).slice(0, 150)}): one call per member`, ''),
      };
    }
    const fallback = (why: string): BatchOutcome => ({
      results: null,
      usage: r.usage,
      note: note(false, `the batched call ${why}: one call per member`, r.logPath),
    });
    if (r.timedOut) {
      const blank = () =>
        blankAgentResult({
          exitCode: r.exitCode,
          attempt: r.attempt,
          timedOut: true,
          durationMs: r.durationMs,
          logPath: r.logPath,
          promptPath: r.promptPath,
          provider: 'claude',
          tail: r.tail,
        });
      const who = verifier ? `the checklist verifier and ${names.length} members` : `${names.length} members`;
      return {
        results: req.inputs.map(blank),
        usage: r.usage,
        note: note(true, `one call for ${who} timed out after ${first.timeoutSeconds} s: every member counts as timed out`, r.logPath),
        ...(verifier ? { verifier: blank() } : {}),
      };
    }
    if (r.exitCode !== 0) return fallback(`exited with ${r.exitCode}`);
    const log = readRegularFile(r.logPath, LOG_READ_MAX);
    if (!log?.ok) return fallback('left no readable log');
    const stream = readBatchStream(log.text);
    const split = splitFindings(req.kind, names, stream.structured, verifier ?? undefined, followUp ?? undefined);

    const dir = path.dirname(r.logPath);
    const count = verifier ? `the checklist verifier and ${names.length} members` : `${names.length} members`;
    /** One declared agent's answer as its own call would have left it: its prompt, log and transcript under its usual name. */
    const own = (input: RunAgentInput, name: string, prompt: string, answer: string): Pick<AgentResult, 'logPath' | 'promptPath'> => {
      const label = callLabel({ role: input.role, iteration: input.iteration, extraEnv: input.extraEnv ?? {} });
      const promptPath = path.join(dir, `${label}.prompt.md`);
      const logPath = path.join(dir, `${label}.log`);
      const part = stream.agents[name];
      const transcript = [
        `[answered as agent ${name} of one call for ${count}: ${path.basename(r.logPath)}]`,
        ...(part?.transcript ?? []),
        ...(part?.report ? ['[its report]', part.report] : []),
        '[its finding, as the round reads it]',
        answer,
      ].join('\n');
      try {
        writePrivateFile(promptPath, prompt);
        writePrivateFile(logPath, `${transcript}\n`);
        writePrivateFile(path.join(dir, `${label}.transcript.md`), `${transcript}\n`);
      } catch {
        /* the batched call's log holds every answer; a missing copy is not worth the round */
      }
      return { logPath, promptPath };
    };
    const answered = (answer: string): AgentResult => ({
      ...blankAgentResult({ exitCode: 0, attempt: r.attempt, provider: 'claude' }),
      durationMs: r.durationMs,
      outputBytes: Buffer.byteLength(answer),
      model: r.model,
      sessionId: r.sessionId,
      modelOutput: r.modelOutput,
      reviewChangedTree: r.reviewChangedTree,
      sandbox: r.sandbox ?? null,
    });
    // A declared agent's answer counts only when the call ran it: its own report is in the stream (a
    // main agent that wrote a member's finding itself, without dispatching it, is not that member).
    const ran = (name: string): boolean => typeof stream.agents[name]?.report === 'string';
    const verifierResult =
      verifier && split.verifier !== undefined && ran(verifier.name)
        ? {
            ...answered(split.verifier),
            ...own(verifier.input, verifier.name, memberPrompt(verifier.input), split.verifier),
            verification: parseVerifierOutput(split.verifier, verifier.ids),
          }
        : undefined;
    const withVerifier = (o: BatchOutcome): BatchOutcome => (verifierResult ? { ...o, verifier: verifierResult } : o);
    if (!split.ok) {
      // The verifier stopped the members (an item it must pass is not met): one call, and the round asks no member.
      if (verifierResult && stream.structured !== null && noFindings(stream.structured))
        return withVerifier({
          results: null,
          usage: r.usage,
          note: note(true, `one call for the checklist verifier, which stopped the round before the ${names.length} members`, r.logPath),
        });
      return withVerifier(fallback(`gave no usable answer (${split.why})`));
    }
    const unrun = names.filter((n) => !ran(n));
    if (unrun.length > 0) return withVerifier(fallback(`answered for ${unrun.join(', ')} without running it as its own sub-agent`));

    const results = req.inputs.map((input, i): AgentResult => {
      const name = names[i] as string;
      const answer = split.answers[name] as string;
      const files = own(input, name, members[i]?.prompt ?? '', answer);
      return { ...answered(answer), ...files, ...memberAnswer(req.kind, input, answer, files.logPath) };
    });
    // The devil's advocate's finding, when the call ran it: read as its own call's answer would be.
    const after =
      followUp && split.followUp !== undefined && ran(followUp.name)
        ? (() => {
            const files = own(followUp.input, followUp.name, memberPrompt(followUp.input), split.followUp);
            return { ...answered(split.followUp), ...files, ...memberAnswer(req.kind, followUp.input, split.followUp, files.logPath) };
          })()
        : undefined;
    const who = after ? `${verifier ? 'the checklist verifier, ' : ''}${names.length} members and the devil's advocate` : count;
    return withVerifier({
      results,
      usage: r.usage,
      note: note(true, `one call for ${who} (claude --agents)`, r.logPath),
      ...(after ? { followUp: after } : {}),
    });
  };
}

/** A structured answer whose findings list is empty (the members were not run). */
function noFindings(structured: unknown): boolean {
  const f = (structured as { findings?: unknown } | null)?.findings;
  return Array.isArray(f) && f.length === 0;
}
