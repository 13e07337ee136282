/**
 * The agent contract: what each role's call must answer, and what an answer without it is.
 *
 * Every call tells the agent the answer it owes in `VIGIL_ANSWER` (beside `VIGIL_ROLE`), so a
 * command agent never has to guess from the prompt: `work` for the builder (its answer is the
 * tree it leaves), `vote` for council members and the council's devil's advocate, `verdict` for
 * code reviewers and the review's devil's advocate, `checklist` for the checklist extraction,
 * `items` for the checklist verifier, `tasks` for the planner of a run split into parallel streams,
 * `files` for the acceptance role (test files written into `VIGIL_ACCEPTANCE_DIR`), `prd` for the
 * discovery call of a run started from a goal (the PRD written into `VIGIL_PRD_FILE`).
 * docs/agent-contract.md is the page people read; a test
 * holds it to this module.
 *
 * An answer that came back (exit 0, some output) without its role's required line is a contract
 * error, not a quality verdict: it never counts on a gate's failure streak. The run stops
 * spending at the second check in a row that had one (supervised: a pause; perpetual: the end,
 * `contract_error`, exit 20), and what the person reads names the role, the missing line and
 * the fix. A check whose answers all parse resets the count.
 *
 * Pure: no clocks, randomness, environment or I/O.
 */
import type { ContractBreach, ContractState, Verdict } from '../schemas/run.js';
import type { ReviewRecord, ReviewerRecord } from '../schemas/gates.js';

export const ANSWERS = ['work', 'vote', 'verdict', 'checklist', 'items', 'tasks', 'lessons', 'files', 'prd'] as const;
export type Answer = (typeof ANSWERS)[number];
type Owed = Exclude<Answer, 'work'>;

/** The answer a call owes, from what its caller will parse (the devil's advocate votes in a council round and gives a verdict in a code review). */
export function answerOf(call: {
  role: string;
  parse: 'review' | 'checklist' | 'verification' | 'tasks' | null;
  parseVote: boolean;
}): Answer {
  if (call.parseVote) return 'vote';
  // The memory judge (docs/memory.md, Judgement) answers in JSON its activity reads itself.
  if (call.role === 'memory') return 'lessons';
  // The acceptance role (knob acceptanceFromPrd) answers with the test files it writes into VIGIL_ACCEPTANCE_DIR.
  if (call.role === 'acceptance') return 'files';
  // The discovery call of a run started from a goal answers with the PRD it writes into VIGIL_PRD_FILE.
  if (call.role === 'discovery') return 'prd';
  if (call.parse === 'review') return 'verdict';
  if (call.parse === 'checklist') return 'checklist';
  if (call.parse === 'verification') return 'items';
  if (call.parse === 'tasks') return 'tasks';
  return 'work';
}

/** The line (or block) each owed answer must contain, as people read it. */
export const REQUIRED_ANSWER: Record<Owed, string> = {
  vote: 'a line `VOTE: APPROVE`, `VOTE: REJECT` or `VOTE: CANNOT_VALIDATE`',
  verdict: 'a line `VERDICT: PASS` or `VERDICT: FAIL`',
  checklist: 'a JSON array of `{"id", "title", "priority", "verify"}` items',
  items: 'one line `ITEM <id>: PASS - <evidence>` (or `FAIL`) per checklist item',
  tasks: 'a JSON array of `{"id", "title", "items", "dependsOn"}` tasks (the last fenced json block, else the last top-level array)',
  lessons: 'one JSON object `{"lessons": [{"id", "lesson"}], "merges": [{"keep", "merge", "reason"}]}`',
  files: 'at least one test file written into the folder `$VIGIL_ACCEPTANCE_DIR`',
  prd: 'the PRD, in Markdown, written into the file `$VIGIL_PRD_FILE`',
};

const shortLine: Record<Owed, string> = {
  vote: 'VOTE: APPROVE|REJECT|CANNOT_VALIDATE',
  verdict: 'VERDICT: PASS|FAIL',
  checklist: 'a JSON checklist array',
  items: 'ITEM <id>: PASS|FAIL',
  tasks: 'a JSON task array',
  lessons: 'a JSON object of lessons and merges',
  files: 'test files in $VIGIL_ACCEPTANCE_DIR',
  prd: 'a PRD in $VIGIL_PRD_FILE',
};

/** A reviewer's answer that came back without a verdict line (a voided answer — the reviewer changed the tree — or a failed call is not one). */
function reviewerBreach(r: ReviewerRecord, role: 'reviewer' | 'devils-advocate', iteration: number): ContractBreach | null {
  if (r.verdict !== 'NO_VERDICT') return null;
  if (r.findings.some((f) => f.startsWith('review void'))) return null;
  return { role, who: r.reviewer.slice(0, 100), answer: 'verdict', iteration, logPath: r.logPath.slice(0, 4096) };
}

/** The contract errors of one code review. */
export function reviewBreaches(record: ReviewRecord): ContractBreach[] {
  const out: ContractBreach[] = [];
  for (const r of record.reviewers) {
    const b = reviewerBreach(r, 'reviewer', record.iteration);
    if (b) out.push(b);
  }
  const da = record.devilsAdvocate ? reviewerBreach(record.devilsAdvocate, 'devils-advocate', record.iteration) : null;
  if (da) out.push(da);
  return out;
}

/** The contract errors of one council round: members (and the devil's advocate) whose answer had no VOTE line. */
export function councilBreaches(verdict: Verdict): ContractBreach[] {
  const out: ContractBreach[] = verdict.votes
    .filter((v) => v.recorded === 'UNPARSEABLE')
    .map((v) => ({
      role: 'council' as const,
      who: `member ${v.member} (${v.role})`.slice(0, 100),
      answer: 'vote' as const,
      iteration: verdict.iteration,
      logPath: v.logPath.slice(0, 4096),
    }));
  if (verdict.devilsAdvocate?.recorded === 'UNPARSEABLE')
    out.push({ role: 'devils-advocate', who: "the council's devil's advocate", answer: 'vote', iteration: verdict.iteration, logPath: '' });
  return out;
}

/** The verifier answered (exit 0, within its time) but named no item. */
export function verifierBreach(
  answer: { exitCode: number; timedOut: boolean; answered: number } | null,
  iteration: number,
  logPath: string,
): ContractBreach | null {
  if (!answer || answer.exitCode !== 0 || answer.timedOut || answer.answered > 0) return null;
  return { role: 'checklist-verifier', who: 'the checklist verifier', answer: 'items', iteration, logPath: logPath.slice(0, 4096) };
}

/** How many checks in a row with a contract error stop the run's spending. */
export const CONTRACT_ERRORS_TO_STOP = 2;

/** One check's calls of reviewing roles against the contract: the count in a row, and whether the run stops spending now. */
export function trackContract(state: ContractState, breaches: readonly ContractBreach[]): { state: ContractState; stop: boolean } {
  if (breaches.length === 0) return { state: { ...state, consecutive: 0 }, stop: false };
  const consecutive = state.consecutive + 1;
  return { state: { consecutive, total: state.total + 1, last: breaches[0] ?? state.last }, stop: consecutive >= CONTRACT_ERRORS_TO_STOP };
}

const roleName = (b: ContractBreach): string =>
  b.role === 'council'
    ? 'council member'
    : b.role === 'devils-advocate'
      ? "devil's advocate"
      : b.role === 'checklist-verifier'
        ? 'checklist verifier'
        : b.role === 'checklist'
          ? 'checklist extraction'
          : 'code reviewer';

/** What a person reads: the role, the missing line, and what to do about it. */
export function describeBreach(b: ContractBreach): string {
  const owed = b.answer as Owed;
  const log = b.logPath ? `; its answer: ${b.logPath}` : '';
  return (
    `the ${roleName(b)} ${b.who.startsWith('the ') ? `(${b.who.slice(4)}) ` : `${b.who} `}answered without ` +
    `${REQUIRED_ANSWER[owed]} (VIGIL_ROLE=${b.role}, VIGIL_ANSWER=${b.answer}) at iteration ${b.iteration}${log}. ` +
    `This is the agent command's answer format, not the work: make the command print \`${shortLine[owed]}\` for this role (see ` +
    `docs/agent-contract.md), check it with \`vigil doctor --agent-command CMD\`, then resume or start again`
  ).slice(0, 1500);
}

/** What the builder is told when a check could not be judged for a reviewing agent's format (its work is not at fault). */
export function contractFindings(b: ContractBreach, iteration: number): string {
  return (
    `Completion at iteration ${iteration} could not be judged: the ${roleName(b)} did not answer in the required format ` +
    `(${shortLine[b.answer as Owed]}). This is not about your work; carry on with the requirements.`
  );
}
