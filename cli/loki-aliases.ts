/**
 * Migrating from loki-mode: the original's `LOKI_*` environment variables that have a Vigil knob
 * with the same meaning, units and values (spec: shared/spec/original-run-loop.md). Such a
 * variable is read as that knob when its `VIGIL_*` variable is not set (the `VIGIL_*` one wins),
 * with a one-line note on stderr naming the knob. Variables whose meaning differs in Vigil (a model
 * name for a tier, a failover switch separate from its chain, ...) are not aliases.
 *
 * Client-only: the CLI resolves knobs; the workflow never reads the environment.
 */
import type { KnobName } from '../schemas/knobs.js';

export const LOKI_ALIASES: Readonly<Partial<Record<KnobName, string>>> = {
  maxIterations: 'LOKI_MAX_ITERATIONS',
  iterationGrace: 'LOKI_ITERATION_GRACE',
  selfHeal: 'LOKI_SELF_HEAL',
  // The original's override of its complexity detection (simple | standard | complex), unprefixed there too.
  complexity: 'COMPLEXITY_TIER',
  maxDurationSeconds: 'LOKI_MAX_DURATION',
  maxRetries: 'LOKI_MAX_RETRIES',
  baseWaitSeconds: 'LOKI_BASE_WAIT',
  maxWaitSeconds: 'LOKI_MAX_WAIT',
  provider: 'LOKI_PROVIDER',
  agentTimeoutSeconds: 'LOKI_PROVIDER_CALL_TIMEOUT',
  completionPromise: 'LOKI_COMPLETION_PROMISE',
  testCommand: 'LOKI_TEST_COMMAND',
  legacyTierRotation: 'LOKI_LEGACY_TIER_SWITCHING',
  councilEnabled: 'LOKI_COUNCIL_ENABLED',
  councilSize: 'LOKI_COUNCIL_SIZE',
  councilThreshold: 'LOKI_COUNCIL_THRESHOLD',
  councilCheckInterval: 'LOKI_COUNCIL_CHECK_INTERVAL',
  councilMinIterations: 'LOKI_COUNCIL_MIN_ITERATIONS',
  councilEarlyCheck: 'LOKI_COUNCIL_CONVERGENCE_EARLY',
  councilMemberTimeoutSeconds: 'LOKI_COUNCIL_REVIEW_TIMEOUT',
  councilBlind: 'LOKI_BLIND_VALIDATION',
  councilSeverityThreshold: 'LOKI_COUNCIL_SEVERITY_THRESHOLD',
  councilErrorBudget: 'LOKI_COUNCIL_ERROR_BUDGET',
  stagnationLimit: 'LOKI_COUNCIL_STAGNATION_LIMIT',
  doneSignalLimit: 'LOKI_COUNCIL_DONE_SIGNAL_LIMIT',
  evidenceGate: 'LOKI_EVIDENCE_GATE',
  evidenceSecretScan: 'LOKI_EVIDENCE_SECRET_GATE',
  evidenceNoTestsAffirmative: 'LOKI_EVIDENCE_NO_TESTS_AFFIRMATIVE',
  autonomyMode: 'LOKI_AUTONOMY_MODE',
  uncertaintyEscalation: 'LOKI_UNCERTAINTY_ESCALATION',
  uncertaintyRounds: 'LOKI_UNCERTAINTY_ROUNDS',
  uncertaintyNoChangeMin: 'LOKI_UNCERTAINTY_NOCHANGE_MIN',
  uncertaintySplitRounds: 'LOKI_UNCERTAINTY_SPLIT_ROUNDS',
  notifyWebhookUrl: 'LOKI_WEBHOOK_URL',
  notifySlackWebhookUrl: 'LOKI_SLACK_WEBHOOK',
  notifyDiscordWebhookUrl: 'LOKI_DISCORD_WEBHOOK',
  budgetUsd: 'LOKI_BUDGET_LIMIT',
  qualityGates: 'LOKI_HARD_GATES',
  gateTimeoutSeconds: 'LOKI_GATE_TIMEOUT',
  gateMockIntegrity: 'LOKI_GATE_MOCK',
  gateTestMutation: 'LOKI_GATE_MUTATION',
  gateDocCoverage: 'LOKI_GATE_DOC_COVERAGE',
  gateCoverage: 'LOKI_ENFORCE_COVERAGE',
  coverageThreshold: 'LOKI_MIN_COVERAGE',
  gateEscalateAfter: 'LOKI_GATE_ESCALATE_LIMIT',
  gatePauseAfter: 'LOKI_GATE_PAUSE_LIMIT',
  gateStuckAfter: 'LOKI_GATE_STUCK_THRESHOLD',
  codeReview: 'LOKI_PHASE_CODE_REVIEW',
  reviewDevilsAdvocate: 'LOKI_GATE_DEVILS_ADVOCATE',
  reviewInconclusiveBlocks: 'LOKI_REVIEW_INCONCLUSIVE_BLOCK',
  reviewMaxReviewers: 'LOKI_REVIEW_MAX_REVIEWERS',
  reviewMaxDiffBytes: 'LOKI_REVIEW_MAX_DIFF_BYTES',
  reviewMergeabilityMin: 'LOKI_REVIEW_MERGEABILITY_MIN',
  checklistHeldOut: 'LOKI_HELDOUT_GATE',
};

/** `explain`'s detail for a value read from an alias. */
export function aliasDetail(alias: string, vigilEnv: string): string {
  return `${alias} (alias of ${vigilEnv})`;
}
