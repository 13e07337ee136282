/**
 * What a council member and the devil's advocate are asked (spec §2.6, §2.8 A): a role
 * instruction, the evidence pack, and the output contract the vote parser reads.
 */
import type { MemberRole } from './council.js';
import type { Severity } from './vote.js';

const ROLE_TEXT: Record<MemberRole, string> = {
  'requirements-verifier':
    'You are the REQUIREMENTS VERIFIER. Check that every requirement in the PRD is implemented in the repository, not just planned or stubbed.',
  'test-auditor':
    'You are the TEST AUDITOR. Check that the requirements are covered by adequate, passing tests. A project without passing tests is not complete.',
  'devils-advocate-minded':
    "You are the DEVIL'S ADVOCATE. Look for reasons the work is NOT complete: error handling, security, " +
    'performance, documentation, edge cases, hard-coded values, TODOs.',
};

export interface CouncilPromptInput {
  role: MemberRole;
  member: number;
  size: number;
  iteration: number;
  prdPath: string;
  evidencePath: string;
  severityThreshold: Severity;
}

const CONTRACT = [
  'Answer in this exact format:',
  // Written so that a prompt echoed back by the provider does not parse as a vote.
  'VOTE: <APPROVE|REJECT|CANNOT_VALIDATE>   (exactly one line)',
  'REASON: <one line>',
  'ISSUES: <CRITICAL|HIGH|MEDIUM|LOW>:<description>   (zero or more lines)',
];

export function councilPrompt(p: CouncilPromptInput): string {
  return [
    `You are member ${p.member + 1} of ${p.size} of a completion council deciding, independently and without seeing the other ` +
      `votes, whether the work in this repository is complete (iteration ${p.iteration}).`,
    ROLE_TEXT[p.role],
    `Requirements (PRD): ${p.prdPath}`,
    `Evidence pack: ${p.evidencePath} (git status, recent commits, diff since the run started, latest test results). Inspect ` +
      `the repository itself as needed; do not modify anything.`,
    p.severityThreshold !== 'low'
      ? `Issues below ${p.severityThreshold.toUpperCase()} severity do not block completion on their own; list every issue you find with its severity.`
      : 'List every issue you find with its severity.',
    '',
    ...CONTRACT,
  ].join('\n');
}

export function devilsAdvocatePrompt(p: Omit<CouncilPromptInput, 'role' | 'member'>): string {
  return [
    `The completion council voted UNANIMOUSLY (${p.size} of ${p.size}) that the work in this repository is complete (iteration ${p.iteration}).`,
    'Unanimity is suspicious. Your job is to refute it: look hard for any reason to refuse completion — ' +
      'unmet requirements, failing or missing tests, broken edge cases, security problems, stubs and TODOs.',
    `Requirements (PRD): ${p.prdPath}`,
    `Evidence pack: ${p.evidencePath}. Do not modify anything.`,
    'Approve only if you find nothing at all.',
    '',
    ...CONTRACT,
  ].join('\n');
}
