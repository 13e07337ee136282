/**
 * The knobs in sections, and which of them are first-class: the about twenty a person starting a
 * run may well set (`vigil config --explain` shows those, and every knob not at its default; `--all`
 * shows the rest, the advanced ones). The registry itself (types, bounds, defaults) is
 * schemas/knobs.ts; docs/knobs.md is generated from both (`npm run docs:knobs`).
 *
 * Sandbox-safe: plain data, no Node APIs.
 */
import type { KnobName } from './knobs.js';

export interface KnobSection {
  /** Short name: `gates`, `council`, ... */
  readonly id: string;
  /** The heading of the section in docs/knobs.md and in `vigil config --explain`. */
  readonly title: string;
  /** One paragraph (Markdown) that opens the section in docs/knobs.md. */
  readonly intro: string;
  /** Its knobs, in the order they are shown. */
  readonly knobs: readonly KnobName[];
}

export const KNOB_SECTIONS: readonly KnobSection[] = [
  {
    id: 'run',
    title: 'The run and its limits',
    intro:
      'How long a run may go on, what it may spend, how it waits after a failed iteration, and what it keeps ' +
      '([how a run works](how-a-run-works.md)).',
    knobs: [
      'maxIterations',
      'iterationGrace',
      'maxDurationSeconds',
      'budgetUsd',
      'orchestrationBudgetShare',
      'maxRetries',
      'baseWaitSeconds',
      'maxWaitSeconds',
      'backoffJitterSeconds',
      'deadLetterAfter',
      'selfHeal',
      'completionPromise',
      'promptTemplate',
      'continueAsNewEvery',
      'stagnationLimit',
      'doneSignalLimit',
      'onStuck',
      'forkAttempts',
      'forkWith',
      'checkpointsKept',
      'heartbeatTimeoutSeconds',
    ],
  },
  {
    id: 'agent',
    title: 'The agent and its models',
    intro:
      'Which agent CLI builds, with which models, how long one call may take, and where an iteration goes when ' +
      'the provider is unavailable ([agents and providers](agents-and-providers.md)).',
    knobs: [
      'provider',
      'agentCommand',
      'model',
      'modelPlanning',
      'modelDevelopment',
      'modelFast',
      'effort',
      'fallbackModel',
      'agentTimeoutSeconds',
      'agentSilenceMinutes',
      'providerFailover',
      'failoverAfterSeconds',
      'rateLimitRpm',
      'rateLimitNotifySeconds',
    ],
  },
  {
    id: 'breaker',
    title: 'The provider breaker',
    intro: 'One circuit breaker per provider, shared by every run, so that runs wait together instead of hammering a failing provider.',
    knobs: [
      'providerBreaker',
      'breakerFailures',
      'breakerWindowSeconds',
      'breakerCooldownSeconds',
      'breakerProbeSeconds',
      'breakerSuccesses',
    ],
  },
  {
    id: 'tiers',
    title: 'Model tiers',
    intro: 'The tier a run works at, and the ladder that climbs it on repeated failures and steps down after steady successes.',
    knobs: [
      'tier',
      'legacyTierRotation',
      'tierLadder',
      'tierLowMaxFailures',
      'tierMediumMaxFailures',
      'tierHighMaxFailures',
      'tierDeescalateSuccesses',
      'maxTier',
    ],
  },
  {
    id: 'tests',
    title: 'Tests and acceptance tests',
    intro: "The repository's tests, which of them run between completion checks, and the sealed acceptance tests a claim must pass.",
    knobs: ['testCommand', 'testTimeoutSeconds', 'affectedTestsFullEvery', 'acceptanceTests', 'acceptanceFromPrd', 'acceptanceCommand'],
  },
  {
    id: 'gates',
    title: 'Evidence and quality gates',
    intro:
      'What a completion claim needs besides a judge: the evidence gate (a diff, green tests, no secret) and the ' +
      'quality gates run on the tree the agent leaves ([quality gates](how-a-run-works.md#quality-gates)).',
    knobs: [
      'evidenceGate',
      'evidenceSecretScan',
      'evidenceNoTestsAffirmative',
      'qualityGates',
      'gateCadence',
      'gateTimeoutSeconds',
      'gateStaticAnalysis',
      'gateSecretScan',
      'gateTests',
      'buildCommand',
      'appCheck',
      'e2eCommand',
      'perfCommand',
      'gateMockIntegrity',
      'gateTestMutation',
      'gateTestGaming',
      'gateDocCoverage',
      'gateCoverage',
      'coverageThreshold',
      'gateEscalateAfter',
      'gatePauseAfter',
      'gateStuckAfter',
      'gateFindingsInPrompt',
    ],
  },
  {
    id: 'review',
    title: 'Code review and the PRD checklist',
    intro: 'The blind specialist review of the diff, and the checklist of requirements taken from the PRD and verified before completion.',
    knobs: [
      'codeReview',
      'reviewComplexity',
      'reviewMaxReviewers',
      'reviewProvider',
      'reviewModel',
      'reviewDevilsAdvocate',
      'reviewInconclusiveBlocks',
      'reviewMergeabilityMin',
      'reviewMaxDiffBytes',
      'prdChecklist',
      'checklistHeldOut',
    ],
  },
  {
    id: 'council',
    title: 'The completion council',
    intro: 'The independent agents that judge, on the evidence, whether the work is done, and when they convene.',
    knobs: [
      'councilEnabled',
      'councilSize',
      'councilThreshold',
      'councilCheckInterval',
      'councilMinIterations',
      'councilEarlyCheck',
      'councilMemberTimeoutSeconds',
      'councilBlind',
      'councilSeverityThreshold',
      'councilErrorBudget',
      'councilProvider',
      'councilModel',
      'devilsAdvocateProvider',
      'devilsAdvocateModel',
      'batchRounds',
      'complexity',
    ],
  },
  {
    id: 'escalation',
    title: 'Escalation to a person',
    intro: 'When a run asks a person, whether it waits for the answer, and what happens to a pause nobody answers.',
    knobs: [
      'autonomyMode',
      'uncertaintyEscalation',
      'uncertaintyRounds',
      'uncertaintyNoChangeMin',
      'uncertaintySplitRounds',
      'escalationRemindAfter',
      'escalationRerouteAfter',
      'escalationDeadline',
      'onDeadline',
    ],
  },
  {
    id: 'notify',
    title: 'Notifications',
    intro: 'Where a run tells people what happened: the channels, and the second list a pause is re-routed to.',
    knobs: [
      'notifyWebhookUrl',
      'notifySlackWebhookUrl',
      'notifyDiscordWebhookUrl',
      'notifyFile',
      'notifyDesktop',
      'notifyTimeoutSeconds',
      'rerouteWebhookUrl',
      'rerouteSlackWebhookUrl',
      'rerouteDiscordWebhookUrl',
      'rerouteFile',
    ],
  },
  {
    id: 'delivery',
    title: 'Delivery',
    intro: 'What a run that ends done does with its work: a branch, a pull request it follows, or nothing.',
    knobs: ['deliver', 'deliverToCurrent', 'followPr', 'followPrDays', 'prPollEvery', 'prUpdate'],
  },
  {
    id: 'streams',
    title: 'Parallel streams',
    intro: 'A run split into tasks, each a child run in its own worktree, merged back in dependency order.',
    knobs: ['parallelStreams', 'mergeConflicts', 'taskPlanner'],
  },
  {
    id: 'sandbox',
    title: 'The sandbox',
    intro: "Where agent calls, test runs and gate tools run, and the limits of each call ([the agent's sandbox](security.md)).",
    knobs: ['sandbox', 'sandboxRegistries', 'sandboxPids', 'sandboxMemoryMb', 'sandboxCpuWeight'],
  },
  {
    id: 'memory',
    title: 'Memory and the event store',
    intro:
      'The journal of a run in the event store, the run so far in every prompt, and the memory that outlives a run ([memory](memory.md)).',
    knobs: ['eventStore', 'memoryBudgetChars', 'memoryIndexTokens', 'memoryTimelineTokens', 'memoryEntriesTokens', 'memoryJudge'],
  },
];

/**
 * The first-class knobs: what a person starting a run is likely to set on purpose (the limits, the
 * agent, the tests, which judges run, how a run asks and tells people, delivery, the sandbox and
 * the store). Every other knob is advanced: its default is what nearly every run wants.
 */
export const FIRST_CLASS_KNOBS: readonly KnobName[] = [
  'maxIterations',
  'maxDurationSeconds',
  'budgetUsd',
  'provider',
  'agentCommand',
  'model',
  'testCommand',
  'acceptanceTests',
  'qualityGates',
  'codeReview',
  'prdChecklist',
  'councilEnabled',
  'councilSize',
  'councilProvider',
  'autonomyMode',
  'notifyWebhookUrl',
  'deliver',
  'parallelStreams',
  'sandbox',
  'eventStore',
];

const FIRST_CLASS = new Set<string>(FIRST_CLASS_KNOBS);

export function isFirstClass(name: KnobName): boolean {
  return FIRST_CLASS.has(name);
}

/** The section a knob is in (every knob is in exactly one; tests/unit/knob-sections.test.ts holds it). */
export function sectionOf(name: KnobName): KnobSection {
  const found = KNOB_SECTIONS.find((s) => s.knobs.includes(name));
  if (!found) throw new Error(`knob ${name} is in no section of schemas/knob-sections.ts; add it to one`);
  return found;
}
