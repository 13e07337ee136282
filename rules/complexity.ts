/**
 * Effort that fits the task: the run's complexity (simple, standard, complex), detected once at its
 * start from the PRD and the repository (spec §1.1 step 7 `detect_complexity`; seed 003 §14), and
 * what each tier sets.
 *
 * Detection (seed 003 §14.1, its thresholds as published):
 *   - complex: more than 50 source files, an external integration named in the PRD (OAuth, SAML,
 *     OIDC, Stripe, Twilio, AWS, Google Cloud, Azure), microservices (a k8s/ directory, or a compose
 *     file with more than one service), a PRD over 1000 words or with more than 15 features;
 *   - simple: at most 5 source files, none of the above, a PRD under 200 words with fewer than 5
 *     features; Vigil adds two conditions of its own: at most two languages, and fewer than three
 *     kinds of requirement (api, ui, data, security, performance, integration, infrastructure);
 *   - standard: everything else (the default tier).
 *
 * What a tier sets (`EFFORT_PROFILES`), each knob only where the person did not set it (explicit
 * knobs win):
 *   - the phases (seed 003 §14.1: 3, 6 or 8, by name), shown in status (not yet in the prompt);
 *   - the review panel: `reviewComplexity`, 2 specialists (simple, standard) or 4 (complex) beside
 *     the mandatory reviewers (spec §5.4);
 *   - the council's iteration floor and interval: `councilMinIterations` 1 for simple (spec §2.1:
 *     "effective 1 for simple complexity unless set explicitly"), `councilCheckInterval` 3 for
 *     simple (spec §2.1, the auto-tune's "simple -> interval 3"), the defaults otherwise;
 *   - the council's size: 3 members, 5 for complex. The seed gives one size (3); five for a complex
 *     task is Vigil's choice, the threshold following it (ceil(2n/3): 4 of 5).
 *
 * Pure: no clocks, randomness, environment or I/O.
 */
import type { ComplexityRecord, ComplexityTier, EffortKnobs, RepoMeasure } from '../schemas/effort.js';
import type { KnobName, Knobs } from '../schemas/knobs.js';
import { ceilingTier } from './tier-ceiling.js';

/** Seed 003 §14.1: the limits of each tier. */
export const COMPLEXITY_LIMITS = {
  simpleMaxFiles: 5,
  complexMinFiles: 51,
  simpleMaxWords: 199,
  complexMinWords: 1001,
  simpleMaxFeatures: 4,
  complexMinFeatures: 16,
  /** Vigil's: a task in more languages than this is not simple. */
  simpleMaxLanguages: 2,
  /** Vigil's: a PRD with this many kinds of requirement is not simple. */
  notSimpleKinds: 3,
} as const;

/** Seed 003 §14.1: the phases of each tier. */
export const COMPLEXITY_PHASES: Record<ComplexityTier, readonly string[]> = {
  simple: ['IMPLEMENT', 'TEST', 'DEPLOY'],
  standard: ['RESEARCH', 'DESIGN', 'IMPLEMENT', 'TEST', 'REVIEW', 'DEPLOY'],
  complex: ['RESEARCH', 'ARCHITECTURE', 'DESIGN', 'IMPLEMENT', 'TEST', 'REVIEW', 'SECURITY', 'DEPLOY'],
};

/** What each tier sets (see the header for where each number comes from). */
export const EFFORT_PROFILES: Record<ComplexityTier, Required<EffortKnobs>> = {
  simple: { councilSize: 3, councilMinIterations: 1, councilCheckInterval: 3, reviewComplexity: 'simple' },
  standard: { councilSize: 3, councilMinIterations: 3, councilCheckInterval: 5, reviewComplexity: 'standard' },
  complex: { councilSize: 5, councilMinIterations: 3, councilCheckInterval: 5, reviewComplexity: 'complex' },
};

const EFFORT_KNOBS = [
  'councilSize',
  'councilMinIterations',
  'councilCheckInterval',
  'reviewComplexity',
] as const satisfies readonly (keyof EffortKnobs & KnobName)[];

/** The integrations the seed names, as the PRD may spell them. */
const INTEGRATIONS: readonly [string, RegExp][] = [
  ['OAuth', /\boauth\s*2?\b/i],
  ['SAML', /\bsaml\b/i],
  ['OIDC', /\b(oidc|openid connect)\b/i],
  ['Stripe', /\bstripe\b/i],
  ['Twilio', /\btwilio\b/i],
  ['AWS', /\b(aws|amazon web services|s3 bucket|lambda function)\b/i],
  ['Google Cloud', /\b(google cloud|gcp|bigquery)\b/i],
  ['Azure', /\bazure\b/i],
];

/** Kinds of requirement, by the words that name them. */
const KINDS: readonly [string, RegExp][] = [
  ['api', /\b(api|apis|endpoints?|rest|graphql|grpc|routes?|http)\b/i],
  ['ui', /\b(ui|pages?|buttons?|forms?|screens?|frontend|css|components?|dashboard)\b/i],
  ['data', /\b(database|schema|migrations?|tables?|sql|postgres\w*|mysql|mongo\w*|sqlite)\b/i],
  ['security', /\b(auth\w*|login|passwords?|tokens?|encrypt\w*|permissions?|rbac|secrets?)\b/i],
  ['performance', /\b(performance|latency|throughput|caching|cache|scal(e|ing|able))\b/i],
  ['infrastructure', /\b(docker|kubernetes|k8s|deploy\w*|terraform|helm|ci pipeline)\b/i],
];

function countJsonItems(v: unknown): number {
  if (Array.isArray(v)) return v.length + v.reduce<number>((n, x) => n + (typeof x === 'object' && x !== null ? countJsonItems(x) : 0), 0);
  if (typeof v === 'object' && v !== null) return Object.values(v).reduce<number>((n, x) => n + countJsonItems(x), 0);
  return 0;
}

/** What a PRD says of the task's size: its words, features, the integrations and kinds of requirement it names. */
export function measurePrd(text: string, json = false): RepoMeasure['prd'] {
  const words = text.split(/\s+/).filter((w) => /[\p{L}\p{N}]/u.test(w)).length;
  let features = 0;
  let parsed = false;
  if (json) {
    try {
      features = countJsonItems(JSON.parse(text) as unknown);
      parsed = true;
    } catch {
      // Not JSON after all: read as markdown.
    }
  }
  if (!parsed) {
    const lines = text.split('\n');
    const headings = lines.filter((l) => /^#{1,6}\s+\S/.test(l));
    const title = headings.length > 0 && /^#\s/.test(headings[0] ?? '') ? 1 : 0;
    const boxes = lines.filter((l) => /^\s*[-*+]\s+\[[ xX]\]/.test(l)).length;
    features = headings.length - title + boxes;
  }
  const integrations = INTEGRATIONS.filter(([, re]) => re.test(text)).map(([name]) => name);
  const kinds = KINDS.filter(([, re]) => re.test(text)).map(([name]) => name);
  if (integrations.length > 0) kinds.push('integration');
  return { words, features, integrations, kinds };
}

/** The tier of a measured task, with the reasons (seed 003 §14.1, and Vigil's two conditions for simple). */
export function detectComplexity(m: RepoMeasure): { tier: ComplexityTier; reasons: string[] } {
  const L = COMPLEXITY_LIMITS;
  const complex: string[] = [];
  if (m.sourceFiles >= L.complexMinFiles) complex.push(`${m.sourceFiles} source files (> 50)`);
  if (m.prd.integrations.length > 0) complex.push(`external integrations: ${m.prd.integrations.join(', ')}`);
  if (m.microservices) complex.push(`microservices (${m.services} services)`);
  if (m.prd.words >= L.complexMinWords) complex.push(`a PRD of ${m.prd.words} words (> 1000)`);
  if (m.prd.features >= L.complexMinFeatures) complex.push(`${m.prd.features} features in the PRD (> 15)`);
  if (complex.length > 0) return { tier: 'complex', reasons: complex };

  const notSimple: string[] = [];
  if (m.sourceFiles > L.simpleMaxFiles) notSimple.push(`${m.sourceFiles} source files (> 5)`);
  if (m.prd.words > L.simpleMaxWords) notSimple.push(`a PRD of ${m.prd.words} words (>= 200)`);
  if (m.prd.features > L.simpleMaxFeatures) notSimple.push(`${m.prd.features} features in the PRD (>= 5)`);
  if (m.languages.length > L.simpleMaxLanguages) notSimple.push(`${m.languages.length} languages (${m.languages.join(', ')})`);
  if (m.prd.kinds.length >= L.notSimpleKinds) notSimple.push(`${m.prd.kinds.length} kinds of requirement (${m.prd.kinds.join(', ')})`);
  if (notSimple.length > 0) return { tier: 'standard', reasons: notSimple };
  return {
    tier: 'simple',
    reasons: [
      `${m.sourceFiles} source file${m.sourceFiles === 1 ? '' : 's'}, a PRD of ${m.prd.words} words with ` +
        `${m.prd.features} feature${m.prd.features === 1 ? '' : 's'}, no integration or microservices`,
    ],
  };
}

/**
 * The knobs a person set (flag, --set, environment, config file): the list the client sent. A
 * caller that sent none (an older client, an API caller with a whole knob set) cannot be told
 * apart from one that chose every value: each knob counts as set, so the complexity is shown and
 * changes nothing.
 */
export function knobsGiven(sent: readonly string[] | undefined): ReadonlySet<string> {
  return new Set(sent ?? EFFORT_KNOBS);
}

/** The knobs a person set (a flag, --set, the environment, a config file) by where each came from: the run's `knobsGiven`. */
export function knobsGivenOf(resolved: { sources: Record<string, { source: string }> }): string[] {
  return Object.entries(resolved.sources)
    .filter(([, o]) => o.source !== 'default')
    .map(([k]) => k);
}

/** The complexity knob as the run's setting: auto (detect), off, or a tier named by the person. */
export type ComplexitySetting = 'auto' | 'off' | ComplexityTier;

/**
 * The run's complexity at its start, and what it sets: null when the knob is off (or auto with
 * nothing measured). A knob the person set keeps its value (listed in `kept`).
 */
export function decideComplexity(
  setting: ComplexitySetting,
  measure: RepoMeasure | null,
  knobs: Knobs,
  given: ReadonlySet<string>,
): ComplexityRecord | null {
  if (setting === 'off') return null;
  let tier: ComplexityTier;
  let reasons: string[];
  if (setting === 'auto') {
    if (measure === null) return null;
    ({ tier, reasons } = detectComplexity(measure));
  } else {
    tier = setting;
    reasons = [`the complexity knob says ${setting}`];
  }
  const profile = EFFORT_PROFILES[tier];
  const applied: EffortKnobs = {};
  const kept: string[] = [];
  for (const k of EFFORT_KNOBS) {
    if (given.has(k)) kept.push(k);
    else Object.assign(applied, { [k]: profile[k] });
  }
  return {
    tier,
    source: setting === 'auto' ? 'detected' : 'knob',
    reasons: reasons.slice(0, 12).map((r) => r.slice(0, 200)),
    measure,
    phases: [...COMPLEXITY_PHASES[tier]],
    applied,
    kept,
  };
}

/** The knobs the run goes by: the person's, with what its complexity set, and the pinned tier under the maxTier ceiling (every role's calls). */
export function effectiveKnobs(knobs: Knobs, complexity: ComplexityRecord | null): Knobs {
  const tier = ceilingTier(knobs.tier, knobs.maxTier);
  if (complexity === null && tier === knobs.tier) return knobs;
  return { ...knobs, ...complexity?.applied, tier };
}

/** One line for status: the tier, why, and what it set or left to the person. */
export function complexityLine(c: ComplexityRecord): string {
  const a = c.applied;
  const set: string[] = [];
  if (a.councilSize !== undefined) set.push(`council ${a.councilSize}`);
  if (a.reviewComplexity !== undefined) set.push(`review panel ${a.reviewComplexity === 'complex' ? 4 : 2} specialists`);
  if (a.councilMinIterations !== undefined) set.push(`council from iteration ${a.councilMinIterations}`);
  if (a.councilCheckInterval !== undefined) set.push(`every ${a.councilCheckInterval} iterations`);
  const how = c.source === 'knob' ? 'set by the complexity knob' : `detected: ${c.reasons.join('; ')}`;
  const kept = c.kept.length > 0 ? `; explicit knobs win: ${c.kept.join(', ')}` : '';
  return `${c.tier} (${how}); phases ${c.phases.join(' > ')}; ${set.length > 0 ? set.join(', ') : 'nothing set'}${kept}`;
}
