/**
 * The inputs of the round activities (activities/rounds.ts): a council round and a code review,
 * each one activity from `vigil-round-activity-v1` on. The workflow sends them; the activity
 * checks them before it spends a member call.
 */
import { z } from 'zod';
import { shared } from './shared.js';
import { RunAuthorizationSchema } from './authorization.js';
import { KnobsSchema } from './knobs.js';

const RunStartSchema = shared('schemas/rounds:RunStartSchema', () =>
  z.object({ sha: z.string().nullable(), treeHash: z.string() }).nullable(),
);

const RoundCommon = shared('schemas/rounds:RoundCommon', () => ({
  runId: z.string().min(1),
  repoPath: z.string().min(1),
  prdPath: z.string().min(1),
  round: z.number().int().positive(),
  iteration: z.number().int().nonnegative(),
  knobs: KnobsSchema,
  authorization: RunAuthorizationSchema.nullable(),
  runStart: RunStartSchema,
  testSummary: z.string().max(20_000),
  at: z.string().min(1),
  /** The prompts as their parts (the activity renders them), tails only of failed calls. */
  leanPrompt: z.boolean().optional(),
}));

export const ReviewRoundInputSchema = shared('schemas/rounds:ReviewRoundInputSchema', () =>
  z.object({
    ...RoundCommon,
    /**
     * A delta review (patch `vigil-judges-see-changes-v1`): the diff is taken from the tree an
     * earlier review passed, not from the run's start; its round and iteration name it in the prompt.
     */
    since: z.object({ tree: z.string().min(1), round: z.number().int().positive(), iteration: z.number().int().nonnegative() }).optional(),
  }),
);
export type ReviewRoundInput = z.infer<typeof ReviewRoundInputSchema>;

export const CONVENE_TRIGGERS = ['forced', 'circuit_breaker', 'claim', 'interval', 'tests_green'] as const;

export const CouncilRoundInputSchema = shared('schemas/rounds:CouncilRoundInputSchema', () =>
  z.object({
    ...RoundCommon,
    tests: z.object({ passed: z.boolean(), timedOut: z.boolean(), logPath: z.string() }).nullable(),
    convergenceSummary: z.string().max(20_000),
    /** The integrity and gaming findings a waiver or a checklist item lifted, for the evidence pack (absent: none). */
    liftedFindings: z.string().max(16_000).optional(),
    trigger: z.enum(CONVENE_TRIGGERS),
    /**
     * The PRD checklist verifier's call, carried by the round (from `vigil-council-checklist-v1` on):
     * asked first (in the members' batched call where the provider can), the members only when its
     * answer leaves none of `mustPass` unmet nor any of `mustNotFail` failing (rules/
     * checklist.ts, checklistStop). Absent: the checklist was judged before the round, or has no say.
     */
    checklist: z
      .object({
        // The call as runAgent takes it (schemas/activities.ts, RunAgentInputSchema), which the round activity checks it against: that
        // module imports this one's users.
        call: z.record(z.string(), z.unknown()),
        mustPass: z.array(z.string()).max(200),
        mustNotFail: z.array(z.string()).max(200),
      })
      .nullable()
      .default(null),
  }),
);
export type CouncilRoundInput = z.infer<typeof CouncilRoundInputSchema>;
/** What the workflow sends (a run from before `vigil-council-checklist-v1` sends no `checklist`). */
export type CouncilRoundRequest = z.input<typeof CouncilRoundInputSchema>;
