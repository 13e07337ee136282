/**
 * One completion-council round, orchestrated (spec §2.4): the evidence gate first (a block ends
 * the round before anyone is asked), then the PRD checklist verifier when the round carries it
 * (from `vigil-council-checklist-v1` on; an answer that leaves the checklist blocked ends the round
 * before any member is asked, with no verdict), then every member votes in parallel, blind to each
 * other, then the tally, then the devil's advocate on a unanimous approval, then the transcript.
 * Where the provider runs sub-agents, the verifier and the members are one call whose main agent
 * runs the verifier first and the members only when it leaves nothing blocking: a claim the
 * council refuses costs one call. Also the evidence check alone, for completion claims judged
 * without a council.
 *
 * Deterministic, no I/O of its own: a round runs inside its one activity (activities/rounds.ts),
 * its calls injected; the evidence check alone (`checkEvidence`) also runs as workflow code, its
 * call an activity, for a claim judged without a council. The rules live in `rules/`.
 */
import { ActivityFailure } from '@temporalio/common';
import type { AgentResult, EvidenceFactsResult, RunAgentInput } from '../schemas/activities.js';
import type { Knobs } from '../schemas/knobs.js';
import type { EvidenceRecord, Verdict, VoteRecord } from '../schemas/run.js';
import { verificationBlocks } from '../rules/checklist/state.js';
import { applyDevilsAdvocate, applySeverityBudget, devilsAdvocateDue, memberRole, tally } from '../rules/council.js';
import { councilPrompt, devilsAdvocatePrompt } from '../rules/council-prompt.js';
import { chooseAgent, silenceSeconds } from '../rules/agent-choice.js';
import type { RunAuthorization } from '../schemas/authorization.js';
import type { ConveneTrigger } from '../rules/convene.js';
import { judgeEvidence, type EvidenceVerdict } from '../rules/evidence.js';
import { recordVote } from '../rules/vote.js';
import { agentResultOf } from './agent-result.js';
import type { BatchCall, RoundCalls } from './calls.js';
import { sandboxArgs } from '../rules/sandbox.js';
import { roundMayBatch } from '../rules/round-batch.js';
import type { RoleSandbox } from '../schemas/sandbox.js';

/** What a round calls: activities from the workflow, or the same functions in process inside the round's own activity (activities/rounds.ts). */
export interface CouncilDeps {
  /** git and file activities (evidence, transcript). */
  repo: Pick<RoundCalls, 'collectEvidence' | 'writeTranscript'>;
  /**
   * Council member and devil's advocate calls, bounded by the member timeout; `batch`: the members as one call where the
   * provider can (round activities only).
   */
  members: Pick<RoundCalls, 'runAgent'> & { batch?: BatchCall };
}

export interface EvidenceInput {
  runId: string;
  repoPath: string;
  prdPath: string;
  round: number;
  iteration: number;
  knobs: Knobs;
  /** The run's signature, handed to every member call (workers that require signed runs check it). */
  authorization?: RunAuthorization | null;
  runStart: { sha: string | null; treeHash: string } | null;
  tests: { passed: boolean; timedOut: boolean; logPath: string } | null;
  testSummary: string;
  convergenceSummary: string;
  /** The integrity and gaming findings lifted by a waiver or a checklist item, for the evidence pack (absent: none). */
  liftedFindings?: string;
  /** Runs from `vigil-lean-prompt-v1` on: the prompts as their parts (the activity renders them), tails only of failed calls. */
  leanPrompt?: boolean;
}

/**
 * The PRD checklist verifier's call a council round carries (from `vigil-council-checklist-v1` on) and what its answer
 * must say for the members to be asked (rules/checklist/state.ts, checklistStop).
 */
export interface CarriedChecklist {
  call: RunAgentInput;
  mustPass: string[];
  mustNotFail: string[];
}

export interface RoundInput extends EvidenceInput {
  trigger: ConveneTrigger;
  at: string;
  /** The checklist verifier's call the round carries, and the rule its answer is judged by (round activities only; schemas/rounds.ts). */
  checklist?: CarriedChecklist | null;
}

export interface RoundResult {
  /** null: the checklist verifier the round carried left the checklist blocked, and no member was asked. */
  verdict: Verdict | null;
  evidence: EvidenceVerdict;
  approved: boolean;
  /** What the member and devil's advocate calls reported they cost. */
  usages: NonNullable<AgentResult['usage']>[];
  /** The calls asked one by one that answered without a cost (a `command` agent's): counted as unpriced. Absent: none, or an older round. */
  unpriced?: number;
  /** How the calls were isolated and what the sandbox refused them, by role (a batched call once). */
  sandbox?: RoleSandbox[];
  /** The carried checklist verifier's answer (null: its call was lost); absent when the round carried none, or the evidence gate blocked first. */
  checklist?: AgentResult | null;
}

export function evidenceRecord(
  iteration: number,
  v: EvidenceVerdict,
  facts: Pick<EvidenceFactsResult, 'filesChanged'>,
  testsPassed: boolean | null,
): EvidenceRecord {
  return {
    iteration,
    pass: v.pass,
    reason: v.reason,
    failures: v.failures,
    inconclusive: v.inconclusive.slice(0, 10),
    filesChanged: facts.filesChanged,
    testsPassed,
  };
}

/** A call's input without the tree it starts on (a call after the members hashes its own: a member may have changed it). */
function withoutTreeBefore<T extends { treeBefore?: string }>(input: T): Omit<T, 'treeBefore'> {
  const { treeBefore: _known, ...rest } = input;
  return rest;
}

/** Gathers the facts (diff, secrets, the evidence pack) and judges them. */
export async function checkEvidence(
  deps: { repo: Pick<CouncilDeps['repo'], 'collectEvidence'> },
  input: EvidenceInput,
): Promise<{ facts: EvidenceFactsResult; verdict: EvidenceVerdict }> {
  const k = input.knobs;
  const facts = await deps.repo.collectEvidence.executeWithOptions(
    { summary: `evidence for round ${input.round} (iteration ${input.iteration})` },
    [
      {
        runId: input.runId,
        repoPath: input.repoPath,
        prdPath: input.prdPath,
        round: input.round,
        iteration: input.iteration,
        runStartSha: input.runStart?.sha ?? null,
        runStartTree: input.runStart?.treeHash ?? null,
        secretScan: k.evidenceGate && k.evidenceSecretScan,
        testSummary: input.testSummary,
        convergenceSummary: k.councilBlind ? null : input.convergenceSummary,
        ...(input.liftedFindings ? { liftedFindings: input.liftedFindings } : {}),
      },
    ],
  );
  const verdict = judgeEvidence(
    { baseline: facts.baseline, filesChanged: facts.filesChanged, tests: input.tests, secrets: facts.secrets },
    { evidenceGate: k.evidenceGate, evidenceNoTestsAffirmative: k.evidenceNoTestsAffirmative },
  );
  return { facts, verdict };
}

/** A member call that never completed counts as a lost call (REJECT), not as a failed round. */
async function memberCall(call: () => Promise<AgentResult>, compact?: boolean): Promise<AgentResult | null> {
  try {
    return agentResultOf(await call(), compact);
  } catch (err) {
    if (err instanceof ActivityFailure) return null;
    throw err;
  }
}

export function voteRecord(member: number, role: string, r: AgentResult | null, k: Knobs): VoteRecord {
  if (r?.reviewChangedTree && r.reviewChangedTree.length > 0) {
    // A reviewer may read, never write: whatever it answered, its vote is void.
    const files = r.reviewChangedTree;
    return {
      member,
      role,
      recorded: 'REJECT',
      approves: false,
      overridden: false,
      reason:
        `vote void: the reviewer changed the working tree (${files.slice(0, 5).join(', ')}${files.length > 5 ? `, +${files.length - 5} more` : ''})`.slice(
          0,
          300,
        ),
      issues: 0,
      logPath: r.logPath,
    };
  }
  const parsed = r?.vote ?? { vote: null, reason: null, issues: [] };
  const rec = recordVote({
    exitCode: r?.exitCode ?? -1,
    timedOut: r?.timedOut ?? false,
    lost: r === null,
    outputBytes: r?.outputBytes ?? 0,
    parsed,
  });
  // Only a member that answered REJECT (or CANNOT_VALIDATE) is reconsidered; a failed call never is.
  const reconsider = rec.recorded === 'REJECT' || rec.recorded === 'CANNOT_VALIDATE';
  const budget = reconsider
    ? applySeverityBudget(rec.approves, parsed.issues, k.councilSeverityThreshold, k.councilErrorBudget)
    : { approves: rec.approves, overridden: false };
  return {
    member,
    role,
    recorded: rec.recorded,
    approves: budget.approves,
    overridden: budget.overridden,
    reason: rec.reason.slice(0, 300),
    issues: parsed.issues.length,
    logPath: r?.logPath ?? '',
  };
}

export async function runCouncilRound(deps: CouncilDeps, input: RoundInput): Promise<RoundResult> {
  const k = input.knobs;
  const { facts, verdict: evidence } = await checkEvidence(deps, input);
  const testsPassed = input.tests ? input.tests.passed : null;
  const base = {
    round: input.round,
    iteration: input.iteration,
    trigger: input.trigger,
    size: k.councilSize,
    evidence: evidenceRecord(input.iteration, evidence, facts, testsPassed),
    at: input.at,
  };

  let verdict: Omit<Verdict, 'transcriptPath'>;
  const usages: NonNullable<AgentResult['usage']>[] = [];
  let unpriced = 0;
  /** A call asked on its own: its cost, or one more call that reported none (a lost call is not counted: it may not have run). */
  const cost = (r: AgentResult | null | undefined): void => {
    if (r?.usage) usages.push(r.usage);
    else if (r) unpriced += 1;
  };
  const sandbox: RoleSandbox[] = [];
  let checklist: AgentResult | null | undefined;
  if (!evidence.pass) {
    // The gate blocks before anyone is asked: no member call is spent on disproven work.
    verdict = {
      ...base,
      result: 'BLOCKED_BY_GATE',
      approve: 0,
      reject: 0,
      threshold: tally([], k.councilSize, k.councilThreshold).threshold,
      votes: [],
      devilsAdvocate: null,
    };
  } else {
    const councilSpec = {
      size: k.councilSize,
      iteration: input.iteration,
      prdPath: input.prdPath,
      evidencePath: facts.evidencePath,
      severityThreshold: k.councilSeverityThreshold,
    };
    const memberInput = (i: number) => ({
      runId: input.runId,
      // The members start together on the tree the evidence was just gathered from.
      ...(facts.treeHash ? { treeBefore: facts.treeHash } : {}),
      repoPath: input.repoPath,
      ...chooseAgent(k, 'council', k.tier),
      authorization: input.authorization ?? null,
      ...(input.leanPrompt
        ? { promptSpec: { kind: 'council' as const, role: memberRole(i), member: i, ...councilSpec }, tailOnFailure: true, compact: true }
        : {
            prompt: councilPrompt({
              role: memberRole(i),
              member: i,
              size: k.councilSize,
              iteration: input.iteration,
              prdPath: input.prdPath,
              evidencePath: facts.evidencePath,
              severityThreshold: k.councilSeverityThreshold,
            }),
          }),
      role: 'council' as const,
      // The run's iteration, as every role gets it (VIGIL_ITERATION); the round has its own variable.
      iteration: input.iteration,
      phase: 'VERIFY' as const,
      tier: k.tier,
      timeoutSeconds: k.councilMemberTimeoutSeconds,
      silenceSeconds: silenceSeconds(k),
      completionPromise: '',
      extraEnv: {
        VIGIL_MEMBER: String(i),
        VIGIL_COUNCIL_ROLE: memberRole(i),
        VIGIL_COUNCIL_ROUND: String(input.round),
        VIGIL_EVIDENCE_FILE: facts.evidencePath,
      },
      parseVote: true,
      ...sandboxArgs(k),
    });
    // The devil's advocate's call, asked on a unanimous approval (in the members' batched call where it can share it).
    const devilsAdvocateInput = (): RunAgentInput => ({
      ...withoutTreeBefore(memberInput(0)),
      ...chooseAgent(k, 'devils-advocate', k.tier),
      ...(input.leanPrompt
        ? { promptSpec: { kind: 'council-devils-advocate' as const, ...councilSpec } }
        : {
            prompt: devilsAdvocatePrompt({
              size: k.councilSize,
              iteration: input.iteration,
              prdPath: input.prdPath,
              evidencePath: facts.evidencePath,
              severityThreshold: k.councilSeverityThreshold,
            }),
          }),
      role: 'devils-advocate',
      extraEnv: { VIGIL_COUNCIL_ROUND: String(input.round), VIGIL_EVIDENCE_FILE: facts.evidencePath },
    });
    const carried = input.checklist ?? null;
    // Where the provider runs sub-agents (claude --agents), the members go out as one call; a failed one asks each member.
    const mayBatch = deps.members.batch !== undefined && roundMayBatch(k);
    const batchOf = (withVerifier: boolean) =>
      deps.members.batch?.({
        kind: 'council',
        round: input.round,
        iteration: input.iteration,
        inputs: Array.from({ length: k.councilSize }, (_, i) => memberInput(i)),
        labels: Array.from({ length: k.councilSize }, (_, i) => `council member ${i} (${memberRole(i)})`),
        ...(withVerifier && carried
          ? { verifier: { input: carried.call, label: 'PRD checklist verifier', stopIf: [...carried.mustPass, ...carried.mustNotFail] } }
          : {}),
        followUp: { input: devilsAdvocateInput(), label: "devil's advocate" },
      }) ?? Promise.resolve(null);
    // The checklist verifier the round carries rides in the members' call, which its main agent runs first.
    let batch = mayBatch && carried ? await batchOf(true) : null;
    let batchNoted = false;
    if (batch?.usage) usages.push(batch.usage);
    if (carried) {
      // The checklist first: the council is not asked while it blocks completion.
      const inBatch = batch?.verifier !== undefined;
      checklist = inBatch
        ? (batch?.verifier ?? null)
        : await memberCall(
            () =>
              deps.members.runAgent.executeWithOptions(
                { summary: `council round ${input.round} · PRD checklist verifier (iteration ${input.iteration})` },
                [carried.call],
              ),
            input.leanPrompt,
          );
      if (!inBatch) cost(checklist);
      // A batched call is one process: its report once (here, as the council's).
      if (checklist?.sandbox) sandbox.push({ role: inBatch ? 'council' : 'checklist-verifier', report: checklist.sandbox });
      batchNoted = inBatch;
      if (
        verificationBlocks(
          { blockedAnyway: false, mustPass: carried.mustPass, mustNotFail: carried.mustNotFail },
          checklist?.verification ?? {},
        )
      ) {
        return {
          verdict: null,
          evidence,
          approved: false,
          usages,
          ...(unpriced ? { unpriced } : {}),
          ...(sandbox.length ? { sandbox } : {}),
          checklist,
        };
      }
    }
    // Not batched with the verifier (it could not share the call): the members' own batched call.
    if (mayBatch && batch === null) {
      batch = await batchOf(false);
      if (batch?.usage) usages.push(batch.usage);
    }
    const results =
      batch?.results ??
      (await Promise.all(
        Array.from({ length: k.councilSize }, (_, i) =>
          memberCall(
            () =>
              deps.members.runAgent.executeWithOptions({ summary: `council round ${input.round} · member ${i} (${memberRole(i)})` }, [
                memberInput(i),
              ]),
            input.leanPrompt,
          ),
        ),
      ));
    for (const r of results) {
      // Members that answered in a batched call: the cost is the call's (above).
      if (!batch?.results) cost(r);
      else if (r?.usage) usages.push(r.usage);
    }
    // A batched call is one process: its report once.
    for (const r of batch?.results ? (batchNoted ? [] : results.slice(0, 1)) : results)
      if (r?.sandbox) sandbox.push({ role: 'council', report: r.sandbox });
    const votes = results.map((r, i) => voteRecord(i, memberRole(i), r, k));
    let t = tally(
      votes.map((v) => v.approves),
      k.councilSize,
      k.councilThreshold,
    );
    let devilsAdvocate: Verdict['devilsAdvocate'] = null;
    if (devilsAdvocateDue(t)) {
      // Its answer from the members' batched call when it ran there (its cost is the call's), else a call of its own.
      const inBatch = batch?.followUp;
      const da =
        inBatch ??
        (await memberCall(
          () =>
            deps.members.runAgent.executeWithOptions({ summary: `council round ${input.round} · devil's advocate` }, [
              devilsAdvocateInput(),
            ]),
          input.leanPrompt,
        ));
      if (!inBatch) cost(da);
      if (!inBatch && da?.sandbox) sandbox.push({ role: 'devils-advocate', report: da.sandbox });
      const rec = voteRecord(0, 'devils-advocate', da, { ...k, councilSeverityThreshold: 'low' });
      const after = applyDevilsAdvocate(t, rec.recorded === 'APPROVE');
      devilsAdvocate = { triggered: true, flipped: after.flipped, recorded: rec.recorded, reason: rec.reason };
      t = after;
    }
    verdict = {
      ...base,
      result: t.verdict === 'COMPLETE' ? 'APPROVED' : 'REJECTED',
      approve: t.approve,
      reject: t.reject,
      threshold: t.threshold,
      votes,
      devilsAdvocate,
      ...(batch ? { batch: batch.note } : {}),
    };
  }

  const transcriptPath = await deps.repo.writeTranscript.executeWithOptions({ summary: `transcript of council round ${input.round}` }, [
    {
      runId: input.runId,
      repoPath: input.repoPath,
      round: input.round,
      transcript: { ...verdict, evidencePath: facts.evidencePath, changedFiles: facts.changedFiles, secrets: facts.secrets },
    },
  ]);
  return {
    verdict: { ...verdict, transcriptPath },
    evidence,
    approved: verdict.result === 'APPROVED',
    usages,
    ...(unpriced ? { unpriced } : {}),
    ...(sandbox.length ? { sandbox } : {}),
    ...(checklist !== undefined ? { checklist } : {}),
  };
}

/** One paragraph for the next prompt: why the council did not approve. */
export function describeRejection(v: Verdict): string {
  if (v.result === 'APPROVED') return '';
  if (v.result === 'BLOCKED_BY_GATE') {
    const failures = v.evidence.failures.map((f) => `- ${f}`).join('\n');
    return `The completion council (round ${v.round}) was blocked by the evidence gate: ${v.evidence.reason}.\n${failures}`;
  }
  const lines = v.votes
    .filter((x) => !x.approves)
    .map((x) => `- member ${x.member} (${x.role}): ${x.recorded}${x.reason ? ` — ${x.reason}` : ''}`);
  if (v.devilsAdvocate?.flipped)
    lines.push(`- devil's advocate: ${v.devilsAdvocate.recorded}${v.devilsAdvocate.reason ? ` — ${v.devilsAdvocate.reason}` : ''}`);
  return `The completion council (round ${v.round}) did not approve: ${v.approve} of ${v.size} approved, ${v.threshold} needed.\n${lines.join('\n')}`;
}
