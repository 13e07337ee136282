/**
 * The blind specialist code review (spec §5.4, §5.5): which paths the review diff covers and how
 * large it may be, which reviewers are asked, how a reviewer's answer is read (the verdict line
 * and the severity-tagged findings), how the answers add up to a gate result, and what each
 * reviewer is asked. The activities run the reviewers and hand their output here.
 *
 * Reviewer output is untrusted and may be megabytes of anything. It is read line by line, with
 * hand-written scans or regexes whose repetitions are bounded and never nested, so every parse
 * takes time linear in the length of the text.
 *
 * Sandbox-safe: imported by the workflow bundle (no Node imports).
 */
import type { ReviewerRecord, ReviewRecord } from '../schemas/gates.js';
import { focusOf } from './review-focus.js';

// ---------------------------------------------------------------------------------------------
// Diff scope and size (§5.4)
// ---------------------------------------------------------------------------------------------

/**
 * What the review diff leaves out. Directories are skipped wherever they appear in a path
 * (a nested `node_modules` is as unreviewable as a top-level one). Lockfiles are matched by
 * basename: they are generated, huge, and say nothing a reviewer can check line by line.
 */
export const REVIEW_EXCLUDED = {
  dirs: ['.vigil', '.git', 'node_modules', 'venv', '.venv', 'dist', 'build', '__pycache__', 'vendor'],
  lockfiles: ['package-lock.json', 'npm-shrinkwrap.json', 'yarn.lock', 'pnpm-lock.yaml', 'bun.lock', 'bun.lockb'],
} as const;

const EXCLUDED_DIRS: ReadonlySet<string> = new Set(REVIEW_EXCLUDED.dirs);
const EXCLUDED_LOCKFILES: ReadonlySet<string> = new Set(REVIEW_EXCLUDED.lockfiles);

/** A path's segments, tolerant of `./` prefixes, doubled and Windows separators. */
const segments = (path: string): string[] =>
  path
    .replace(/\\/g, '/')
    .split('/')
    .filter((s) => s !== '' && s !== '.');

const basename = (path: string): string => segments(path).at(-1) ?? '';

/**
 * Whether a changed file belongs in the review diff. Only directory segments are checked
 * against the excluded names: a script called `build` is code and is reviewed.
 */
export function reviewPathIncluded(path: string): boolean {
  const segs = segments(path);
  const base = segs.at(-1);
  if (base === undefined || EXCLUDED_LOCKFILES.has(base)) return false;
  return !segs.slice(0, -1).some((s) => EXCLUDED_DIRS.has(s));
}

export const REVIEW_DIFF_CAP_MAX = 400_000;
export const DEFAULT_CONTEXT_WINDOW_TOKENS = 200_000;

/**
 * The largest diff (bytes) a reviewer is handed; a larger one is refused (fail-closed) rather
 * than truncated, since a reviewer that sees half a change cannot vouch for it. An override
 * (> 0) wins; otherwise `min(400000, (ctx*3/4*3) * 400000 / 425000)`, computed with the
 * original's integer divisions at each step, so the numbers match it exactly.
 */
export function reviewDiffCap(contextWindowTokens: number | null, override: number | null): number {
  if (override !== null && Number.isFinite(override) && override >= 1) return Math.floor(override);
  const ctx =
    contextWindowTokens !== null && Number.isFinite(contextWindowTokens) && contextWindowTokens >= 1
      ? Math.floor(contextWindowTokens)
      : DEFAULT_CONTEXT_WINDOW_TOKENS;
  const budget = Math.floor((ctx * 3) / 4) * 3;
  return Math.min(REVIEW_DIFF_CAP_MAX, Math.floor((budget * 400_000) / 425_000));
}

// ---------------------------------------------------------------------------------------------
// Reviewer selection (§5.4)
// ---------------------------------------------------------------------------------------------

export type ReviewComplexity = 'simple' | 'standard' | 'complex';

export interface Specialist {
  name: string;
  /** Lowercase substrings; the score is how many distinct ones occur. */
  keywords: readonly string[];
  /** Breaks score ties: lower goes first. */
  priority: number;
}

export const SPECIALISTS: readonly Specialist[] = [
  {
    name: 'security-sentinel',
    keywords: ['auth', 'login', 'password', 'token', 'api', 'sql', 'query', 'cookie', 'cors', 'csrf'],
    priority: 0,
  },
  { name: 'test-coverage-auditor', keywords: ['test', 'spec', 'coverage', 'assert', 'mock', 'fixture', 'expect', 'describe'], priority: 1 },
  {
    name: 'performance-oracle',
    keywords: ['database', 'query', 'cache', 'render', 'loop', 'fetch', 'load', 'index', 'join', 'pool'],
    priority: 2,
  },
  { name: 'dependency-analyst', keywords: ['package', 'import', 'require', 'dependency', 'npm', 'pip', 'yarn', 'lock'], priority: 3 },
];

export const REQUIREMENTS_REVIEWER = 'requirements-verifier';
/** Always asked, whatever the change. */
export const MANDATORY_REVIEWERS = ['architecture-strategist', 'maintainer-mergeability'] as const;
/** When nothing matches, a change still gets a security and a test look. */
export const DEFAULT_SPECIALISTS = ['security-sentinel', 'test-coverage-auditor'] as const;
export const DEPENDENCY_REVIEWER = 'dependency-analyst';

/** Basenames whose change always brings in the dependency analyst. */
export const PACKAGE_MANIFESTS = [
  'package.json',
  'package-lock.json',
  'yarn.lock',
  'pnpm-lock.yaml',
  'requirements.txt',
  'pyproject.toml',
  'Pipfile',
  'Pipfile.lock',
  'poetry.lock',
  'go.mod',
  'go.sum',
  'Cargo.toml',
  'Cargo.lock',
  'Gemfile',
  'Gemfile.lock',
  'composer.json',
] as const;
const MANIFESTS: ReadonlySet<string> = new Set(PACKAGE_MANIFESTS);

/** Characters of diff plus file list scanned for keywords (each keyword is one `includes`). */
export const SELECTION_SCAN_CHARS = 2_000_000;

export interface ReviewerChoice {
  reviewer: string;
  reason: string;
}

export interface SelectionInput {
  /** The diff (or any text describing the change). */
  text: string;
  files: readonly string[];
  complexity: ReviewComplexity;
  /** Requirements are tracked for this run (a PRD exists): the requirements verifier is asked. */
  requirements: boolean;
  /** Cap on the number of reviewers; 0 = no cap. Never drops a mandatory reviewer. */
  maxReviewers: number;
}

/**
 * The scanned text: the file list first, so a diff larger than the scan cap cannot push the
 * file names out of it.
 */
const selectionHaystack = (text: string, files: readonly string[]): string =>
  `${files.join('\n')}\n${text.slice(0, SELECTION_SCAN_CHARS)}`.slice(0, SELECTION_SCAN_CHARS).toLowerCase();

interface Scored {
  specialist: Specialist;
  hits: string[];
}

/** Specialists with at least one hit, best first: score descending, then priority. */
function rankSpecialists(haystack: string): Scored[] {
  return SPECIALISTS.map((specialist) => ({ specialist, hits: specialist.keywords.filter((k) => haystack.includes(k)) }))
    .filter((s) => s.hits.length > 0)
    .sort((a, b) => b.hits.length - a.hits.length || a.specialist.priority - b.specialist.priority);
}

export function selectReviewers(input: SelectionInput): ReviewerChoice[] {
  const mandatory: ReviewerChoice[] = [...(input.requirements ? [REQUIREMENTS_REVIEWER] : []), ...MANDATORY_REVIEWERS].map((reviewer) => ({
    reviewer,
    reason: 'mandatory',
  }));

  const n = input.complexity === 'complex' ? 4 : 2;
  const ranked = rankSpecialists(selectionHaystack(input.text, input.files)).slice(0, n);
  const specialists: ReviewerChoice[] =
    ranked.length > 0
      ? ranked.map((s) => ({ reviewer: s.specialist.name, reason: `keywords: ${s.hits.join(', ')}` }))
      : DEFAULT_SPECIALISTS.map((reviewer) => ({ reviewer, reason: 'no keyword matched: default' }));

  const manifest = input.files.map(basename).find((b) => MANIFESTS.has(b));
  if (manifest !== undefined) {
    const why = `package manifest changed: ${manifest}`;
    const existing = specialists.find((c) => c.reviewer === DEPENDENCY_REVIEWER);
    if (existing) existing.reason = `${existing.reason}; ${why}`;
    else specialists.push({ reviewer: DEPENDENCY_REVIEWER, reason: why });
  }

  const all = [...mandatory, ...specialists];
  // Mandatory reviewers come first, so cutting the tail never drops one.
  return input.maxReviewers >= 1 ? all.slice(0, Math.max(mandatory.length, Math.floor(input.maxReviewers))) : all;
}

// ---------------------------------------------------------------------------------------------
// Reading an answer (§5.5)
// ---------------------------------------------------------------------------------------------

/** The text's lines, without their line breaks. */
const lines = (text: string): string[] => text.split('\n');

const SPACE = /\s/;
const isSpace = (c: string): boolean => SPACE.test(c);

/** The index of the first character at or after `i` that `skip` does not accept. */
function skipWhile(s: string, i: number, skip: (c: string) => boolean): number {
  let j = i;
  while (j < s.length && skip(s[j] as string)) j++;
  return j;
}

const VERDICT_LABEL = /^verdict:$/i;

/**
 * What follows `VERDICT:` on a line matching `^\s*[*#>]*\s*VERDICT:` (case-insensitive), or
 * null. The three runs use disjoint character sets, so one greedy pass decides exactly what the
 * regex would, without its quadratic backtracking on a line of blanks.
 */
function afterVerdictLabel(line: string): string | null {
  let i = skipWhile(line, 0, isSpace);
  i = skipWhile(line, i, (c) => c === '*' || c === '#' || c === '>');
  i = skipWhile(line, i, isSpace);
  return VERDICT_LABEL.test(line.slice(i, i + 8)) ? line.slice(i + 8) : null;
}

export type VerdictClass = 'PASS' | 'FAIL' | 'AMBIGUOUS' | 'NONE';

const FAIL_TOKENS: ReadonlySet<string> = new Set(['FAIL', 'FAILED', 'FAILURE', 'REJECT', 'REJECTED', 'BLOCK', 'BLOCKED']);
const PASS_TOKENS: ReadonlySet<string> = new Set(['PASS', 'PASSED', 'APPROVE', 'APPROVED', 'OK']);
// A run longer than any known token is cut short; the cut run is unknown either way.
const TOKEN = /^[A-Za-z]{1,16}/;

/**
 * The first verdict line decides (a later one does not overrule it): markdown decoration around
 * the label and the value is tolerated (`**VERDICT:** PASS`, `### verdict: _FAIL_`), and the
 * value is its leading run of letters, so `PASS_WITH_NOTES` passes and `PASSING` is ambiguous.
 */
export function classifyVerdict(text: string): VerdictClass {
  for (const line of lines(text)) {
    const rest = afterVerdictLabel(line);
    if (rest === null) continue;
    const value = rest.slice(skipWhile(rest, 0, (c) => c === '*' || c === '_' || c === '`' || isSpace(c)));
    const token = (TOKEN.exec(value)?.[0] ?? '').toUpperCase();
    if (FAIL_TOKENS.has(token)) return 'FAIL';
    if (PASS_TOKENS.has(token)) return 'PASS';
    return 'AMBIGUOUS';
  }
  return 'NONE';
}

export const REVIEW_SEVERITIES = ['critical', 'high', 'medium', 'low'] as const;
export type ReviewSeverity = (typeof REVIEW_SEVERITIES)[number];
export type SeverityCounts = Record<ReviewSeverity, number>;

// Blank runs are bounded (no real finding puts 40 blanks inside its marker), which keeps each
// attempt constant-time; `^` and `$` are the line's ends because lines are matched one by one.
const BLANKS = String.raw`\s{0,40}`;
const markerRe = (level: ReviewSeverity): RegExp =>
  new RegExp(
    String.raw`\[${level}\]|\*\*${BLANKS}${level}${BLANKS}\*\*|severity:?${BLANKS}${level}|^${BLANKS}[-*]\s{1,40}${level}(?:[\s:.,*]|$)`,
    'i',
  );

/** `[High]`, `**High**`, `Severity: High`, `- High: ...` (and the same for each level). */
const MARKERS: Readonly<Record<ReviewSeverity, RegExp>> = {
  critical: markerRe('critical'),
  high: markerRe('high'),
  medium: markerRe('medium'),
  low: markerRe('low'),
};

// Most lines name no level at all; one scan for the words spares them the four marker tests.
const ANY_LEVEL = /critical|high|medium|low/i;

const levelsOf = (line: string): ReviewSeverity[] => (ANY_LEVEL.test(line) ? REVIEW_SEVERITIES.filter((l) => MARKERS[l].test(line)) : []);

export const FINDING_LINE_CHARS = 300;

const clip = (s: string, max: number): string => {
  if (s.length <= max) return s;
  return max <= 0 ? '' : `${s.slice(0, max - 1)}…`;
};

/** Counts and the worst `max` finding lines, in one pass over the text. */
function scanSeverities(text: string, max: number): { counts: SeverityCounts; lines: string[] } {
  const counts: SeverityCounts = { critical: 0, high: 0, medium: 0, low: 0 };
  const byLevel: string[][] = REVIEW_SEVERITIES.map(() => []);
  for (const line of lines(text)) {
    const levels = levelsOf(line);
    for (const level of levels) counts[level] += 1;
    const bucket = levels[0] === undefined ? undefined : byLevel[REVIEW_SEVERITIES.indexOf(levels[0])];
    if (bucket !== undefined && bucket.length < max) bucket.push(clip(line.trim(), FINDING_LINE_CHARS));
  }
  return { counts, lines: byLevel.flat().slice(0, max) };
}

/** Lines carrying each level's marker; a line counts once per level it carries. */
export function countSeverities(text: string): SeverityCounts {
  return scanSeverities(text, 0).counts;
}

/**
 * Up to `max` finding lines, worst first (a line ranks by the worst level it carries; lines of
 * one level stay in text order), trimmed and clipped to 300 characters. Worst first so that a
 * Critical after ten Low nits is still what the builder and the record see.
 */
export function severityLines(text: string, max: number): string[] {
  return scanSeverities(text, Math.max(0, Math.floor(max))).lines;
}

// ---------------------------------------------------------------------------------------------
// One reviewer's record (§5.5)
// ---------------------------------------------------------------------------------------------

export interface ReviewerRun {
  reviewer: string;
  exitCode: number;
  /** The reviewer's answer; null when none was captured. */
  output: string | null;
  /** The call never completed (every attempt lost). */
  lost: boolean;
  logPath: string;
}

export const MAX_REVIEWER_FINDINGS = 5;

const NO_COUNTS: SeverityCounts = { critical: 0, high: 0, medium: 0, low: 0 };
const severe = (c: SeverityCounts): boolean => c.critical + c.high > 0;

/**
 * What a reviewer's answer counts as. A failed call's output is not trusted at all (NO_OUTPUT,
 * whatever it says); an answer without a readable verdict is not a verdict (NO_VERDICT, never
 * blocking on its own: the review is inconclusive instead). A Critical or High finding makes
 * the answer a blocking FAIL even under a PASS line: the finding is the evidence, the verdict
 * line only a summary. A FAIL without Critical/High stays FAIL but is advisory.
 */
export function reviewerRecord(run: ReviewerRun): ReviewerRecord {
  const base = { reviewer: run.reviewer.slice(0, 100), logPath: run.logPath.slice(0, 4096) };
  const output = run.output;
  if (run.lost || run.exitCode !== 0 || output === null || !/\S/.test(output)) {
    return { ...base, verdict: 'NO_OUTPUT', blocking: false, counts: { ...NO_COUNTS }, findings: [] };
  }
  const { counts, lines: findings } = scanSeverities(output, MAX_REVIEWER_FINDINGS);
  const verdict = classifyVerdict(output);
  if (verdict === 'NONE' || verdict === 'AMBIGUOUS') return { ...base, verdict: 'NO_VERDICT', blocking: false, counts, findings };
  const blocking = severe(counts);
  return { ...base, verdict: blocking ? 'FAIL' : verdict, blocking, counts, findings };
}

// ---------------------------------------------------------------------------------------------
// Aggregation (§5.5)
// ---------------------------------------------------------------------------------------------

export type ReviewResult = 'pass' | 'blocked' | 'inconclusive';

export interface ReviewOutcome {
  result: ReviewResult;
  /** One readable line (≤ 500 characters). */
  reason: string;
  /** 0..100; 0 when blocking or inconclusive. */
  mergeability: number;
  hasBlocking: boolean;
  inconclusive: boolean;
}

export interface AggregateOptions {
  /** Mergeability below this blocks; 0 = off. */
  mergeabilityMin: number;
}

export const REVIEW_REASON_CHARS = 500;

const hasVerdict = (r: ReviewerRecord): boolean => r.verdict === 'PASS' || r.verdict === 'FAIL';

const worstFinding = (r: ReviewerRecord): string => r.findings[0] ?? `${r.counts.critical} critical, ${r.counts.high} high`;

const missingWhy = (r: ReviewerRecord): string => (r.verdict === 'NO_OUTPUT' ? 'no output' : 'no verdict line');

/** `max(0, 100 - 5*medium - 2*low)` over every answer. */
function mergeabilityScore(records: readonly ReviewerRecord[]): { score: number; medium: number; low: number } {
  const medium = records.reduce((n, r) => n + r.counts.medium, 0);
  const low = records.reduce((n, r) => n + r.counts.low, 0);
  return { score: Math.max(0, 100 - 5 * medium - 2 * low), medium, low };
}

/**
 * The review's result. Blocking findings win over everything; then a missing verdict (a
 * reviewer's or the devil's advocate's) makes the review inconclusive, which blocks too: a
 * review nobody completed does not vouch for the change. An empty panel is inconclusive, never
 * a pass. Medium and Low findings only block through the optional mergeability minimum.
 * The devil's advocate blocks on any Critical/High it reports, verdict or not: it only runs on a
 * unanimous PASS, and its whole job is to find what that PASS missed.
 */
export function aggregateReview(
  reviewers: readonly ReviewerRecord[],
  devilsAdvocate: ReviewerRecord | null,
  opts: AggregateOptions,
): ReviewOutcome {
  const missing = reviewers.filter((r) => !hasVerdict(r));
  const daMissing = devilsAdvocate !== null && !hasVerdict(devilsAdvocate);
  const inconclusive = reviewers.length === 0 || missing.length > 0 || daMissing;

  const blockers = reviewers.filter((r) => r.blocking);
  if (devilsAdvocate !== null && (devilsAdvocate.blocking || severe(devilsAdvocate.counts))) blockers.push(devilsAdvocate);
  const hasBlocking = blockers.length > 0;

  const all = devilsAdvocate === null ? reviewers : [...reviewers, devilsAdvocate];
  const m = mergeabilityScore(all);
  const mergeability = hasBlocking || inconclusive ? 0 : m.score;
  const advisory = `${m.medium} medium, ${m.low} low`;

  let result: ReviewResult;
  let reason: string;
  if (hasBlocking) {
    result = 'blocked';
    reason = `blocked by ${blockers.map((r) => `${r.reviewer}: ${worstFinding(r)}`).join('; ')}`;
  } else if (inconclusive) {
    result = 'inconclusive';
    const silent = [...missing, ...(daMissing && devilsAdvocate !== null ? [devilsAdvocate] : [])];
    reason =
      reviewers.length === 0
        ? 'inconclusive: no reviewer ran'
        : `inconclusive: no verdict from ${silent.map((r) => `${r.reviewer} (${missingWhy(r)})`).join(', ')}`;
  } else if (opts.mergeabilityMin > 0 && mergeability < opts.mergeabilityMin) {
    result = 'blocked';
    reason = `mergeability ${mergeability} is below the minimum ${opts.mergeabilityMin} (${advisory} findings)`;
  } else {
    result = 'pass';
    const fails = reviewers.filter((r) => r.verdict === 'FAIL').map((r) => r.reviewer);
    const advisoryFails = fails.length > 0 ? `; advisory FAIL from ${fails.join(', ')}` : '';
    reason = `passed: ${reviewers.length} reviewer(s), no critical or high finding; mergeability ${mergeability} (${advisory} advisory)${advisoryFails}`;
  }
  return { result, reason: clip(reason, REVIEW_REASON_CHARS), mergeability, hasBlocking, inconclusive };
}

/** The devil's advocate re-reviews a unanimous PASS (of at least one reviewer). */
export function devilsAdvocateDue(reviewers: readonly ReviewerRecord[]): boolean {
  return reviewers.length > 0 && reviewers.every((r) => r.verdict === 'PASS');
}

/** An inconclusive review is re-run once; a second inconclusive result stands (and blocks). */
export function shouldRerun(result: ReviewRecord['result'], alreadyRerun: boolean): boolean {
  return result === 'inconclusive' && !alreadyRerun;
}

// ---------------------------------------------------------------------------------------------
// Prompts (§5.4)
// ---------------------------------------------------------------------------------------------

export interface ReviewerPromptInput {
  reviewer: string;
  diffPath: string;
  diffBytes: number;
  files: readonly string[];
  /** The latest test run's summary ('' when there is none). */
  testSummary: string;
  /** null when the run has no requirements document. */
  prdPath: string | null;
  round: number;
  iteration: number;
  /** A delta review: the review the diff starts from ("code review round 2, iteration 3"). */
  since?: string;
}

export const PROMPT_MAX_FILES = 200;
export const PROMPT_TEST_SUMMARY_CHARS = 2_000;

/** The changed files, indented without a bullet (a `- ` file name must not read as a finding). */
function fileList(files: readonly string[]): string[] {
  const shown = files.slice(0, PROMPT_MAX_FILES).map((f) => `  ${f}`);
  return files.length > PROMPT_MAX_FILES ? [...shown, `  ... and ${files.length - PROMPT_MAX_FILES} more`] : shown;
}

function evidence(p: Omit<ReviewerPromptInput, 'reviewer'>): string[] {
  const summary = p.testSummary.trim();
  return [
    p.since
      ? `The change: the diff at ${p.diffPath} (${p.diffBytes} bytes), everything changed since ${p.since} passed (lockfiles and ` +
        `vendored, generated or build directories left out). The work before it was reviewed then; judge what this diff changes, ` +
        `and read any file for context. Read all of it.`
      : `The change: the diff at ${p.diffPath} (${p.diffBytes} bytes), everything changed since this run started (lockfiles and ` +
        `vendored, generated or build directories left out). Read all of it.`,
    `Changed files (${p.files.length}):`,
    ...fileList(p.files),
    summary === ''
      ? 'Tests: no test summary is available.'
      : `Tests (latest run): ${clip(summary, PROMPT_TEST_SUMMARY_CHARS).replace(/\n/g, '\n  | ')}`,
    p.prdPath !== null
      ? `Requirements (PRD): ${p.prdPath}`
      : 'There is no requirements document for this run; judge the change on its own terms.',
    'You may read any file in the repository for context. Do not modify any file, do not commit, and run nothing that changes the repository.',
  ];
}

// Written so that a prompt echoed back by the provider neither parses as a verdict (no line
// starts with the label) nor counts as a finding (no severity word inside a marker shape).
const CONTRACT = [
  'How to answer:',
  'Report each finding on its own line, in this form:',
  '   - [Severity] description (file:line)',
  'where Severity is one of Critical, High, Medium, Low.',
  'Calibration: Critical and High need a concrete defect in this change with a plausible impact (wrong ' +
    'results, data loss, a security hole, a crash, a broken build); give the file and line. Medium and ' +
    'Low are advisory (style, naming, small risks, suggestions) and do not block. Do not inflate; when ' +
    'unsure, choose Medium.',
  'Finish with a line of its own reading VERDICT: PASS (no Critical or High defect found) or VERDICT: ' +
    'FAIL (one or more found), written plainly: no backticks, bold or other decoration.',
];

function header(p: Omit<ReviewerPromptInput, 'reviewer'>): string {
  return `Code review, round ${p.round}, iteration ${p.iteration}.`;
}

/**
 * A blind reviewer's prompt: its focus, the evidence, the output contract. Blind: it sees the
 * change and the tests, never another reviewer's answer, so one confident reviewer cannot
 * anchor the rest.
 */
export function reviewerPrompt(p: ReviewerPromptInput): string {
  return [
    header(p),
    focusOf(p.reviewer),
    'You review independently: you will not see the other reviewers\u2019 findings and they will not see yours.',
    '',
    ...evidence(p),
    '',
    ...CONTRACT,
  ].join('\n');
}

/** The devil's advocate's prompt: the same evidence, re-read adversarially after a unanimous PASS. */
export function devilsAdvocateReviewPrompt(p: Omit<ReviewerPromptInput, 'reviewer'>): string {
  return [
    header(p),
    focusOf('devils-advocate'),
    'Unanimous approval is suspicious. Look hard for what the others missed; PASS only if a thorough ' +
      'search finds no Critical or High defect. Do not invent problems: every Critical or High finding ' +
      'must name a concrete defect.',
    '',
    ...evidence(p),
    '',
    ...CONTRACT,
  ].join('\n');
}

const RESULT_LABEL: Readonly<Record<ReviewRecord['result'], string>> = {
  pass: 'PASSED',
  blocked: 'BLOCKED',
  inconclusive: 'INCONCLUSIVE',
  refused: 'REFUSED',
};

/**
 * The review as the builder's next prompt shows it: the result and why, what each blocking
 * reviewer found (those are what must be fixed), how many advisory findings there were, and the
 * mergeability score. Clipped to `maxChars`.
 */
export function reviewSummaryForPrompt(record: ReviewRecord, maxChars: number): string {
  const limit = Math.max(0, Math.floor(maxChars));
  const all = record.devilsAdvocate === null ? record.reviewers : [...record.reviewers, record.devilsAdvocate];
  const blocking = all.filter((r) => r.blocking || (r === record.devilsAdvocate && severe(r.counts)));
  const medium = all.reduce((n, r) => n + r.counts.medium, 0);
  const low = all.reduce((n, r) => n + r.counts.low, 0);
  const out = [`Code review (round ${record.round}, iteration ${record.iteration}): ${RESULT_LABEL[record.result]}. ${record.reason}`];
  for (const r of blocking) {
    out.push(`${r.reviewer} (blocking, ${r.counts.critical} critical, ${r.counts.high} high):`);
    for (const f of r.findings) out.push(`  ${f}`);
  }
  if (medium + low > 0) out.push(`Advisory findings (do not block): ${medium} medium, ${low} low.`);
  out.push(`Mergeability: ${record.mergeability}/100.`);
  return clip(out.join('\n'), limit);
}
