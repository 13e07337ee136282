/**
 * Batched rounds (a CLI that runs sub-agents, Claude Code's `--agents`, spec §2.5 A): what one
 * call for a whole council round or code review is made of, and how its one answer is split back
 * into the per-member answers the rest of Vigil reads.
 *
 * - every member (or reviewer) is one declared sub-agent whose instructions are that member's own
 *   prompt, so each has its own context and sees no other's answer (blind by construction);
 * - the main agent is told to run each declared agent once and report each one's answer, as is,
 *   in a structured document (`--json-schema`): `{ "findings": [ { "agent", ... } ] }`;
 * - each finding is rendered in its role's answer format (`VOTE:`/`REASON:`/`ISSUES:` for a
 *   member, `VERDICT:` and `[Severity]` lines for a reviewer, docs/agent-contract.md) and read by
 *   the same parsers as a member's own call. A document that does not parse, or that misses a
 *   member, is a failed batch: the round asks each member on its own instead.
 *
 * Pure: no I/O (the activity, activities/round-batch.ts, makes the call and writes the files).
 */
import { z } from 'zod';
import type { Knobs } from '../schemas/knobs.js';

export type BatchKind = 'council' | 'review';

/**
 * Whether a round may ask its members in one call: the `batchRounds` knob is `auto` (the default:
 * batched where the provider can, which the activity finds out); `off` asks each member.
 */
export function roundMayBatch(knobs: Pick<Knobs, 'batchRounds'>): boolean {
  return knobs.batchRounds !== 'off';
}

/** One member of a batched call: its sub-agent's name, and the prompt its own call would have had. */
export interface BatchMember {
  name: string;
  /** Who it is, in a few words (the sub-agent's description). */
  description: string;
  prompt: string;
}

/**
 * The most the `--agents` and `--json-schema` arguments may hold together: one argument of the
 * command line is limited to 128 KiB on Linux. A round whose prompts are longer asks each member.
 */
export const BATCH_ARGS_MAX_CHARS = 120_000;

/** Votes a member may give (anything else in the document is read as CANNOT_VALIDATE). */
const VOTES = ['APPROVE', 'REJECT', 'CANNOT_VALIDATE'] as const;
const VERDICTS = ['PASS', 'FAIL'] as const;
const SEVERITIES = ['critical', 'high', 'medium', 'low'] as const;

/** A sub-agent's name: lower-case letters, digits and dashes (what the CLI accepts as an agent type). */
export function subAgentName(prefix: string, label: string): string {
  const clean = `${prefix}-${label}`
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '');
  return clean.slice(0, 64);
}

/** The `--agents` JSON: one sub-agent per member, read-only tools, the model of the call. */
export function agentsArgument(members: BatchMember[], tools: string[]): string {
  return JSON.stringify(
    Object.fromEntries(members.map((m) => [m.name, { description: m.description, prompt: m.prompt, tools, model: 'inherit' }])),
  );
}

/**
 * The PRD checklist verifier riding in a council round's batched call (from
 * `vigil-council-checklist-v1` on): its sub-agent's name, the items it answers for, and the items
 * whose FAIL (or missing line) means the members are not asked (`checklistStop`): the main agent
 * runs it first and stops there when one of them is not met, so the council is never asked while
 * the checklist blocks, and a claim the council refuses costs one call.
 */
export interface BatchVerifier {
  name: string;
  ids: string[];
  stopIf: string[];
}

/**
 * The devil's advocate riding in a round's batched call: its sub-agent's name. The main agent
 * runs it after the members, and only when every member approved (a council) or passed (a
 * review), as the round would have asked it on its own; its finding is one more in the list, in
 * the members' format. A call that leaves it out when it was due costs the round its own call,
 * as before; a finding given when it was not due is not read.
 */
export interface BatchFollowUp {
  name: string;
}

/** The `--json-schema` of the answer: one finding per declared agent (and the checklist verifier's items, when it rides along). */
export function findingsSchema(
  kind: BatchKind,
  names: string[],
  verifier?: BatchVerifier,
  followUp?: BatchFollowUp,
): Record<string, unknown> {
  const agent = {
    type: 'string',
    enum: followUp ? [...names, followUp.name] : names,
    description: 'the name of the declared agent this finding is from',
  };
  const finding =
    kind === 'council'
      ? {
          type: 'object',
          properties: {
            agent,
            vote: { type: 'string', enum: [...VOTES] },
            reason: { type: 'string', description: "the agent's one-line reason" },
            issues: {
              type: 'array',
              items: {
                type: 'object',
                properties: { severity: { type: 'string', enum: [...SEVERITIES] }, description: { type: 'string' } },
                required: ['severity', 'description'],
              },
            },
          },
          required: ['agent', 'vote', 'reason'],
        }
      : {
          type: 'object',
          properties: {
            agent,
            verdict: { type: 'string', enum: [...VERDICTS] },
            findings: {
              type: 'array',
              items: {
                type: 'object',
                properties: { severity: { type: 'string', enum: [...SEVERITIES] }, text: { type: 'string' } },
                required: ['severity', 'text'],
              },
            },
          },
          required: ['agent', 'verdict'],
        };
  if (!verifier)
    return { type: 'object', properties: { findings: { type: 'array', items: finding, minItems: names.length } }, required: ['findings'] };
  const item = {
    type: 'object',
    properties: {
      id: { type: 'string', enum: verifier.ids },
      verdict: { type: 'string', enum: [...VERDICTS] },
      evidence: { type: 'string', description: 'what shows it, or what is missing' },
    },
    required: ['id', 'verdict', 'evidence'],
  };
  const checklist = {
    type: 'object',
    properties: { agent: { type: 'string', enum: [verifier.name] }, items: { type: 'array', items: item } },
    required: ['agent', 'items'],
  };
  // The members' findings may be empty: they are not run when the checklist is not met.
  return { type: 'object', properties: { checklist, findings: { type: 'array', items: finding } }, required: ['checklist', 'findings'] };
}

/** What the main agent of a batched call is asked: run every declared agent, report each answer as given. */
export function batchPrompt(p: {
  kind: BatchKind;
  round: number;
  iteration: number;
  names: string[];
  verifier?: BatchVerifier;
  followUp?: BatchFollowUp;
}): string {
  if (p.verifier) return verifierFirstPrompt({ ...p, verifier: p.verifier });
  const what =
    p.kind === 'council'
      ? `Completion council round ${p.round}, iteration ${p.iteration}`
      : `Code review round ${p.round}, iteration ${p.iteration}`;
  const answer =
    p.kind === 'council'
      ? 'its vote (APPROVE, REJECT or CANNOT_VALIDATE), its one-line reason and its issues with their severities'
      : 'its verdict (PASS or FAIL) and its findings with their severities';
  return [
    `${what}: one call for ${p.names.length} ${p.kind === 'council' ? 'council members' : 'code reviewers'}, each declared as an agent.`,
    '',
    'Run every one of these agents exactly once, each with the Agent tool and its own name as the agent ' +
      'type, in the foreground (they may run at the same time):',
    ...p.names.map((n) => `- ${n}`),
    '',
    'Give each agent the same short task: "Carry out your instructions on this repository and answer in ' +
      'the format they ask for." Tell no agent what another found.',
    ...(p.followUp ? followUpLines(p.kind, p.followUp) : []),
    'Do not review the work yourself and do not change any file. When every agent has answered, return the structured output: one finding per agent,',
    `with the agent's name and ${answer}, exactly as that agent gave them.`,
    '',
  ].join('\n');
}

/** The devil's advocate's turn: after the members, only when every one of them approved (passed). */
function followUpLines(kind: BatchKind, f: BatchFollowUp): string[] {
  const all = kind === 'council' ? 'voted APPROVE' : 'gave the verdict PASS';
  return [
    `Then, only if every agent above ${all}: run the agent ${f.name} once, the same way, and add its finding too. Otherwise do not run it.`,
    '',
  ];
}

/** The council round's batched call with the checklist verifier in it: the verifier first, the members only when it leaves nothing blocking. */
function verifierFirstPrompt(p: {
  round: number;
  iteration: number;
  names: string[];
  verifier: BatchVerifier;
  followUp?: BatchFollowUp;
}): string {
  const v = p.verifier;
  const members = [
    'Run every one of these agents exactly once, each with the Agent tool and its own name as the agent ' +
      'type, in the foreground (they may run at the same time):',
    ...p.names.map((n) => `- ${n}`),
  ];
  const order =
    v.stopIf.length === 0
      ? [`Run the agent ${v.name} once, with the Agent tool and its own name as the agent type, in the foreground.`, ...members]
      : [
          `First run only the agent ${v.name}, with the Agent tool and its own name as the agent type, in the foreground, and wait for its answer.`,
          `If its answer gives FAIL, or no line at all, for any of these items: ${v.stopIf.join(', ')} — run no other agent: ` +
            `return the structured output with its items and an empty findings list.`,
          'Otherwise:',
          ...members,
        ];
  return [
    `Completion council round ${p.round}, iteration ${p.iteration}: one call for the PRD checklist verifier and ` +
      `${p.names.length} council members, each declared as an agent.`,
    '',
    ...order,
    '',
    ...(p.followUp ? followUpLines('council', p.followUp) : []),
    'Give each agent the same short task: "Carry out your instructions on this repository and answer in ' +
      'the format they ask for." Tell no agent what another found.',
    'Do not review the work yourself and do not change any file. Then return the structured output: the ' +
      "checklist verifier's items (each id, PASS or FAIL, and its evidence)",
    "and one finding per council agent that ran, with the agent's name and its vote (APPROVE, REJECT or " +
      'CANNOT_VALIDATE), its one-line reason and its issues with their severities, exactly as each agent ' +
      'gave them.',
    '',
  ].join('\n');
}

const CouncilFindingSchema = z.object({
  agent: z.string(),
  vote: z.string(),
  reason: z.string().default(''),
  issues: z.array(z.object({ severity: z.string(), description: z.string() })).default([]),
});
const ReviewFindingSchema = z.object({
  agent: z.string(),
  verdict: z.string(),
  findings: z.array(z.object({ severity: z.string(), text: z.string() })).default([]),
});

const oneLine = (s: string, max: number): string => s.replace(/\s+/g, ' ').trim().slice(0, max);
const severityWord = (s: string): string => {
  const l = s.trim().toLowerCase();
  return (SEVERITIES as readonly string[]).includes(l) ? l : 'medium';
};

/** A member's finding as its own call would have answered (docs/agent-contract.md). */
function councilAnswer(f: z.infer<typeof CouncilFindingSchema>): string {
  const vote = f.vote.trim().toUpperCase();
  const lines = [
    `VOTE: ${(VOTES as readonly string[]).includes(vote) ? vote : 'CANNOT_VALIDATE'}`,
    `REASON: ${oneLine(f.reason, 300) || '(none given)'}`,
  ];
  for (const i of f.issues.slice(0, 50)) lines.push(`ISSUES: ${severityWord(i.severity).toUpperCase()}: ${oneLine(i.description, 300)}`);
  return `${lines.join('\n')}\n`;
}

function reviewAnswer(f: z.infer<typeof ReviewFindingSchema>): string {
  const verdict = f.verdict.trim().toUpperCase();
  const sev = (s: string): string => {
    const w = severityWord(s);
    return w.charAt(0).toUpperCase() + w.slice(1);
  };
  const lines = f.findings.slice(0, 50).map((x) => `- [${sev(x.severity)}] ${oneLine(x.text, 300)}`);
  // An unknown verdict stays unknown: the reviewer gave no verdict (NO_VERDICT), as its own call would have.
  lines.push((VERDICTS as readonly string[]).includes(verdict) ? `VERDICT: ${verdict}` : `(verdict given: ${oneLine(f.verdict, 40)})`);
  return `${lines.join('\n')}\n`;
}

/**
 * `verifier`: the checklist verifier's answer (when it rode along), in its own format (`ITEM <id>:
 * PASS - ...` lines, read by the verifier's parser); present even when the members' part failed.
 */
export type SplitAnswer =
  { ok: true; answers: Record<string, string>; verifier?: string; followUp?: string } | { ok: false; why: string; verifier?: string };

const ChecklistPartSchema = z.object({
  items: z.array(z.object({ id: z.string(), verdict: z.string(), evidence: z.string().default('') })),
});

/** The verifier's items as its own call would have answered (ITEM lines; an unknown verdict is left out, as an unanswered item). */
function verifierAnswer(part: z.infer<typeof ChecklistPartSchema>, ids: readonly string[]): string {
  const lines: string[] = [];
  const seen = new Set<string>();
  for (const it of part.items) {
    const verdict = it.verdict.trim().toUpperCase();
    if (!ids.includes(it.id) || seen.has(it.id) || !(VERDICTS as readonly string[]).includes(verdict)) continue;
    seen.add(it.id);
    lines.push(`ITEM ${it.id}: ${verdict} - ${oneLine(it.evidence, 280) || '(no evidence given)'}`);
  }
  return lines.length > 0 ? `${lines.join('\n')}\n` : '';
}

/**
 * The batched call's structured answer split into one answer per member, in its role's format;
 * or why it cannot be (not the document asked for, a member missing). A member named twice keeps
 * its first finding; findings for agents that were not declared are ignored.
 */
export function splitFindings(
  kind: BatchKind,
  names: string[],
  structured: unknown,
  checklist?: BatchVerifier,
  followUp?: BatchFollowUp,
): SplitAnswer {
  if (structured === null || structured === undefined) return { ok: false, why: 'no structured answer' };
  const doc = z.object({ findings: z.array(z.unknown()), checklist: z.unknown().optional() }).safeParse(structured);
  if (!doc.success) return { ok: false, why: 'the answer has no findings list' };
  let verifier: string | undefined;
  if (checklist) {
    const part = ChecklistPartSchema.safeParse(doc.data.checklist);
    if (!part.success) return { ok: false, why: "the answer has no checklist verifier's items" };
    verifier = verifierAnswer(part.data, checklist.ids);
  }
  const withVerifier = <T extends object>(r: T): T & { verifier?: string } => (verifier === undefined ? r : { ...r, verifier });
  const answers: Record<string, string> = {};
  const known = followUp ? [...names, followUp.name] : names;
  for (const raw of doc.data.findings) {
    if (kind === 'council') {
      const f = CouncilFindingSchema.safeParse(raw);
      if (f.success && known.includes(f.data.agent) && answers[f.data.agent] === undefined) answers[f.data.agent] = councilAnswer(f.data);
    } else {
      const f = ReviewFindingSchema.safeParse(raw);
      if (f.success && known.includes(f.data.agent) && answers[f.data.agent] === undefined) answers[f.data.agent] = reviewAnswer(f.data);
    }
  }
  const missing = names.filter((n) => answers[n] === undefined);
  if (missing.length > 0)
    return withVerifier({
      ok: false as const,
      why: `no finding for ${missing.length === names.length ? 'any member' : missing.join(', ')}`.slice(0, 200),
    });
  const members = Object.fromEntries(names.map((n) => [n, answers[n] as string]));
  const after = followUp ? answers[followUp.name] : undefined;
  return withVerifier({ ok: true as const, answers: members, ...(after !== undefined ? { followUp: after } : {}) });
}
