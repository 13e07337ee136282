/**
 * Effort that fits the task: its complexity (simple, standard, complex), what the run measured of
 * the PRD and the repository at its start, the tier it detected and what that tier set
 * (rules/complexity.ts); and the model-tier ladder's carried state
 * (rules/tier-ladder.ts).
 *
 * Sandbox-safe: imported by the workflow bundle.
 */
import { z } from 'zod';
import { shared } from './shared.js';

export const COMPLEXITY_TIERS = ['simple', 'standard', 'complex'] as const;
export const ComplexityTierSchema = shared('schemas/effort:ComplexityTierSchema', () => z.enum(COMPLEXITY_TIERS));
export type ComplexityTier = z.infer<typeof ComplexityTierSchema>;

/** What the start of a run measured (activities/repo-measure.ts): counts and short names, never text. */
export const RepoMeasureSchema = shared('schemas/effort:RepoMeasureSchema', () =>
  z.object({
    /** Tracked and untracked-not-ignored source files, outside node_modules, vendor, dist, build, __pycache__. */
    sourceFiles: z.number().int().min(0),
    /** The languages of those files (by extension), most files first. */
    languages: z.array(z.string().max(40)).max(20),
    /** Services a compose file declares (docker-compose.yml/yaml, compose.yml/yaml), plus one per manifest under k8s/. */
    services: z.number().int().min(0),
    /** A k8s/ directory, or a compose file with more than one service. */
    microservices: z.boolean(),
    prd: z.object({
      words: z.number().int().min(0),
      /** Markdown headings below the title and checkboxes, or the items of a JSON PRD's arrays. */
      features: z.number().int().min(0),
      /** The external integrations the PRD names (OAuth, SAML, OIDC, Stripe, Twilio, AWS, Google Cloud, Azure). */
      integrations: z.array(z.string().max(40)).max(20),
      /** The kinds of requirement the PRD holds (api, ui, data, security, performance, integration, infrastructure). */
      kinds: z.array(z.string().max(40)).max(20),
    }),
  }),
);
export type RepoMeasure = z.infer<typeof RepoMeasureSchema>;

/** The knobs a complexity tier sets (each only where the person did not set it). */
export const EffortKnobsSchema = shared('schemas/effort:EffortKnobsSchema', () =>
  z
    .object({
      councilSize: z.number().int(),
      councilMinIterations: z.number().int(),
      councilCheckInterval: z.number().int(),
      reviewComplexity: ComplexityTierSchema,
    })
    .partial(),
);
export type EffortKnobs = z.infer<typeof EffortKnobsSchema>;

/** The run's complexity, decided once at its start and carried. */
export const ComplexityRecordSchema = shared('schemas/effort:ComplexityRecordSchema', () =>
  z.object({
    tier: ComplexityTierSchema,
    /** detected: from the measure; knob: the complexity knob named the tier. */
    source: z.enum(['detected', 'knob']),
    /** Why this tier, one short line each. */
    reasons: z.array(z.string().max(200)).max(12),
    measure: RepoMeasureSchema.nullable(),
    /** The tier's phases, in order. */
    phases: z.array(z.string().max(20)).max(10),
    /** What the tier set. */
    applied: EffortKnobsSchema,
    /** The knobs the tier would set that the person set explicitly: theirs win. */
    kept: z.array(z.string().max(60)).max(10),
  }),
);
export type ComplexityRecord = z.infer<typeof ComplexityRecordSchema>;

export const LEVELS = ['LOW', 'MEDIUM', 'HIGH'] as const;
export const LadderStateSchema = shared('schemas/run:LadderStateSchema', () =>
  z.object({
    level: z.enum(LEVELS),
    failuresAtLevel: z.number().int().min(0),
    successStreak: z.number().int().min(0),
    pinnedHigh: z.boolean(),
    humanEscalated: z.boolean(),
    changes: z
      .array(z.object({ iteration: z.number().int(), from: z.enum(LEVELS), to: z.enum(LEVELS), trigger: z.string().max(300) }))
      .max(20),
  }),
);
