/**
 * Owns `vigil doctor --agent-command CMD` and `vigil doctor --provider P --contract`: drives every
 * role of the agent contract (docs/agent-contract.md) once, with the prompt Vigil would send and
 * the variables it would set, in a scratch repository, and reads each answer with the parser the
 * run uses. One line per role: ✓ when the answer has what the role owes, ✗ with the missing line
 * and the fix otherwise. Nothing here touches a run or Temporal.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync, mkdirSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { execa } from 'execa';
import type { AgentRole } from '../schemas/activities.js';
import type { ChecklistItem } from '../schemas/gates.js';
import { prepareCall, interpretCall } from '../lib/providers/call.js';
import type { ProviderName } from '../lib/providers/index.js';
import { answerOf, REQUIRED_ANSWER, type Answer } from '../rules/contract.js';
import { parseChecklistOutput } from '../rules/checklist/extraction.js';
import { checklistExtractionPrompt, checklistVerifierPrompt } from '../rules/checklist/prompts.js';
import { parseVerifierOutput } from '../rules/checklist/verifier.js';
import { councilPrompt, devilsAdvocatePrompt } from '../rules/council-prompt.js';
import { devilsAdvocateReviewPrompt, reviewerPrompt, reviewerRecord } from '../rules/review.js';
import { judgePrompt, judgeSelection, parseJudgeAnswer, type JudgeItem } from '../rules/memory-judge.js';
import { parsePlannerAnswer, plannerPrompt } from '../rules/tasks.js';
import { parseVote } from '../rules/vote.js';
import { acceptanceAuthorPrompt, withRepositoryMap } from '../rules/acceptance-author.js';
import { inspectAcceptanceDir } from '../lib/acceptance-files.js';

export interface ContractCheck {
  /** The role and, for the devil's advocate, its use. */
  role: string;
  answer: Answer;
  ok: boolean;
  /**
   * Whether a wrong answer stops a run: an optional role's is a warning (its answer has a fallback,
   * and it is asked only when a knob calls for it; `optional` says when).
   */
  required: boolean;
  /** When an optional role is asked, and what a wrong answer costs (null: a required role). */
  optional: string | null;
  detail: string;
  /** What to do about it; null when ok. */
  fix: string | null;
}

export interface ContractOptions {
  provider: ProviderName;
  /** The agent command (`command`), or an override of the CLI's binary. */
  argv: string[];
  /** Per call; default 120 s. */
  timeoutMs?: number;
  env?: NodeJS.ProcessEnv;
  /** Progress lines (one per role as it starts); default none. */
  progress?: (line: string) => void;
}

const SAMPLE_ITEMS: ChecklistItem[] = [
  {
    id: 'REQ-1',
    title: 'src/greet.js exports greet(name) returning "Hello, <name>!"',
    priority: 'critical',
    verify: 'import it and call greet("Ada")',
  },
  { id: 'REQ-2', title: 'The README documents greet with one example', priority: 'medium', verify: 'read README.md' },
];

/** A scratch git repository with a small PRD, a change since its first commit, and an evidence file. */
function scratchRepository(): {
  repo: string;
  prdPath: string;
  diffPath: string;
  evidencePath: string;
  acceptanceDir: string;
  cleanup: () => void;
} {
  const root = mkdtempSync(path.join(os.tmpdir(), 'vigil-doctor-contract-'));
  const repo = path.join(root, 'repo');
  mkdirSync(path.join(repo, 'src'), { recursive: true });
  writeFileSync(path.join(repo, 'README.md'), '# greet\n\nSays hello.\n');
  const git = (...args: string[]): void =>
    void execFileSync('git', args, {
      cwd: repo,
      stdio: 'ignore',
      env: {
        ...process.env,
        GIT_AUTHOR_NAME: 'vigil',
        GIT_AUTHOR_EMAIL: 'vigil@vigil.invalid',
        GIT_COMMITTER_NAME: 'vigil',
        GIT_COMMITTER_EMAIL: 'vigil@vigil.invalid',
      },
    });
  git('init', '-q', '-b', 'main');
  git('add', '-A');
  git('commit', '-q', '-m', 'initial');
  writeFileSync(path.join(repo, 'src/greet.js'), '/** Greets someone. */\nexport function greet(name) {\n  return `Hello, ${name}!`;\n}\n');
  const prdPath = path.join(root, 'PRD.md');
  writeFileSync(
    prdPath,
    '# greet\n\n1. `src/greet.js` exports `greet(name)` returning `Hello, <name>!`.\n2. The README documents greet with one example.\n',
  );
  const diffPath = path.join(root, 'review.diff');
  writeFileSync(
    diffPath,
    'diff --git a/src/greet.js b/src/greet.js\nnew file mode 100644\n--- /dev/null\n+++ ' +
      'b/src/greet.js\n@@ -0,0 +1,4 @@\n+/** Greets someone. */\n+export function greet(name) {\n+  return ' +
      '`Hello, ${name}!`;\n+}\n',
  );
  const evidencePath = path.join(root, 'evidence.md');
  writeFileSync(
    evidencePath,
    '# Evidence\n\n## Diff since the run started\n\nsrc/greet.js added (4 lines).\n\n## Tests\n\nNo test runner.\n',
  );
  const acceptanceDir = path.join(root, 'acceptance');
  mkdirSync(acceptanceDir);
  return { repo, prdPath, diffPath, evidencePath, acceptanceDir, cleanup: () => rmSync(root, { recursive: true, force: true }) };
}

/** Two near-duplicate anti-patterns, as the memory judge is shown them (docs/memory.md, Judgement). */
const SAMPLE_MEMORY: JudgeItem[] = [
  {
    id: 1,
    repo: '/repo',
    kind: 'anti_pattern',
    title: 'Test "greets by name" failed 3 times for the same reason: Expected values to be strictly equal',
    body: 'Test "greets by name" failed 3 times for the same reason: Expected values to be strictly equal. No fix is recorded yet.',
    keywords: ['tests', 'greets', 'name', 'expected', 'values', 'strictly', 'equal'],
    lesson: null,
  },
  {
    id: 2,
    repo: '/repo',
    kind: 'anti_pattern',
    title: 'Test "greets by name" failed 3 times for the same reason: expected values to be strictly equal, got undefined',
    body: 'Test "greets by name" failed 3 times: expected values to be strictly equal, got undefined. No fix is recorded yet.',
    keywords: ['tests', 'greets', 'name', 'expected', 'values', 'strictly', 'equal', 'undefined'],
    lesson: null,
  },
];

/**
 * The roles a run can do without: asked only when a knob calls for them, and a wrong answer falls
 * back to what Vigil does without them, so the run goes on (workflows/run/streams.ts,
 * activities/memory-judge.ts).
 */
const OPTIONAL_ROLES: Partial<Record<string, string>> = {
  planner: 'asked only with parallelStreams above 1 and taskPlanner=agent; a wrong answer falls back to one task per checklist item',
  memory: 'asked after a run that ends with the event store on (memoryJudge); a wrong answer leaves the lessons unphrased',
  acceptance:
    'asked only with acceptanceFromPrd (vigil start --acceptance-from-prd); a wrong answer ends such a run failed before the builder starts',
};

interface RoleCase {
  label: string;
  role: AgentRole;
  parse: 'review' | 'checklist' | 'verification' | 'tasks' | null;
  parseVote: boolean;
  prompt: string;
  extraEnv: Record<string, string>;
  /** What is wrong with the answer (null: it is what the role owes). */
  judge: (text: string) => string | null;
}

function cases(s: ReturnType<typeof scratchRepository>): RoleCase[] {
  const reviewInput = {
    diffPath: s.diffPath,
    diffBytes: 200,
    files: ['src/greet.js'],
    testSummary: 'No test results.',
    prdPath: s.prdPath,
    round: 1,
    iteration: 1,
  };
  const verdict = (text: string): string | null => {
    const r = reviewerRecord({ reviewer: 'doctor', exitCode: 0, output: text, lost: false, logPath: '' });
    return r.verdict === 'PASS' || r.verdict === 'FAIL' ? null : 'no `VERDICT: PASS` or `VERDICT: FAIL` line';
  };
  const vote = (text: string): string | null =>
    parseVote(text).vote === null ? 'no `VOTE: APPROVE`, `VOTE: REJECT` or `VOTE: CANNOT_VALIDATE` line' : null;
  const council = { size: 3, iteration: 1, prdPath: s.prdPath, evidencePath: s.evidencePath, severityThreshold: 'low' as const };
  return [
    {
      label: 'iteration',
      role: 'iteration',
      parse: null,
      parseVote: false,
      prompt: `Read the PRD at ${s.prdPath} and implement what it asks in this repository.`,
      extraEnv: {},
      judge: () => null,
    },
    {
      label: 'checklist',
      role: 'checklist',
      parse: 'checklist',
      parseVote: false,
      prompt: checklistExtractionPrompt({ prdPath: s.prdPath, maxItems: 20 }),
      extraEnv: {},
      judge: (text) => {
        const r = parseChecklistOutput(text);
        return r.ok ? null : r.error;
      },
    },
    {
      label: 'checklist-verifier',
      role: 'checklist-verifier',
      parse: 'verification',
      parseVote: false,
      prompt: checklistVerifierPrompt({ items: SAMPLE_ITEMS, prdPath: s.prdPath, diffPath: s.diffPath, testSummary: 'No test results.' }),
      extraEnv: {},
      judge: (text) => {
        const got = parseVerifierOutput(
          text,
          SAMPLE_ITEMS.map((i) => i.id),
        );
        const missing = SAMPLE_ITEMS.filter((i) => !(i.id in got)).map((i) => i.id);
        return missing.length === 0 ? null : `no \`ITEM <id>: PASS|FAIL\` line for ${missing.join(', ')}`;
      },
    },
    {
      label: 'planner',
      role: 'planner',
      parse: 'tasks',
      parseVote: false,
      prompt: plannerPrompt({ prdPath: s.prdPath, items: SAMPLE_ITEMS, parallelStreams: 2 }),
      extraEnv: {},
      judge: (text) => {
        const r = parsePlannerAnswer(
          text,
          SAMPLE_ITEMS.map((i) => i.id),
        );
        return r.ok ? null : r.error;
      },
    },
    {
      label: 'memory',
      role: 'memory',
      parse: null,
      parseVote: false,
      prompt: judgePrompt(judgeSelection(SAMPLE_MEMORY, SAMPLE_MEMORY)),
      extraEnv: {},
      judge: (text) => {
        const r = parseJudgeAnswer(text, SAMPLE_MEMORY);
        return r.ok ? null : r.error;
      },
    },
    {
      label: 'acceptance',
      role: 'acceptance',
      parse: null,
      parseVote: false,
      prompt: withRepositoryMap(acceptanceAuthorPrompt({ prdPath: s.prdPath }), 'README.md\nsrc/greet.js'),
      extraEnv: { VIGIL_ACCEPTANCE_DIR: s.acceptanceDir },
      // The same check as the seal's: at least one test file, every file regular and parsing.
      judge: () => {
        const seen = inspectAcceptanceDir(s.acceptanceDir, s.repo);
        return seen.ok ? null : seen.reason.replace(s.acceptanceDir, '$VIGIL_ACCEPTANCE_DIR');
      },
    },
    {
      label: 'reviewer',
      role: 'reviewer',
      parse: 'review',
      parseVote: false,
      prompt: reviewerPrompt({ ...reviewInput, reviewer: 'requirements-verifier' }),
      extraEnv: { VIGIL_REVIEWER: 'requirements-verifier', VIGIL_REVIEW_ROUND: '1' },
      judge: verdict,
    },
    {
      label: 'devils-advocate (code review)',
      role: 'devils-advocate',
      parse: 'review',
      parseVote: false,
      prompt: devilsAdvocateReviewPrompt(reviewInput),
      extraEnv: { VIGIL_REVIEWER: 'devils-advocate', VIGIL_REVIEW_ROUND: '1' },
      judge: verdict,
    },
    {
      label: 'council',
      role: 'council',
      parse: null,
      parseVote: true,
      prompt: councilPrompt({ ...council, role: 'requirements-verifier', member: 0 }),
      extraEnv: {
        VIGIL_MEMBER: '0',
        VIGIL_COUNCIL_ROLE: 'requirements-verifier',
        VIGIL_COUNCIL_ROUND: '1',
        VIGIL_EVIDENCE_FILE: s.evidencePath,
      },
      judge: vote,
    },
    {
      label: 'devils-advocate (council)',
      role: 'devils-advocate',
      parse: null,
      parseVote: true,
      prompt: devilsAdvocatePrompt(council),
      extraEnv: { VIGIL_COUNCIL_ROUND: '1', VIGIL_EVIDENCE_FILE: s.evidencePath },
      judge: vote,
    },
  ];
}

/** Drives every role once; the checks in contract order. */
export async function checkContract(opts: ContractOptions): Promise<ContractCheck[]> {
  const s = scratchRepository();
  const out: ContractCheck[] = [];
  try {
    for (const c of cases(s)) {
      opts.progress?.(`  … ${c.label}`);
      const answer = answerOf(c);
      const promptPath = path.join(path.dirname(s.repo), `prompt-${c.label.replace(/\W+/g, '-')}.md`);
      writeFileSync(promptPath, c.prompt);
      const optional = OPTIONAL_ROLES[c.label] ?? null;
      const kind = { required: optional === null, optional };
      let call;
      try {
        call = await prepareCall({
          provider: opts.provider,
          argv: opts.argv,
          prompt: c.prompt,
          promptPath,
          role: c.role,
          tier: 'development',
          model: null,
          effort: null,
          fallbackModel: null,
          remainingBudgetUsd: null,
          resumeSession: null,
          fresh: true,
        });
      } catch (err) {
        out.push({
          role: c.label,
          answer,
          ok: false,
          ...kind,
          detail: `cannot start: ${err instanceof Error ? err.message : String(err)}`,
          fix: 'check the command (vigil doctor without --contract says what is installed)',
        });
        break;
      }
      const [file, ...args] = call.argv;
      const env = {
        ...(opts.env ?? process.env),
        ...call.env,
        ...c.extraEnv,
        VIGIL_ROLE: c.role,
        VIGIL_ANSWER: answer,
        VIGIL_RUN_ID: 'vigil-doctor',
        VIGIL_ITERATION: '1',
        VIGIL_PHASE: c.role === 'iteration' ? 'ACT' : 'VERIFY',
        VIGIL_TIER: 'development',
        VIGIL_PROMPT_FILE: promptPath,
      };
      const r = await execa(file, args, {
        cwd: s.repo,
        env,
        extendEnv: false,
        input: call.stdin,
        reject: false,
        timeout: opts.timeoutMs ?? 120_000,
        all: true,
        stripFinalNewline: false,
      });
      const text = r.all ?? '';
      const facts = interpretCall(opts.provider, text, r.exitCode ?? 1, call.model, 0, Date.now());
      const said = facts.parsed?.resultText ?? text;
      if (r.timedOut || facts.exitCode !== 0) {
        out.push({
          role: c.label,
          answer,
          ok: false,
          ...kind,
          detail:
            (r.timedOut ? 'timed out' : `exit ${facts.exitCode}`) +
            (said.trim() ? `: ${said.trim().split('\n').slice(-2).join(' | ').slice(0, 200)}` : ''),
          fix: 'the call must exit 0 (a failed call is retried, never read)',
        });
        continue;
      }
      const wrong = c.judge(said);
      const owed = answer === 'work' ? 'its work in the repository' : REQUIRED_ANSWER[answer];
      out.push(
        wrong === null
          ? { role: c.label, answer, ok: true, ...kind, detail: `VIGIL_ANSWER=${answer}: answered ${owed}`, fix: null }
          : {
              role: c.label,
              answer,
              ok: false,
              ...kind,
              detail: `VIGIL_ANSWER=${answer}: ${wrong}; the answer began: ${JSON.stringify(said.trim().slice(0, 120))}`,
              fix: `print ${owed} when VIGIL_ROLE=${c.role} and VIGIL_ANSWER=${answer} (docs/agent-contract.md)`,
            },
      );
    }
  } finally {
    s.cleanup();
  }
  return out;
}

/** Whether every required role answers right (an optional role's wrong answer is a warning). */
export function contractOk(checks: readonly ContractCheck[]): boolean {
  return checks.every((c) => c.ok || !c.required);
}

/** The checks as lines (✓, ✗ for a required role, ⚠ for an optional one), then whether the required answers are right. */
export function contractLines(checks: readonly ContractCheck[]): string[] {
  const lines = checks.map((c) => {
    const mark = c.ok ? '✓' : c.required ? '✗' : '⚠';
    const optional = c.optional !== null && !c.ok ? ` (optional: ${c.optional})` : '';
    return `  ${mark} ${c.role}: ${c.detail}${optional}${c.ok || c.fix === null ? '' : ` — fix: ${c.fix}`}`;
  });
  const bad = checks.filter((c) => !c.ok && c.required).length;
  const warned = checks.filter((c) => !c.ok && !c.required).length;
  const optional = warned === 0 ? '' : `; ${warned} optional role(s) answer wrongly (⚠ above: the run goes on without them)`;
  lines.push(
    bad === 0
      ? `${warned === 0 ? 'every role answers' : 'every required role answers'} as the agent contract asks${optional}`
      : `${bad} required role(s) answer wrongly: fix the ✗ above${optional}`,
  );
  return lines;
}
