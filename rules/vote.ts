/**
 * Reading a council member's answer (spec §2.6). The vote is the first
 * `VOTE: APPROVE|REJECT|CANNOT_VALIDATE` anywhere in the output, tolerant of markdown decoration
 * (`**VOTE:** APPROVE`, `> VOTE: REJECT`) but case-sensitive and whole-word: `APPROVED`,
 * `vote: approve` and `REVOTE: APPROVE` do not parse. Anything but a clean APPROVE counts as REJECT.
 */
export const VOTES = ['APPROVE', 'REJECT', 'CANNOT_VALIDATE'] as const;
export type Vote = (typeof VOTES)[number];

export const SEVERITIES = ['low', 'medium', 'high', 'critical'] as const;
export type Severity = (typeof SEVERITIES)[number];

export interface Issue {
  severity: Severity;
  description: string;
}

export interface ParsedVote {
  vote: Vote | null;
  reason: string | null;
  issues: Issue[];
}

// Linear-time forms (an agent's answer may be 512 KiB of anything): the vote regex is anchored on
// the literal VOTE and its left context is checked by hand; line patterns never cross a newline.
const VOTE_RE = /VOTE[*_ \t]*:[*_> \t]*(APPROVE|REJECT|CANNOT_VALIDATE)(?![A-Za-z0-9_])/g;
const REASON_RE = /^[*_> \t-]*REASON[*_ \t]*:[*_ \t]*(.*)$/m;
const ISSUE_RE = /^[*_> \t-]*ISSUES?[*_ \t]*:[*_ \t]*(CRITICAL|HIGH|MEDIUM|LOW)[ \t]*:[ \t]*(.+)$/gim;
const WORD = /[A-Za-z0-9_]/;

/**
 * Whether the VOTE at `p` stands on its own: the start of the text or a non-word character may
 * precede it, with underscores (markdown emphasis) in between; a letter or digit may not.
 */
function standsAlone(text: string, p: number): boolean {
  for (let i = p - 1; ; i--) {
    if (i < 0) return true;
    const c = text[i] as string;
    if (!WORD.test(c)) return true;
    if (c !== '_') return false;
  }
}

function firstVote(text: string): Vote | null {
  for (const m of text.matchAll(VOTE_RE)) if (standsAlone(text, m.index)) return m[1] as Vote;
  return null;
}

const clean = (s: string, max: number): string => {
  // Markdown emphasis and code marks go; underscores inside words (parse_config) stay.
  const t = s
    .replace(/[*`]+/g, '')
    .replace(/(^|\s)(_{1,2})(\S(?:.*?\S)?)\2(?=\s|[.,;:!?]|$)/g, '$1$3') // _emphasis_, __strong__
    .replace(/\s+/g, ' ')
    .trim();
  return t.length > max ? `${t.slice(0, max - 1)}…` : t;
};

export function parseVote(text: string): ParsedVote {
  const vote = firstVote(text);
  const r = REASON_RE.exec(text);
  const issues: Issue[] = [];
  for (const im of text.matchAll(ISSUE_RE)) {
    issues.push({ severity: (im[1] as string).toLowerCase() as Severity, description: clean(im[2] as string, 300) });
    if (issues.length >= 50) break;
  }
  return { vote, reason: r ? clean(r[1] as string, 300) || null : null, issues };
}

/** How a member's call ended, as recorded in the verdict history. */
export type RecordedVote = Vote | 'UNPARSEABLE' | 'EMPTY' | 'TIMEOUT' | 'PROVIDER_FAILURE';

export interface MemberCallFacts {
  exitCode: number;
  timedOut: boolean;
  /** The call never completed (every attempt lost). */
  lost: boolean;
  outputBytes: number;
  parsed: ParsedVote;
}

/** What a member's call counts as: only a parsed APPROVE approves. */
export function recordVote(f: MemberCallFacts): { recorded: RecordedVote; approves: boolean; reason: string } {
  if (f.lost) return { recorded: 'PROVIDER_FAILURE', approves: false, reason: 'the call failed on every attempt' };
  if (f.timedOut) return { recorded: 'TIMEOUT', approves: false, reason: 'no answer before the member timeout' };
  if (f.parsed.vote === null) {
    if (f.exitCode !== 0) return { recorded: 'PROVIDER_FAILURE', approves: false, reason: `the provider exited with ${f.exitCode}` };
    if (f.outputBytes === 0) return { recorded: 'EMPTY', approves: false, reason: 'empty answer' };
    return { recorded: 'UNPARSEABLE', approves: false, reason: 'no VOTE: line in the answer' };
  }
  return { recorded: f.parsed.vote, approves: f.parsed.vote === 'APPROVE', reason: f.parsed.reason ?? '' };
}
