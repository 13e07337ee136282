/**
 * The checklist roles' prompts (extraction at run start, verification at completion) and what
 * the run does when the extraction fails (`afterChecklistFailure`).
 *
 * Sandbox-safe: pure functions, no Node imports.
 */
import { type ChecklistItem, ChecklistItemSchema, MAX_CHECKLIST_ITEMS } from '../../schemas/gates.js';
import { MAX_TITLE_CHARS, MAX_VERIFY_CHARS, oneLine } from './common.js';

/** Asks an agent to read the PRD and answer with only a JSON array of verifiable requirements. */
export function checklistExtractionPrompt(opts: { prdPath: string; maxItems: number }): string {
  const max = Math.min(MAX_CHECKLIST_ITEMS, Math.max(1, Math.floor(Number.isFinite(opts.maxItems) ? opts.maxItems : MAX_CHECKLIST_ITEMS)));
  return [
    `Read the product requirements document at ${oneLine(opts.prdPath, 4096)} and extract a checklist of its verifiable requirements.`,
    '',
    'Rules:',
    '- Do not modify any file. Read only; do not run builds, installs or anything that writes.',
    `- At most ${max} item${max === 1 ? '' : 's'}, the most important first. One requirement per item.`,
    '- Every item must be checkable against the repository: a behaviour a test or command can show, a ' +
      'file or interface that must exist, a limit that can be measured. Leave out aspirations, non-goals ' +
      'and anything no one could check.',
    '- Ids are REQ-1, REQ-2, ... in order.',
    '- Priority is one of critical (the product is broken or unsafe without it), high (a main feature), medium (expected behaviour), low (polish).',
    '- "verify" says how a reviewer checks the item: the command to run, the test to look for, the file or output to inspect.',
    '',
    'Answer with ONLY a JSON array, no other text:',
    '[{"id": "REQ-1", "title": "<the requirement, one sentence>", "priority": "critical", "verify": "<how to verify it>"}]',
  ].join('\n');
}

/**
 * Asks a verifier agent to check each item against the repository's current state and answer one
 * `ITEM <id>: PASS|FAIL - evidence` line per item. The verifier sees every item, held out or not.
 */
export function checklistVerifierPrompt(opts: {
  items: readonly ChecklistItem[];
  prdPath: string;
  diffPath: string | null;
  testSummary: string;
}): string {
  const items = opts.items.slice(0, MAX_CHECKLIST_ITEMS).map((raw) => {
    const it = ChecklistItemSchema.parse(raw);
    const verify = oneLine(it.verify, MAX_VERIFY_CHARS);
    return `- ${it.id} (${it.priority}): ${oneLine(it.title, MAX_TITLE_CHARS)}${verify === '' ? '' : `\n  How to verify: ${verify}`}`;
  });
  const summary = opts.testSummary.trim() === '' ? '(no test results were recorded)' : opts.testSummary.slice(0, 2000).trim();
  return [
    "Verify each requirement below against the repository's current state (the working tree as it is now).",
    '',
    'Rules:',
    '- Do not modify any file. You may read files and run read-only commands and the tests.',
    '- Check each item yourself; do not take comments, commit messages or documentation as proof.',
    '- PASS only when you have seen evidence that the requirement is met; when it is missing, broken or you cannot tell, FAIL.',
    '',
    `The product requirements document: ${oneLine(opts.prdPath, 4096)}`,
    opts.diffPath === null
      ? 'No diff of this run is available: inspect the tree.'
      : `The changes made in this run, as a diff: ${oneLine(opts.diffPath, 4096)}`,
    '',
    'Latest test results:',
    summary,
    '',
    'Items:',
    ...items,
    '',
    'Answer with exactly one line per item, in this form, and nothing else:',
    'ITEM <id>: PASS - <evidence: the file, test or command output that shows it>',
    'ITEM <id>: FAIL - <what is missing or wrong>',
  ].join('\n');
}

/** Extractions a provider's trouble may spoil before the run stops asking (the first included). */
export const CHECKLIST_ATTEMPTS = 3;

/** What a failed checklist extraction says about what to do next. */
export type ChecklistRetry =
  /** Ask again once `waitSeconds` have passed (the provider's trouble may be over). */
  | { kind: 'retry'; attempt: number; waitSeconds: number; reason: string }
  /** The provider kept failing: stop asking and tell a person (supervised: pause and ask). */
  | { kind: 'give_up'; attempts: number; reason: string }
  /** Not the provider's doing (an answer without a checklist): the run goes on without one, as it says. */
  | { kind: 'none' };

/**
 * After the `attempt`-th extraction failed: a failure for a provider reason (a rate limit, an
 * auth error, an API failure, a hung call, an activity that failed outright) is asked again after
 * the wait the provider named (else `baseWaitSeconds` times the attempt), up to
 * `CHECKLIST_ATTEMPTS`; then a person is told. Any other failure is final at once.
 */
export function afterChecklistFailure(f: {
  attempt: number;
  providerReason: string | null;
  rateLimitWaitSeconds: number | null;
  baseWaitSeconds: number;
}): ChecklistRetry {
  if (f.providerReason === null) return { kind: 'none' };
  if (f.attempt >= CHECKLIST_ATTEMPTS) return { kind: 'give_up', attempts: f.attempt, reason: f.providerReason };
  const waitSeconds = Math.max(1, f.rateLimitWaitSeconds ?? f.baseWaitSeconds * f.attempt);
  return { kind: 'retry', attempt: f.attempt, waitSeconds, reason: f.providerReason };
}
