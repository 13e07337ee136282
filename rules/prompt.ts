/**
 * Prompt assembly for an iteration: a pure function of the prompt's parts (PRD reference,
 * iteration, phase and tier, retry, human directives, the previous iteration's findings, quality
 * gate failures, the checklist, the run memory) and a template. The PRD is referenced by path (the
 * agent reads it), which keeps prompts, and so history, small.
 *
 * A template is text with `{{placeholder}}`s: scalars (`{{iteration}}`, `{{phase}}`, ...) and
 * sections (`{{directives}}`, `{{runSoFar}}`, ...) that render with their own heading, or as
 * nothing when they have nothing to say; a line holding only an empty section disappears, and
 * blank lines never pile up. The default template below is what every run uses unless the
 * `promptTemplate` knob names a file; `parsePromptTemplate` checks such a file (unknown or
 * missing placeholders are errors that say what to write instead).
 */
import type { PromptInput } from '../schemas/activities.js';
import type { Phase } from '../schemas/run.js';

export type { PromptInput };

/** The RARV meaning of each phase (spec §1.6): what this iteration is for. */
const PHASE_GUIDANCE: Record<Phase, string> = {
  REASON:
    'REASON: read the requirements and the current code, .vigil/CONTINUITY.md and the run so far; decide ' +
    'the next most valuable step and write it down in .vigil/CONTINUITY.md.',
  ACT: 'ACT: implement the next step; keep changes small and commit them with a clear message.',
  REFLECT:
    'REFLECT: review what changed (git log, git diff, the run so far); note mistakes and what to do differently in .vigil/CONTINUITY.md.',
  VERIFY:
    'VERIFY: run the tests and check the requirements; fix what fails, and record what you learned about this repository in .vigil/learnings.md.',
};

/** Scalar placeholders: one value each, used inline. */
export const SCALAR_PLACEHOLDERS = [
  'prd',
  'prdPath',
  'prdTitle',
  'iteration',
  'maxIterations',
  'phase',
  'tier',
  'retry',
  'completionPromise',
] as const;

/** Section placeholders: each renders with its heading, or as nothing (and its line goes). */
export const SECTION_PLACEHOLDERS = [
  'phaseGuidance',
  'retryNote',
  'freshSession',
  'handoff',
  'directives',
  'findings',
  'gateFindings',
  'checklist',
  'continuity',
  'learnings',
  'earlierRuns',
  'runSoFar',
  'notes',
  'completion',
  'rules',
] as const;

export type PromptPlaceholder = (typeof SCALAR_PLACEHOLDERS)[number] | (typeof SECTION_PLACEHOLDERS)[number];
export const PROMPT_PLACEHOLDERS: readonly PromptPlaceholder[] = [...SCALAR_PLACEHOLDERS, ...SECTION_PLACEHOLDERS];

/**
 * Placeholders every template must have: without the directives a person's `vigil input` would
 * never reach the agent; without the completion instruction the agent could never finish.
 */
export const REQUIRED_PLACEHOLDERS: readonly PromptPlaceholder[] = ['directives', 'completion'];

/** Largest template file. */
export const MAX_TEMPLATE_BYTES = 64 * 1024;

export const DEFAULT_PROMPT_TEMPLATE = `You are an autonomous coding agent working in this git repository.
Requirements (PRD): {{prd}}. Read it before you start.

Iteration {{iteration}} of at most {{maxIterations}}. Phase {{phase}}, tier {{tier}}.
{{phaseGuidance}}
{{retryNote}}

{{freshSession}}

{{handoff}}

{{directives}}

{{findings}}

{{gateFindings}}

{{checklist}}

{{continuity}}

{{learnings}}

{{earlierRuns}}

{{runSoFar}}

{{notes}}

{{completion}}
{{rules}}
`;

/** The heading of the memory from earlier runs (docs/memory.md). */
export const EARLIER_RUNS_HEADING =
  "Memory from earlier runs on this repository (Vigil's memory: what worked and what failed before; weigh it, it may be out of date):";

/** A checked template: its text and the placeholders it uses. */
export interface PromptTemplate {
  readonly text: string;
  readonly placeholders: readonly PromptPlaceholder[];
}

const PLACEHOLDER = /\{\{\s*([^{}]*?)\s*\}\}/g;

function nearest(name: string): PromptPlaceholder | null {
  const n = name.toLowerCase().replace(/[-_\s]/g, '');
  let best: { p: PromptPlaceholder; d: number } | null = null;
  for (const p of PROMPT_PLACEHOLDERS) {
    const d = distance(n, p.toLowerCase());
    if (d <= Math.max(2, Math.floor(p.length / 3)) && (!best || d < best.d)) best = { p, d };
  }
  return best?.p ?? null;
}

function distance(a: string, b: string): number {
  const prev = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    let diag = prev[0] as number;
    prev[0] = i;
    for (let j = 1; j <= b.length; j++) {
      const up = prev[j] as number;
      prev[j] = Math.min(up + 1, (prev[j - 1] as number) + 1, diag + (a[i - 1] === b[j - 1] ? 0 : 1));
      diag = up;
    }
  }
  return prev[b.length] as number;
}

/**
 * Checks a template: every `{{name}}` must be a known placeholder, braces must pair up, and the
 * required placeholders must be there. Errors name the line and what to write instead.
 */
export function parsePromptTemplate(text: string): { ok: true; template: PromptTemplate } | { ok: false; errors: string[] } {
  const errors: string[] = [];
  const body = text.replace(/^\uFEFF/, '').replace(/\r\n/g, '\n');
  if (body.length > MAX_TEMPLATE_BYTES) errors.push(`the template is ${body.length} characters long; at most ${MAX_TEMPLATE_BYTES}`);
  const used = new Set<PromptPlaceholder>();
  body.split('\n').forEach((l, i) => {
    for (const m of l.matchAll(PLACEHOLDER)) {
      const name = m[1] ?? '';
      if ((PROMPT_PLACEHOLDERS as readonly string[]).includes(name)) {
        used.add(name as PromptPlaceholder);
        continue;
      }
      const guess = nearest(name);
      errors.push(
        `line ${i + 1}: unknown placeholder {{${name}}}${guess ? `; did you mean {{${guess}}}?` : ''} (known: ${PROMPT_PLACEHOLDERS.join(', ')})`,
      );
    }
    const rest = l.replace(PLACEHOLDER, '');
    if (rest.includes('{{') || rest.includes('}}'))
      errors.push(`line ${i + 1}: unpaired braces: write a placeholder as {{name}}, e.g. {{iteration}}`);
  });
  for (const r of REQUIRED_PLACEHOLDERS) {
    if (!used.has(r))
      errors.push(
        `the template has no {{${r}}}: ` +
          (r === 'directives'
            ? "a person's directives (vigil input) would never reach the agent"
            : 'the agent would never learn how to claim completion') +
          '; add it on a line of its own',
      );
  }
  if (errors.length > 0) return { ok: false, errors };
  return { ok: true, template: { text: body, placeholders: [...used] } };
}

const DEFAULT_TEMPLATE = ((): PromptTemplate => {
  const r = parsePromptTemplate(DEFAULT_PROMPT_TEMPLATE);
  if (!r.ok) throw new Error(`the default prompt template is invalid: ${r.errors.join('; ')}`);
  return r.template;
})();

/** Every placeholder's text for this prompt; a section is '' when it has nothing to say. */
export function promptValues(p: PromptInput): Record<PromptPlaceholder, string> {
  const section = (heading: string, body: string | null | undefined): string => (body ? `${heading}\n${body}` : '');
  const directives = p.directives.length
    ? [
        'HUMAN DIRECTIVE (priority; follow it before anything else):',
        ...p.directives.flatMap((d) => [`[from ${d.by} at ${d.at}]`, d.text]),
      ].join('\n')
    : '';
  const completion = [
    'When every requirement is implemented and the tests pass, claim completion by',
    ...(p.completionPromise ? [`printing the exact line "${p.completionPromise}" or`] : []),
    'creating the file .vigil/signals/COMPLETION_REQUESTED. The claim is verified independently.',
  ].join('\n');
  const m = p.memory ?? null;
  return {
    prd: `${p.prdPath}${p.prdTitle ? ` — "${p.prdTitle}"` : ''}`,
    prdPath: p.prdPath,
    prdTitle: p.prdTitle,
    iteration: String(p.iteration),
    maxIterations: String(p.maxIterations),
    phase: p.phase,
    tier: p.tier,
    retry: String(p.retry),
    completionPromise: p.completionPromise,
    phaseGuidance: PHASE_GUIDANCE[p.phase],
    retryNote:
      p.retry > 0
        ? `The previous ${p.retry === 1 ? 'attempt' : `${p.retry} attempts`} failed; check the state of the repository before continuing.`
        : '',
    freshSession: p.freshSession
      ? 'This is a FRESH SESSION: earlier conversation context was cleared on request. Rebuild your picture ' +
        'of the work from the repository, your continuity notes and the run so far below.'
      : '',
    handoff: section('Where things stand (latest handoff):', p.handoffSummary),
    directives,
    findings: section('Findings from the previous iteration:', p.findings),
    gateFindings: section('QUALITY GATE FAILURES (fix these; a failing blocking gate refuses completion):', p.gateFindings),
    checklist: section('Requirements checklist (verified independently before completion):', p.checklist),
    continuity: section('Your continuity notes (.vigil/CONTINUITY.md, as you left them):', m?.continuity),
    learnings: section('Learnings about this repository from earlier runs (.vigil/learnings.md):', m?.learnings),
    earlierRuns: section(EARLIER_RUNS_HEADING, p.earlierRuns),
    runSoFar: section('The run so far (newest first):', m?.runSoFar),
    notes: m
      ? [
          'Notes that outlive this session (a fresh session starts from them):',
          '- .vigil/CONTINUITY.md: where the work stands, what is next, decisions and mistakes to avoid; it comes back in the next prompt.',
          '- .vigil/signals/SUMMARY: one or two sentences on what this iteration did; it joins the run so far.',
          '- .vigil/learnings.md: append lasting lessons about this repository (how to build and test it, pitfalls); later runs read them.',
        ].join('\n')
      : '',
    completion,
    rules: `${TEST_HONESTY}\n${
      m
        ? 'Never push, and never stop to wait for an answer: decide, note the assumption, go on ' +
          '(for a real blocker, write .vigil/signals/HUMAN_REVIEW_NEEDED). Under .vigil/ write only CONTINUITY.md, learnings.md and files in .vigil/signals/.'
        : 'Never push, and do not edit anything under .vigil/ except that signal file.'
    }`,
  };
}

/**
 * The honest way out, in every builder prompt: what Vigil checks (integrity from the run's start,
 * the runner's own report, code that games its tests) and what to do when the tests and the PRD
 * disagree (rules/integrity.ts, gaming.ts, tests-verdict.ts).
 */
export const TEST_HONESTY =
  'Never delete, skip or weaken a test or its harness to reach green: Vigil checks both against the ' +
  "run's start. If the tests and the PRD disagree, write .vigil/signals/HUMAN_REVIEW_NEEDED as " +
  '{"reason": "...", "blocking": true, "defaultAnswer": "what you would do if nobody answers"} and ' +
  'stop.';

/** Fills a template: placeholders replaced; lines of empty sections dropped; blank lines collapsed. */
export function renderPromptTemplate(template: PromptTemplate, values: Record<PromptPlaceholder, string>): string {
  const out: string[] = [];
  for (const raw of template.text.split('\n')) {
    const only = /^\s*\{\{\s*([A-Za-z]+)\s*\}\}\s*$/.exec(raw);
    if (only && (values[only[1] as PromptPlaceholder] ?? '') === '') continue;
    const filled = raw.replace(PLACEHOLDER, (_, name: string) => values[name as PromptPlaceholder] ?? '');
    if (filled.trim() === '' && (out.length === 0 || out.at(-1) === '')) continue;
    out.push(filled.trim() === '' ? '' : filled);
  }
  while (out.at(-1) === '') out.pop();
  return out.join('\n');
}

export function buildPrompt(p: PromptInput, template: PromptTemplate = DEFAULT_TEMPLATE): string {
  const text = renderPromptTemplate(template, promptValues(p));
  // The honest way out is in every builder prompt, whatever a person's template left out.
  return template.placeholders.includes('rules') ? text : `${text}\n\n${TEST_HONESTY}`;
}
