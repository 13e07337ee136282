/**
 * Re-judging recorded runs (`vigil rejudge`): what a recorded run is (its journal from the event
 * store, the knobs it was started with, and, when the repository still holds them, the files its
 * checks judged, as they were at the run's start and at each check), and what the re-judgement
 * reports per completion check. `rules/rejudge.ts` holds the rules.
 *
 * A recorded run is also the format of the suite's corpus (tests/fixtures/rejudge/) and of
 * `vigil rejudge --export`: references and small texts, never transcripts.
 */
import { z } from 'zod';
import { EventEnvelopeSchema } from './events.js';

/** Files larger than this are left out of a recorded tree (the integrity rules read only text). */
export const MAX_RECORDED_FILE_CHARS = 64 * 1024;
/** Files changed since the run's start that a recorded tree keeps at most. */
export const MAX_RECORDED_FILES = 200;

export const FileDeltaSchema = z.object({
  file: z.string().min(1).max(4096),
  before: z.string().max(MAX_RECORDED_FILE_CHARS).nullable(),
  after: z.string().max(MAX_RECORDED_FILE_CHARS).nullable(),
});

/** The tree a check judged: its hash and the files that differ from the run's start. */
export const RecordedTreeSchema = z.object({
  iteration: z.number().int().min(0),
  tree: z.string().max(100),
  /** Every file changed since the run's start, before and after (null: absent on that side). */
  deltas: z.array(FileDeltaSchema).max(MAX_RECORDED_FILES),
  /** Some changed file was too large or binary, or there were too many: the rules cannot read the whole change. */
  incomplete: z.boolean().default(false),
});
export type RecordedTree = z.infer<typeof RecordedTreeSchema>;

export const RecordedRunSchema = z.object({
  version: z.literal(1),
  workflowId: z.string().min(1).max(1000),
  /** The knobs the run was started with, as its input held them (an older release's input lacks the newer knobs); null: unknown. */
  knobs: z.record(z.string(), z.unknown()).nullable(),
  /** The journal, in sequence order. */
  events: z.array(EventEnvelopeSchema),
  /** The tree the run started from (null: unknown, e.g. its Temporal history is gone). */
  startTree: z.string().max(100).nullable(),
  /** The trees of the iterations its checks judged, when the repository still holds them (checkpoints). */
  trees: z.array(RecordedTreeSchema).default([]),
});
export type RecordedRun = z.infer<typeof RecordedRunSchema>;
export type RecordedRunInput = z.input<typeof RecordedRunSchema>;

/** approved; refused; or a rule that needs a new agent answer or tool run, which re-judging never guesses. */
export const REJUDGED_VERDICTS = ['approved', 'refused', 'needs_new_judgement'] as const;
export type RejudgedVerdict = (typeof REJUDGED_VERDICTS)[number];

export const RejudgedCheckSchema = z.object({
  iteration: z.number().int(),
  /** claim, forced, interval, early … or `claim` for a claim refused before the council. */
  trigger: z.string().max(40),
  /** The council round of the check, when it reached one. */
  round: z.number().int().nullable(),
  recorded: z.object({ verdict: z.enum(['approved', 'refused']), by: z.string().max(40).nullable(), reason: z.string().max(500) }),
  now: z.object({ verdict: z.enum(REJUDGED_VERDICTS), by: z.string().max(40).nullable(), reason: z.string().max(500) }),
  /** The verdict changed (approved ↔ refused); a check that needs a new judgement is not a flip. */
  flipped: z.boolean(),
  /** What else today's rules say about the evidence (the integrity rules' findings on a run recorded before them, a rule left out). */
  notes: z.array(z.string().max(500)),
});
export type RejudgedCheck = z.infer<typeof RejudgedCheckSchema>;

export const RejudgedRunSchema = z.object({
  workflowId: z.string(),
  outcome: z.string().nullable(),
  checks: z.array(RejudgedCheckSchema),
  flips: z.number().int().min(0),
  needsNewJudgement: z.number().int().min(0),
  /** Knobs that differ from the run's own (today's defaults for knobs it did not have, and --set). */
  knobChanges: z.array(z.object({ knob: z.string(), recorded: z.unknown(), now: z.unknown() })),
});
export type RejudgedRun = z.infer<typeof RejudgedRunSchema>;

export const RejudgeReportSchema = z.object({
  set: z.record(z.string(), z.unknown()),
  runs: z.array(RejudgedRunSchema),
  checks: z.number().int().min(0),
  flips: z.number().int().min(0),
  needsNewJudgement: z.number().int().min(0),
});
export type RejudgeReport = z.infer<typeof RejudgeReportSchema>;
