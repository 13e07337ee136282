/**
 * The memory that outlives a run, as rules (docs/memory.md): how a run's journal (the events the
 * event store already holds) and the traces its agent calls left become episodes, one per
 * iteration; and how episodes consolidate into patterns, anti-patterns (grouped by failure
 * signature), the links between them and procedural skills, per repository and across the
 * repositories of one installation. Deterministic and pure: the store activity
 * (lib/lasting-memory.ts) reads the rows, calls these and writes what they return.
 *
 * Every text an episode keeps is redacted here with the agent-output redaction
 * (`redactSecrets`, decisions/scans.ts), before anything is stored.
 */
import type { EventEnvelope, RunEvent } from '../schemas/events.js';
import {
  ANTI_PATTERN_MIN_FAILURES,
  EPISODE_LIMITS,
  type Episode,
  type EpisodeOutcome,
  type MemoryRef,
  type Pattern,
  type PatternLink,
  type Skill,
} from '../schemas/lasting-memory.js';
import { moreLinks, type FixedBySkill } from './memory-links.js';
import { signatureParts } from './memory-signatures.js';
import { redactSecrets } from './scans.js';

/** What an iteration's agent call recorded beside the journal (lib/lasting-memory.ts). */
export interface IterationTrace {
  iteration: number;
  files: string[];
  errors: string[];
  /** The tests' failure line when the call's gate pass ran them and they failed. */
  testFailure: string | null;
  summary: string | null;
  retrieved: MemoryRef[];
  /** Files the agent read (lib/files-read.ts); absent in traces from before it. */
  filesRead?: string[];
}

const oneLine = (s: string): string => s.replace(/\s+/g, ' ').trim();
const cut = (s: string, n: number): string => (s.length <= n ? s : `${s.slice(0, Math.max(0, n - 1))}…`);

/** A text as memory stores it: one line, secrets redacted, bounded. */
export function clean(s: string, n: number): string {
  return cut(redactSecrets(oneLine(s)).text, n);
}

/**
 * A reason made comparable between iterations: durations, counts and hashes that change from one
 * run of a tool to the next are masked, so "the same failure" groups.
 */
export function normalizeReason(s: string): string {
  return oneLine(s)
    .replace(/\(\s*\d+(?:\.\d+)?\s*m?s\s*\)/g, '')
    .replace(/\b[0-9a-f]{7,64}\b/g, '<hash>')
    .replace(/\/tmp\/[^\s'"]+/g, '<tmp>')
    .replace(/\d+/g, 'N')
    .replace(/\s+/g, ' ')
    .trim()
    .slice(0, 250);
}

/** The failing test a tests gate names (`…; first: <test>`), else null. */
export function failingTest(reason: string): string | null {
  // `…; first: <id>`, or the first of the baseline tests that did not pass or were not reported.
  const m = /;\s*first:\s*(.+)$/.exec(reason) ?? /baseline tests (?:did not pass|were not reported) \([^)]*\):\s*([^,]+)/.exec(reason);
  if (!m) return null;
  // A report's test id is `file-or-class::name`: the name is what a person knows the test by, and a
  // signature's parts are separated by colons, so none may remain in it.
  const id = oneLine(m[1] ?? '');
  const name = id.includes('::') ? id.slice(id.lastIndexOf('::') + 2) : id;
  return name.replaceAll(':', '.').slice(0, 200) || null;
}

const ERROR_LINE = /\b\w*Error\b|\berror:|assert|\bexpected\b|!==|===|\bnot ok\b|Traceback|panic:/i;

/** The line of a tool's or agent's output that says what went wrong (a YAML block's first line when it says `error: |-`). */
export function errorLine(output: string): string | null {
  const lines = output.split('\n').map((l) => l.trim());
  for (let i = 0; i < lines.length; i++) {
    const l = lines[i] as string;
    if (!ERROR_LINE.test(l) || /^(failureType|code|stack|duration_ms):/.test(l) || /^not ok\b/.test(l)) continue;
    if (/^error:\s*\|-?$/.test(l) || /^error:\s*$/.test(l)) {
      const at = lines.findIndex((x, k) => k > i && x !== '');
      if (at > 0) return withFollowing(lines, at);
      continue;
    }
    return withFollowing(lines, i);
  }
  return null;
}

/** A line that ends with a colon says what follows: the next non-empty line joins it (`… strictly equal: 4 !== 3`), unless it is a YAML key. */
function withFollowing(lines: readonly string[], i: number): string {
  const unquote = (s: string): string => s.replace(/^error:\s*/, '').replace(/^['"]|['"]$/g, '');
  const l = unquote(lines[i] as string);
  const next = lines.slice(i + 1).find((x) => x !== '');
  const joined = l.endsWith(':') && next && !/^[A-Za-z_]+:(\s|$)/.test(next) ? `${l} ${unquote(next)}` : l;
  return cut(oneLine(joined), 250);
}

type Ev<K extends RunEvent['kind']> = Extract<RunEvent, { kind: K }>;
const of = <K extends RunEvent['kind']>(events: readonly EventEnvelope[], kind: K): { seq: number; at: string; e: Ev<K> }[] =>
  events.filter((x) => x.event.kind === kind).map((x) => ({ seq: x.seq, at: x.at, e: x.event as Ev<K> }));

export interface RunJournal {
  workflowId: string;
  /** The repository's key (its resolved path on the worker). */
  repo: string;
  events: readonly EventEnvelope[];
  traces: readonly IterationTrace[];
}

/** The run's episodes, one per iteration the journal records (the latest record of an iteration wins, after a rewind). */
export function episodesOf(run: RunJournal): Episode[] {
  const iterations = new Map<number, { seq: number; at: string; e: Ev<'iteration'> }>();
  for (const x of of(run.events, 'iteration')) iterations.set(x.e.iteration, x);
  const gates = of(run.events, 'gate');
  const reviews = of(run.events, 'review');
  const councils = of(run.events, 'council_round');
  const traces = new Map(run.traces.map((t) => [t.iteration, t]));
  const out: Episode[] = [];
  let previous: EpisodeOutcome | null = null;
  for (const [n, { at, e }] of [...iterations.entries()].sort((a, b) => a[0] - b[0])) {
    const trace = traces.get(n) ?? null;
    const myGates = gates.filter((g) => g.e.iteration === n).map((g) => g.e);
    const failing = myGates.filter((g) => g.verdict === 'fail');
    const passed = [...new Set(myGates.filter((g) => g.verdict === 'pass').map((g) => g.gate))];
    if (e.tests === 'pass' && !passed.includes('tests')) passed.push('tests');
    const findings = failing.map((g) => clean(`${g.gate}: ${g.reason}`, EPISODE_LIMITS.findingChars));
    for (const r of reviews.filter((x) => x.e.iteration === n)) {
      for (const v of r.e.reviewers.filter((x) => x.blocking))
        findings.push(clean(`review: ${v.reviewer} blocks (${v.verdict})`, EPISODE_LIMITS.findingChars));
    }
    const rejected = councils.filter((c) => c.e.iteration === n).flatMap((c) => c.e.votes.filter((v) => !v.approves).map((v) => v.reason));
    const councilReasons = [...new Set(rejected.map((r) => clean(r, EPISODE_LIMITS.reasonChars)).filter(Boolean))];
    const errors = (trace?.errors ?? []).map((x) => clean(x, EPISODE_LIMITS.errorChars)).filter(Boolean);

    const signatures: string[] = [];
    const testFailure = trace?.testFailure ? normalizeReason(redactSecrets(trace.testFailure).text) : '';
    const testsGate = failing.find((g) => g.gate === 'tests');
    if (testsGate) {
      const name = failingTest(testsGate.reason) ?? normalizeReason(testsGate.reason);
      signatures.push(`tests:${redactSecrets(name).text}:${testFailure}`);
    } else if (e.tests === 'fail') {
      signatures.push(`tests:?:${testFailure}`);
    }
    for (const g of failing.filter((x) => x.gate !== 'tests'))
      signatures.push(`gate:${g.gate}:${normalizeReason(redactSecrets(g.reason).text)}`);
    if (e.exitCode !== 0) signatures.push(`exit:${e.exitCode}:${normalizeReason(errors[0] ?? '')}`);
    for (const r of councilReasons) signatures.push(`council:${normalizeReason(r)}`);

    const outcome: EpisodeOutcome =
      e.exitCode !== 0 || e.tests === 'fail' || testsGate
        ? 'failure'
        : failing.length > 0 || councilReasons.length > 0 || findings.length > 0 || !e.changed
          ? 'partial'
          : 'success';
    // Importance (the seed's signals): the outcome, and surprise (an outcome unlike the one before).
    const base = outcome === 'failure' ? 0.6 : outcome === 'partial' ? 0.5 : 0.4;
    const importance = Math.min(1, base + (previous !== null && previous !== outcome ? 0.2 : 0));
    previous = outcome;
    out.push({
      workflowId: run.workflowId,
      iteration: n,
      repo: run.repo,
      at: at ?? null,
      phase: e.phase,
      tier: e.tier,
      provider: e.provider,
      outcome,
      files: (trace?.files ?? []).slice(0, EPISODE_LIMITS.files).map((f) => clean(f, EPISODE_LIMITS.fileChars)),
      errors: errors.slice(0, EPISODE_LIMITS.errors),
      findings: findings.slice(0, EPISODE_LIMITS.findings),
      councilReasons: councilReasons.slice(0, EPISODE_LIMITS.reasons),
      signatures: [...new Set(signatures.map((s) => s.slice(0, 600)))].slice(0, 20),
      passed: passed.slice(0, 20),
      summary: trace?.summary ? clean(trace.summary, EPISODE_LIMITS.summaryChars) || null : null,
      retrieved: (trace?.retrieved ?? []).slice(0, EPISODE_LIMITS.retrieved),
      importance,
      filesRead: (trace?.filesRead ?? []).slice(0, EPISODE_LIMITS.filesRead).map((f) => clean(f, EPISODE_LIMITS.fileChars)),
    });
  }
  return out;
}

// ---------------------------------------------------------------------------------------------
// Consolidation

const STOP = new Set(
  (
    'the and for with that this from was were are not but you your has have had its into out too all any ' +
    'can will then than when what which who how why test tests failed fails failing pass passed error ' +
    'run runs iteration times same reason gate'
  ).split(' '),
);

/** The words retrieval matches on: lower case, three characters or more, no common words. */
export function keywordsOf(text: string, max = 40): string[] {
  const seen = new Set<string>();
  for (const w of text.toLowerCase().split(/[^a-z0-9_]+/)) {
    if (w.length < 3 || STOP.has(w) || /^\d+$/.test(w)) continue;
    seen.add(w.slice(0, 60));
    if (seen.size >= max) break;
  }
  return [...seen];
}

/** The gate whose pass means the signature's failure was fixed (null: none). */
function fixedBy(sig: string): string | null {
  const p = signatureParts(sig);
  if (p.topic === 'tests') return 'tests';
  if (sig.startsWith('gate:')) return p.subject;
  return null;
}

function describeFailure(sig: string, n: number): string {
  const p = signatureParts(sig);
  const detail = p.detail ? `: ${p.detail}` : '';
  if (p.topic === 'tests')
    return p.subject && p.subject !== '?'
      ? `Test "${p.subject}" failed ${n} times for the same reason${detail}`
      : `The tests failed ${n} times for the same reason${detail}`;
  if (sig.startsWith('gate:')) return `Gate ${p.subject} failed ${n} times for the same reason${detail}`;
  if (p.topic === 'agent') return `The agent's call ended with ${p.subject} ${n} times${detail}`;
  return `The council refused ${n} times for the same reason${detail}`;
}

const key = (repo: string | null, kind: string, sig: string): string => `${repo ?? ''}\u0000${kind}\u0000${sig}`;

export interface Consolidated {
  patterns: Pattern[];
  skills: Skill[];
  links: PatternLink[];
}

/** A run's end as consolidation needs it. */
export interface RunEnd {
  workflowId: string;
  repo: string;
  prdTitle: string;
  /** The outcome's exit code (0: done), null: not ended. */
  exitCode: number | null;
  status: string | null;
}

/**
 * Episodes into patterns, anti-patterns, links and skills. `forgotten` holds the keys
 * (`forgetKey`) a person forgot: they are never consolidated again.
 */
export function consolidate(
  episodes: readonly Episode[],
  runs: readonly RunEnd[],
  forgotten: ReadonlySet<string> = new Set(),
): Consolidated {
  const patterns: Pattern[] = [];
  const links: PatternLink[] = [];
  const byScope = new Map<string, Episode[]>();
  for (const e of episodes)
    for (const s of e.signatures) {
      const k = `${e.repo}\u0000${s}`;
      const list = byScope.get(k) ?? [];
      list.push(e);
      byScope.set(k, list);
    }
  const ordered = (list: readonly Episode[]): Episode[] =>
    [...list].sort(
      (a, b) => (a.at ?? '').localeCompare(b.at ?? '') || a.workflowId.localeCompare(b.workflowId) || a.iteration - b.iteration,
    );
  const fixesOf = (repo: string, sig: string, failures: readonly Episode[]): Episode[] => {
    const gate = fixedBy(sig);
    if (!gate) return [];
    const fixes: Episode[] = [];
    for (const wf of new Set(failures.map((f) => f.workflowId))) {
      const lastFail = Math.max(...failures.filter((f) => f.workflowId === wf).map((f) => f.iteration));
      const fix = ordered(
        episodes.filter((x) => x.repo === repo && x.workflowId === wf && x.iteration > lastFail && x.passed.includes(gate)),
      )[0];
      if (fix) fixes.push(fix);
    }
    return fixes;
  };
  const later = (a: string | null, b: string | null): boolean => (a ?? '') > (b ?? '');

  for (const [k, list] of [...byScope.entries()].sort((a, b) => a[0].localeCompare(b[0]))) {
    const [repo, sig] = k.split('\u0000') as [string, string];
    const failures = ordered(list);
    const runsSeen = new Set(failures.map((f) => f.workflowId)).size;
    const parts = signatureParts(sig);
    const fixes = fixesOf(repo, sig, failures);
    const fixWords = (f: (typeof fixes)[number]): string =>
      `iteration ${f.iteration}${f.files.length ? ` changed ${f.files.slice(0, 5).join(', ')}` : ''}${f.summary ? ` ("${cut(f.summary, 120)}")` : ''}`;
    const fixText = fixes.length ? ` What fixed it: ${fixes.map(fixWords).join('; ')}.` : ' No fix is recorded yet.';
    const words = keywordsOf(`${parts.topic} ${parts.subject} ${parts.detail} ${fixes.flatMap((f) => f.files).join(' ')}`);
    const anti = failures.length >= ANTI_PATTERN_MIN_FAILURES && !forgotten.has(key(repo, 'anti_pattern', sig));
    if (anti) {
      const title = cut(describeFailure(sig, failures.length), 300);
      patterns.push({
        repo,
        kind: 'anti_pattern',
        signature: sig,
        topic: parts.topic,
        title,
        body: cut(
          `${title} (${runsSeen} run(s), iterations ${failures.map((f) => f.iteration).join(', ')}). Do not repeat the approach that failed.${fixText}`,
          2000,
        ),
        keywords: words,
        evidence: failures.length,
        runs: runsSeen,
        firstSeen: failures[0]?.at ?? null,
        lastSeen: failures.at(-1)?.at ?? null,
        importance: Math.min(1, 0.6 + 0.1 * Math.log2(failures.length) + 0.05 * (runsSeen - 1)),
        from: failures.slice(-200).map((f) => ({ workflowId: f.workflowId, iteration: f.iteration })),
      });
    }
    const fix = fixes.length > 0 && failures.length >= 2 && !forgotten.has(key(repo, 'pattern', sig));
    if (fix) {
      const what =
        parts.topic === 'tests' && parts.subject !== '?'
          ? `Test "${parts.subject}"`
          : parts.topic === 'tests'
            ? 'The tests'
            : `Gate ${parts.subject}`;
      const title = cut(`${what} passed again after it failed${parts.detail ? ` (${parts.detail})` : ''}`, 300);
      patterns.push({
        repo,
        kind: 'pattern',
        signature: sig,
        topic: parts.topic,
        title,
        body: cut(`${title}.${fixText}`, 2000),
        keywords: words,
        evidence: fixes.length,
        runs: new Set(fixes.map((f) => f.workflowId)).size,
        firstSeen: fixes[0]?.at ?? null,
        lastSeen: fixes.at(-1)?.at ?? null,
        importance: Math.min(1, 0.5 + 0.1 * fixes.length),
        from: fixes.map((f) => ({ workflowId: f.workflowId, iteration: f.iteration })),
      });
    }
    if (anti && fix) {
      // The fix is newer than the last failure: it supersedes the anti-pattern; else it did not hold.
      const relation =
        later(fixes.at(-1)?.at ?? null, failures.at(-1)?.at ?? null) || fixes.at(-1)?.workflowId === failures.at(-1)?.workflowId
          ? 'supersedes'
          : 'contradicts';
      links.push({ relation, from: { repo, kind: 'pattern', signature: sig }, to: { repo, kind: 'anti_pattern', signature: sig } });
    }
  }

  // Across repositories: a signature consolidated in two repositories or more.
  const bySig = new Map<string, Pattern[]>();
  for (const p of patterns) {
    const k = `${p.kind}\u0000${p.signature}`;
    bySig.set(k, [...(bySig.get(k) ?? []), p]);
  }
  for (const [, list] of [...bySig.entries()].sort((a, b) => a[0].localeCompare(b[0]))) {
    const repos = [...new Set(list.map((p) => p.repo))];
    const first = list[0] as Pattern;
    if (repos.length < 2 || forgotten.has(key(null, first.kind, first.signature))) continue;
    const evidence = list.reduce((n, p) => n + p.evidence, 0);
    patterns.push({
      ...first,
      repo: null,
      title: cut(`${first.title} (in ${repos.length} repositories)`, 300),
      body: cut(`${first.title}. Seen in ${repos.length} repositories of this installation, ${evidence} times in all.`, 2000),
      evidence,
      runs: list.reduce((n, p) => n + p.runs, 0),
      importance: Math.min(1, Math.max(...list.map((p) => p.importance)) + 0.1),
      from: list.flatMap((p) => p.from).slice(0, 200),
    });
    for (const p of list)
      links.push({
        relation: 'derived_from',
        from: { repo: null, kind: first.kind, signature: first.signature },
        to: { repo: p.repo, kind: p.kind, signature: p.signature },
      });
  }

  const { skills, fixed } = skillsOf(episodes, runs, forgotten);
  return { patterns, links: [...links, ...moreLinks(patterns, links, fixed)], skills };
}

/** The kind of task a PRD title names (its keywords, in order). */
export function taskKindOf(prdTitle: string): string {
  return keywordsOf(prdTitle, 6).join(' ') || 'untitled';
}

/**
 * A run that ended done leaves the steps that got it there; runs of one kind of task in one
 * repository make one skill (the latest steps). `fixed`: per skill, the signatures its runs fixed.
 */
function skillsOf(
  episodes: readonly Episode[],
  runs: readonly RunEnd[],
  forgotten: ReadonlySet<string>,
): { skills: Skill[]; fixed: FixedBySkill } {
  const skills = new Map<string, Skill>();
  const fixedPerSkill: FixedBySkill = new Map();
  for (const r of [...runs].filter((x) => x.exitCode === 0).sort((a, b) => a.workflowId.localeCompare(b.workflowId))) {
    const mine = episodes.filter((e) => e.workflowId === r.workflowId).sort((a, b) => a.iteration - b.iteration);
    if (mine.length === 0) continue;
    const taskKind = taskKindOf(r.prdTitle);
    if (forgotten.has(key(r.repo, 'skill', taskKind))) continue;
    const steps: string[] = [];
    const failedBefore = new Set<string>();
    for (const e of mine) {
      for (const s of e.signatures) failedBefore.add(s);
      if (e.outcome === 'failure') continue;
      const fixed = [...failedBefore].filter((s) => fixedBy(s) && e.passed.includes(fixedBy(s) as string));
      for (const s of fixed) failedBefore.delete(s);
      const had = fixedPerSkill.get(`${r.repo}\u0000${taskKind}`) ?? { repo: r.repo, taskKind, fixed: new Set<string>() };
      for (const s of fixed) had.fixed.add(s);
      fixedPerSkill.set(`${r.repo}\u0000${taskKind}`, had);
      const what = e.summary ?? (e.files.length ? `changed ${e.files.slice(0, 5).join(', ')}` : null);
      if (!what && fixed.length === 0) continue;
      steps.push(
        cut(
          `${e.phase ?? 'step'}: ` +
            `${what ?? 'no change'}${fixed.length ? ` (fixed ${fixed.map((s) => signatureParts(s).subject || signatureParts(s).topic).join(', ')})` : ''}`,
          300,
        ),
      );
    }
    steps.push(cut(`ended ${r.status ?? 'done'} after ${mine.length} iteration(s)`, 300));
    const k = `${r.repo}\u0000${taskKind}`;
    const prev = skills.get(k);
    skills.set(k, {
      repo: r.repo,
      taskKind,
      title: cut(`How "${r.prdTitle || taskKind}" got done here`, 300),
      steps: steps.slice(-12),
      keywords: keywordsOf(`${r.prdTitle} ${mine.flatMap((e) => e.files).join(' ')}`),
      evidence: (prev?.evidence ?? 0) + 1,
      importance: Math.min(1, 0.5 + 0.1 * ((prev?.evidence ?? 0) + 1)),
      from: [...(prev?.from ?? []), r.workflowId].slice(-50),
    });
  }
  return { skills: [...skills.values()], fixed: fixedPerSkill };
}

/** The key `forget` records so consolidation never makes the item again. */
export function forgetKey(repo: string | null, kind: 'pattern' | 'anti_pattern' | 'skill', signature: string): string {
  return key(repo, kind, signature);
}
