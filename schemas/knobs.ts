/**
 * Run knobs: every tunable of a run, with its type, allowed range, default, environment variable
 * and one-line meaning. The client resolves knobs once (flags > env > config file > defaults) into
 * the workflow input; the workflow never reads the environment.
 *
 * Sandbox-safe: imported by the workflow bundle.
 */
import { z } from 'zod';
import { shared } from './shared.js';
import { PROVIDERS } from './provider-names.js';
import { SANDBOX_LIMIT_BOUNDS } from './sandbox.js';
import { EFFORT_KNOBS } from './knobs-effort.js';
import { DELIVERY_KNOBS } from './knobs-delivery.js';
import { LOOP_KNOBS } from './knobs-loop.js';
import { FORK_KNOBS } from './knobs-fork.js';

import {
  argvKnob,
  type KnobSpecBase,
  boolKnob,
  durationKnob,
  enumKnob,
  intKnob,
  limitKnob,
  numberKnob,
  stringKnob,
  urlKnob,
} from './knob-kinds.js';

export { parseDuration } from './knob-kinds.js';
export { splitCommandLine } from './command-line.js';

/** Agent providers (activities/providers/ holds one preset each). */
export { PROVIDERS };
export type ProviderKnob = (typeof PROVIDERS)[number];

/**
 * The registry. Order is the order of `vigil config --explain`.
 * Defaults follow the original run loop (spec §1.10, §1.11, §1.4) unless noted.
 */
export const KNOBS = shared(
  'schemas/knobs:KNOBS',
  () =>
    ({
      maxIterations: intKnob(
        'VIGIL_MAX_ITERATIONS',
        1,
        1_000_000,
        25,
        'Iteration cap; the run ends with max_iterations_reached (exit 20) when reached.',
      ),
      maxDurationSeconds: intKnob(
        'VIGIL_MAX_DURATION_SECONDS',
        0,
        31_536_000,
        0,
        'Wall-clock cap in seconds measured on workflow time from the run start; 0 turns it off.',
      ),
      maxRetries: intKnob('VIGIL_MAX_RETRIES', 1, 10_000, 50, 'Consecutive failed iterations before the run ends as failed (exit 1).'),
      baseWaitSeconds: intKnob(
        'VIGIL_BASE_WAIT_SECONDS',
        0,
        86_400,
        60,
        'Backoff base after a failed iteration: wait = min(base * 2^retry + jitter, max).',
      ),
      maxWaitSeconds: intKnob('VIGIL_MAX_WAIT_SECONDS', 0, 604_800, 3600, 'Backoff ceiling in seconds.'),
      backoffJitterSeconds: intKnob(
        'VIGIL_BACKOFF_JITTER_SECONDS',
        0,
        3600,
        30,
        'Random extra wait, 0 to this many seconds (replay-safe randomness).',
      ),
      provider: enumKnob(
        'VIGIL_PROVIDER',
        PROVIDERS,
        'command',
        'Agent CLI: claude, codex, gemini, aider, opencode, cline (argv, model per tier, cost, rate limits and auth errors ' +
          'understood), or command (agentCommand as is).',
      ),
      agentCommand: argvKnob,
      model: stringKnob('VIGIL_MODEL', '', 200, "Model for every tier (overrides the per-tier models); empty: the tier's model."),
      modelPlanning: stringKnob(
        'VIGIL_MODEL_PLANNING',
        '',
        200,
        "Model at the planning (HIGH) tier; empty: the provider's default (claude opus, codex gpt-5.3-codex with effort xhigh, ...).",
      ),
      modelDevelopment: stringKnob(
        'VIGIL_MODEL_DEVELOPMENT',
        '',
        200,
        "Model at the development (MEDIUM) tier; empty: the provider's default.",
      ),
      modelFast: stringKnob('VIGIL_MODEL_FAST', '', 200, "Model at the fast (LOW) tier; empty: the provider's default."),
      effort: stringKnob(
        'VIGIL_EFFORT',
        '',
        20,
        'Reasoning effort passed to CLIs that take one (claude --effort, codex model_reasoning_effort); empty: by tier ' +
          '(planning xhigh, development high, fast low).',
      ),
      fallbackModel: stringKnob('VIGIL_FALLBACK_MODEL', '', 200, 'claude --fallback-model, where the installed CLI has it; empty: none.'),
      councilProvider: enumKnob(
        'VIGIL_COUNCIL_PROVIDER',
        ['', ...PROVIDERS] as const,
        '',
        "Provider of council members and the devil's advocate (a reviewer on another model is a stronger check); empty: the builder's provider.",
      ),
      councilModel: stringKnob(
        'VIGIL_COUNCIL_MODEL',
        '',
        200,
        "Model of council members and the devil's advocate; empty: the tier's model of their provider.",
      ),
      devilsAdvocateProvider: enumKnob(
        'VIGIL_DEVILS_ADVOCATE_PROVIDER',
        ['', ...PROVIDERS] as const,
        '',
        "Provider of the devil's advocate; empty: the council's.",
      ),
      devilsAdvocateModel: stringKnob(
        'VIGIL_DEVILS_ADVOCATE_MODEL',
        '',
        200,
        "Model of the devil's advocate; empty: the council's (or its provider's default).",
      ),
      providerFailover: {
        schema: z
          .string()
          .max(200)
          .refine(
            (v) =>
              v.trim() === '' || v.split(',').every((p) => (PROVIDERS as readonly string[]).includes(p.trim()) && p.trim() !== 'command'),
            {
              message: 'must be a comma-separated list of providers (claude, codex, gemini, aider, opencode, cline)',
            },
          ),
        default: '',
        env: 'VIGIL_PROVIDER_FAILOVER',
        doc:
          "Providers that may take an iteration, in order, when the run's own is unavailable (breaker open, or rate-limited " +
          'past failoverAfterSeconds) and they are healthy (binary installed, credentials set), e.g. "codex,gemini"; empty: no ' +
          'failover.',
        allowed: 'a comma-separated list of claude, codex, gemini, aider, opencode, cline, or empty',
        fromString: (raw: string) => raw.trim().toLowerCase(),
      } satisfies KnobSpecBase<string>,
      failoverAfterSeconds: intKnob(
        'VIGIL_FAILOVER_AFTER_SECONDS',
        0,
        604_800,
        300,
        'A rate-limit wait longer than this sends the next iteration to the failover chain instead of waiting.',
      ),
      providerBreaker: boolKnob(
        'VIGIL_PROVIDER_BREAKER',
        true,
        'Share one circuit breaker per provider with every run (workflow vigil-provider-<name>): after repeated provider ' +
          'failures runs wait together instead of hammering it. Not used for `command`.',
      ),
      breakerFailures: intKnob(
        'VIGIL_BREAKER_FAILURES',
        1,
        100,
        3,
        'Provider failures (rate limits included) within the window that open the breaker.',
      ),
      breakerWindowSeconds: intKnob('VIGIL_BREAKER_WINDOW_SECONDS', 1, 86_400, 60, 'The window in which those failures are counted.'),
      breakerCooldownSeconds: intKnob(
        'VIGIL_BREAKER_COOLDOWN_SECONDS',
        1,
        86_400,
        300,
        'How long an open breaker keeps every run waiting before it lets a probe through.',
      ),
      breakerProbeSeconds: intKnob(
        'VIGIL_BREAKER_PROBE_SECONDS',
        1,
        3600,
        10,
        'While half-open: at most one probe call per this many seconds.',
      ),
      breakerSuccesses: intKnob('VIGIL_BREAKER_SUCCESSES', 1, 100, 3, 'Probe successes in a row that close the breaker again.'),
      agentTimeoutSeconds: intKnob(
        'VIGIL_AGENT_TIMEOUT_SECONDS',
        1,
        172_800,
        7200,
        'Hard cap on one agent call; the process tree is killed and the iteration fails (exit 124).',
      ),
      agentSilenceMinutes: numberKnob(
        'VIGIL_AGENT_SILENCE_MINUTES',
        0,
        2880,
        15,
        'An agent call with no output and no repository change for this long is hung: ended (exit 124), the breaker counts it. 0: off.',
      ),
      heartbeatTimeoutSeconds: intKnob(
        'VIGIL_HEARTBEAT_TIMEOUT_SECONDS',
        2,
        600,
        30,
        'How long a silent worker may hold an agent call before Temporal retries it elsewhere (crash detection).',
      ),
      completionPromise: stringKnob(
        'VIGIL_COMPLETION_PROMISE',
        'COMPLETION PROMISE FULFILLED',
        500,
        'Text that, in the agent output, claims the work is complete. Empty turns promise matching off (the signal file still works).',
      ),
      testCommand: stringKnob(
        'VIGIL_TEST_COMMAND',
        '',
        4096,
        'Shell command that runs the repository tests (exit 0 = green). Empty: no test evidence is required.',
      ),
      testTimeoutSeconds: intKnob('VIGIL_TEST_TIMEOUT_SECONDS', 1, 86_400, 1800, 'Hard cap on one test command run.'),
      affectedTestsFullEvery: intKnob(
        'VIGIL_AFFECTED_TESTS_FULL_EVERY',
        1,
        1000,
        5,
        'Between completion checks the tests gate runs only the tests the change can affect (pytest, vitest, jest, go test), ' +
          'and the full suite every this many iterations; 1: the full suite every time. Every completion check runs the full ' +
          'suite.',
      ),
      acceptanceTests: stringKnob(
        'VIGIL_ACCEPTANCE_TESTS',
        '',
        4096,
        'Folder of acceptance tests a person wrote from the PRD (`vigil start --acceptance DIR`): sealed at the start, never ' +
          'shown to the agents, run on every claimed tree; a failure refuses the claim. Empty: none.',
      ),
      acceptanceFromPrd: boolKnob(
        'VIGIL_ACCEPTANCE_FROM_PRD',
        false,
        'Have an `acceptance` agent write the acceptance tests from the PRD and a map of the repository before the first ' +
          "iteration (`vigil start --acceptance-from-prd`): sealed like a person's, never shown to the builder or the reviewers; " +
          'a supervised run pauses once to show them. Not with acceptanceTests.',
      ),
      acceptanceCommand: stringKnob(
        'VIGIL_ACCEPTANCE_COMMAND',
        '',
        4096,
        "Shell command that runs the acceptance tests (their files are appended). Empty: the repository's detected runner.",
      ),
      ...EFFORT_KNOBS,
      continueAsNewEvery: intKnob(
        'VIGIL_CONTINUE_AS_NEW_EVERY',
        1,
        100_000,
        100,
        'Start a fresh workflow history every K iterations (also when Temporal suggests it).',
      ),
      // Completion council, circuit breaker and safety valves (spec §2).
      councilEnabled: boolKnob(
        'VIGIL_COUNCIL_ENABLED',
        true,
        'Completion needs a council approval. Off: a completion claim that passes the evidence gate completes the run.',
      ),
      councilSize: intKnob(
        'VIGIL_COUNCIL_SIZE',
        1,
        9,
        3,
        'Council members; each is an independent agent call (VIGIL_ROLE=council, VIGIL_MEMBER=index).',
      ),
      councilThreshold: intKnob(
        'VIGIL_COUNCIL_THRESHOLD',
        0,
        9,
        2,
        'Approvals needed; can only tighten the floor ceil(2n/3) and is capped at the council size.',
      ),
      councilCheckInterval: intKnob('VIGIL_COUNCIL_CHECK_INTERVAL', 1, 10_000, 5, 'The council also convenes every this many iterations.'),
      councilMinIterations: intKnob(
        'VIGIL_COUNCIL_MIN_ITERATIONS',
        1,
        10_000,
        3,
        'No council round before this iteration, not even for a completion claim.',
      ),
      councilEarlyCheck: boolKnob(
        'VIGIL_COUNCIL_EARLY_CHECK',
        true,
        'Convene as soon as the tests pass on the current tree (past the minimum-iteration floor), when what changed since the ' +
          'last check could flip its verdict.',
      ),
      councilMemberTimeoutSeconds: intKnob(
        'VIGIL_COUNCIL_MEMBER_TIMEOUT_SECONDS',
        1,
        7200,
        600,
        'A member that has not answered by then is killed and counts as REJECT.',
      ),
      councilBlind: boolKnob(
        'VIGIL_COUNCIL_BLIND',
        true,
        'Members do not see convergence data (no-change streaks, done signals) in the evidence pack.',
      ),
      councilSeverityThreshold: enumKnob(
        'VIGIL_COUNCIL_SEVERITY_THRESHOLD',
        ['low', 'medium', 'high', 'critical'] as const,
        'low',
        'Above low, a REJECT listing only issues below this severity is reconsidered with the error budget.',
      ),
      councilErrorBudget: numberKnob(
        'VIGIL_COUNCIL_ERROR_BUDGET',
        0,
        1,
        0,
        'Share of non-blocking issues a reconsidered REJECT may carry and still approve (0: any number).',
      ),
      stagnationLimit: intKnob(
        'VIGIL_STAGNATION_LIMIT',
        1,
        10_000,
        5,
        'Iterations without any change that trip the circuit breaker (a forced council round); twice this after a rejection force-stops the run.',
      ),
      doneSignalLimit: intKnob(
        'VIGIL_DONE_SIGNAL_LIMIT',
        1,
        10_000,
        10,
        'Total done signals (claims and done-phrases) after which a rejected round force-stops the run.',
      ),
      // What a run does where those valves would force-stop it (schemas/knobs-fork.ts).
      ...FORK_KNOBS,
      evidenceGate: boolKnob(
        'VIGIL_EVIDENCE_GATE',
        true,
        'Completion requires evidence: a diff since the run start, green tests, no secret in changed files.',
      ),
      evidenceSecretScan: boolKnob('VIGIL_EVIDENCE_SECRET_SCAN', true, 'Scan changed files for credentials as part of the evidence gate.'),
      evidenceNoTestsAffirmative: boolKnob(
        'VIGIL_EVIDENCE_NO_TESTS_AFFIRMATIVE',
        false,
        'Count "no test command" as verified instead of inconclusive.',
      ),
      // Uncertainty-gated escalation, autonomy and notifications (spec §4, §7.4, §8.1).
      autonomyMode: enumKnob(
        'VIGIL_AUTONOMY_MODE',
        ['supervised', 'perpetual'] as const,
        'supervised',
        "supervised: an automatic escalation pauses until a person answers; perpetual: it only notifies. A person's pause always pauses.",
      ),
      // Delivery and the pull request a run follows (schemas/knobs-delivery.ts).
      ...DELIVERY_KNOBS,
      // Parallel streams (docs/how-a-run-works.md, Parallel streams).
      parallelStreams: intKnob(
        'VIGIL_PARALLEL_STREAMS',
        1,
        8,
        1,
        'With tasks (vigil start --tasks FILE, else the PRD checklist), at most this many run at once, each a child run in its ' +
          'own git worktree, merged back in dependency order; 1: one run, no streams.',
      ),
      mergeConflicts: enumKnob(
        'VIGIL_MERGE_CONFLICTS',
        ['agent', 'person'] as const,
        'agent',
        "agent: a stream's merge that conflicts becomes an iteration of the run's agent with the conflict and both sides in " +
          'its prompt; person: a supervised run pauses and shows both sides.',
      ),
      taskPlanner: enumKnob(
        'VIGIL_TASK_PLANNER',
        ['agent', 'checklist'] as const,
        'agent',
        "Where a run's tasks come from when it has parallelStreams above 1 and no task list of a person's: agent: one planner " +
          "call groups the PRD checklist's items into tasks with dependencies (a refused answer falls back to the checklist); " +
          'checklist: each checklist item is a task of its own.',
      ),
      // Uncertainty escalation and the loop's small rules (schemas/knobs-loop.ts).
      ...LOOP_KNOBS,
      notifyWebhookUrl: urlKnob('VIGIL_NOTIFY_WEBHOOK_URL', 'Generic webhook: JSON {event, run, title, message, severity, time, details}.'),
      notifySlackWebhookUrl: urlKnob('VIGIL_NOTIFY_SLACK_WEBHOOK_URL', 'Slack incoming webhook URL.'),
      notifyDiscordWebhookUrl: urlKnob('VIGIL_NOTIFY_DISCORD_WEBHOOK_URL', 'Discord webhook URL.'),
      notifyFile: stringKnob('VIGIL_NOTIFY_FILE', '', 4096, 'Append every notification as a JSON line to this file (empty: off).'),
      notifyDesktop: boolKnob('VIGIL_NOTIFY_DESKTOP', true, 'Desktop notification with notify-send, where it is installed.'),
      escalationRemindAfter: durationKnob(
        'VIGIL_ESCALATION_REMIND_AFTER',
        31_536_000,
        14_400,
        'A pause that waits for a person (an escalation, a dead letter, a contract error, the budget...) sends its ' +
          'notification again on its channels this long after it began (0: never).',
      ),
      escalationRerouteAfter: durationKnob(
        'VIGIL_ESCALATION_REROUTE_AFTER',
        31_536_000,
        86_400,
        'Such a pause notifies the second list of channels (reroute*) this long after it began; nothing when that list is empty (0: never).',
      ),
      escalationDeadline: durationKnob(
        'VIGIL_ESCALATION_DEADLINE',
        31_536_000,
        0,
        'Such a pause ends this long after it began, as onDeadline says, and the outcome says nobody answered (0: it waits until answered).',
      ),
      onDeadline: enumKnob(
        'VIGIL_ON_DEADLINE',
        ['stop', 'continue', 'default-answer'] as const,
        'stop',
        "At escalationDeadline: stop the run, continue it (the pause lifted), or take the agent's default answer " +
          "(HUMAN_REVIEW_NEEDED defaultAnswer) as the person's input and continue (a pause without one stops).",
      ),
      rerouteWebhookUrl: urlKnob('VIGIL_REROUTE_WEBHOOK_URL', 'Re-route: a generic webhook for escalationRerouteAfter.'),
      rerouteSlackWebhookUrl: urlKnob('VIGIL_REROUTE_SLACK_WEBHOOK_URL', 'Re-route: a Slack incoming webhook.'),
      rerouteDiscordWebhookUrl: urlKnob('VIGIL_REROUTE_DISCORD_WEBHOOK_URL', 'Re-route: a Discord webhook.'),
      rerouteFile: stringKnob(
        'VIGIL_REROUTE_FILE',
        '',
        4096,
        'Re-route: append the notification as a JSON line to this file (empty: off).',
      ),
      tierLadder: boolKnob(
        'VIGIL_TIER_LADDER',
        true,
        'Climb the model tiers LOW -> MEDIUM -> HIGH on repeated failures or large changes, then escalate to a person; step ' +
          'down after steady single-file successes.',
      ),
      tierLowMaxFailures: intKnob(
        'VIGIL_TIER_LOW_MAX_FAILURES',
        0,
        100,
        2,
        'Failures in a row tolerated at LOW before climbing to MEDIUM.',
      ),
      tierMediumMaxFailures: intKnob(
        'VIGIL_TIER_MEDIUM_MAX_FAILURES',
        0,
        100,
        3,
        'Failures in a row tolerated at MEDIUM before climbing to HIGH.',
      ),
      tierHighMaxFailures: intKnob(
        'VIGIL_TIER_HIGH_MAX_FAILURES',
        0,
        100,
        5,
        'Failures in a row tolerated at HIGH before escalating to a person.',
      ),
      tierDeescalateSuccesses: intKnob(
        'VIGIL_TIER_DEESCALATE_SUCCESSES',
        1,
        1000,
        5,
        'Single-file successes in a row after which the tier steps down one level.',
      ),
      deadLetterAfter: intKnob(
        'VIGIL_DEAD_LETTER_AFTER',
        0,
        1000,
        5,
        'The same iteration failure (error class + normalised last lines) this many times is a dead letter: recorded and ' +
          'escalated to a person instead of retried on. 0 turns it off.',
      ),
      budgetUsd: numberKnob(
        'VIGIL_BUDGET_USD',
        0,
        1_000_000,
        0,
        'Spend limit in USD for the run (agent-reported cost, else tokens x price); reaching it pauses the run in every mode. 0: no budget.',
      ),
      orchestrationBudgetShare: numberKnob(
        'VIGIL_ORCHESTRATION_BUDGET_SHARE',
        0,
        1,
        0,
        'Share of the budget reviewers, checklist roles and council members may spend (0.3: 30 %); a completion check that ' +
          'would pass it pauses the run first. 0: no cap; needs budgetUsd.',
      ),
      rateLimitRpm: intKnob(
        'VIGIL_RATE_LIMIT_RPM',
        1,
        100_000,
        50,
        'Requests per minute assumed for the provider: a rate limit without a retry hint waits clamp(7200 / rpm, 60, 300) seconds.',
      ),
      rateLimitNotifySeconds: intKnob(
        'VIGIL_RATE_LIMIT_NOTIFY_SECONDS',
        0,
        604_800,
        600,
        'Notify people when a rate-limit wait is longer than this (0: never).',
      ),
      notifyTimeoutSeconds: intKnob(
        'VIGIL_NOTIFY_TIMEOUT_SECONDS',
        1,
        120,
        10,
        'Bound on one notification request; a channel that never answers cannot delay the run longer.',
      ),
      // Quality gates, blind code review and the PRD checklist (spec §5, §2.12).
      qualityGates: boolKnob(
        'VIGIL_QUALITY_GATES',
        true,
        'Run the quality gates (each has its own switch below) on the tree the agent leaves; a failing blocking gate refuses ' +
          'completion and goes into the next prompt.',
      ),
      gateCadence: enumKnob(
        'VIGIL_GATE_CADENCE',
        ['changed', 'claim'] as const,
        'changed',
        'changed: the gates run after every successful iteration that changed the tree; claim: only when completion is about to be judged.',
      ),
      gateTimeoutSeconds: intKnob(
        'VIGIL_GATE_TIMEOUT_SECONDS',
        1,
        86_400,
        300,
        'Hard cap on one gate (its tools are killed; the gate is inconclusive).',
      ),
      gateStaticAnalysis: boolKnob(
        'VIGIL_GATE_STATIC_ANALYSIS',
        true,
        'Blocking: eslint (when configured), tsc, ruff or py_compile, bash -n and shellcheck, go vet, cargo check on the changed files.',
      ),
      gateSecretScan: boolKnob(
        'VIGIL_GATE_SECRET_SCAN',
        true,
        'Blocking: credentials in changed files (keys, tokens, passwords inside URLs); placeholders and env references are ignored.',
      ),
      gateTests: boolKnob(
        'VIGIL_GATE_TESTS',
        true,
        'Blocking: the test suite (testCommand, else the detected runner) must pass; zero tests run is inconclusive, never green.',
      ),
      buildCommand: stringKnob(
        'VIGIL_BUILD_COMMAND',
        '',
        4096,
        "Blocking: the build gate's shell command (exit 0 = builds). Empty: detected (npm run build, tsc --noEmit, go build, " +
          'cargo build, compileall); off or none: no build gate.',
      ),
      appCheck: stringKnob(
        'VIGIL_APP_CHECK',
        '',
        4096,
        'Blocking on full passes: a shell command that boots the app and probes it (exit 0 = it works). Empty: the ' +
          "repository's `.vigil/app-check.*` as the run's start tree has it, when it has one; off or none: no app check.",
      ),
      e2eCommand: stringKnob(
        'VIGIL_END_TO_END_COMMAND',
        '',
        4096,
        'Blocking on full passes: an end-to-end test command (Playwright or any runner; exit 0 = the journeys pass). Empty: no e2e gate.',
      ),
      perfCommand: stringKnob(
        'VIGIL_PERF_COMMAND',
        '',
        4096,
        'Blocking on full passes: a benchmark command that prints a number or {"value": n} as its last line (lower is better), ' +
          'run on the start tree and on the candidate; 2× the baseline blocks. Empty: no performance check.',
      ),
      gateMockIntegrity: boolKnob(
        'VIGIL_GATE_MOCK_INTEGRITY',
        true,
        'Blocking on HIGH: tautological assertions and tests that import no source, in changed JS/TS and Python tests.',
      ),
      gateTestMutation: boolKnob(
        'VIGIL_GATE_TEST_MUTATION',
        true,
        'Blocking: test integrity since the run started: a baseline test deleted or renamed, a skip/only/xfail marker added, a ' +
          'baseline assertion changed, the test harness changed (waivable by a person).',
      ),
      gateTestGaming: boolKnob(
        'VIGIL_GATE_TEST_GAMING',
        true,
        "Blocking: product code that games its tests: reads its caller's frame, probes for the test runner, exits outside an " +
          "entry point, reads test files, hard-codes a failing test's input.",
      ),
      gateDocCoverage: boolKnob(
        'VIGIL_GATE_DOC_COVERAGE',
        true,
        'README present; exported symbols of changed modules documented (blocking for packages npm or PyPI would publish, advisory otherwise).',
      ),
      gateCoverage: boolKnob(
        'VIGIL_GATE_COVERAGE',
        false,
        'Opt-in, blocking: line coverage from the report the test run writes (istanbul, cobertura, lcov) must reach coverageThreshold.',
      ),
      coverageThreshold: numberKnob('VIGIL_COVERAGE_THRESHOLD', 0, 100, 80, 'Line coverage in percent the coverage gate asks for.'),
      gateEscalateAfter: intKnob(
        'VIGIL_GATE_ESCALATE_AFTER',
        1,
        1000,
        3,
        'Consecutive failures of one gate after which a person is told (once per streak).',
      ),
      gatePauseAfter: intKnob(
        'VIGIL_GATE_PAUSE_AFTER',
        1,
        1000,
        10,
        'Consecutive failures of one gate after which the run pauses, in every mode.',
      ),
      gateStuckAfter: intKnob(
        'VIGIL_GATE_STUCK_AFTER',
        0,
        1000,
        3,
        'The same failure reason of a static, mock or mutation gate this many times in a row ends the run (gate_stuck, exit 20); 0 turns it off.',
      ),
      gateFindingsInPrompt: intKnob(
        'VIGIL_GATE_FINDINGS_IN_PROMPT',
        0,
        100,
        12,
        'Gate findings quoted in the next prompt at most (failures first, then advisory ones).',
      ),
      codeReview: boolKnob(
        'VIGIL_CODE_REVIEW',
        true,
        'Blind specialist code review before completion is judged: reviewers see only the diff; Critical/High findings block, Medium/Low are advisory.',
      ),
      reviewComplexity: enumKnob(
        'VIGIL_REVIEW_COMPLEXITY',
        ['simple', 'standard', 'complex'] as const,
        'standard',
        'How many specialists join the mandatory reviewers: 2 (simple, standard) or 4 (complex).',
      ),
      reviewMaxReviewers: intKnob(
        'VIGIL_REVIEW_MAX_REVIEWERS',
        0,
        12,
        0,
        'Cap on reviewers (mandatory ones are never dropped); 0: no cap.',
      ),
      reviewProvider: enumKnob(
        'VIGIL_REVIEW_PROVIDER',
        ['', ...PROVIDERS] as const,
        '',
        "Provider of the code reviewers; empty: the council's (or the builder's).",
      ),
      reviewModel: stringKnob(
        'VIGIL_REVIEW_MODEL',
        '',
        200,
        "Model of the code reviewers; empty: the council's model (or the provider's default).",
      ),
      reviewDevilsAdvocate: boolKnob(
        'VIGIL_REVIEW_DEVILS_ADVOCATE',
        true,
        "A unanimous PASS is re-reviewed by a devil's advocate; its Critical/High findings block.",
      ),
      reviewInconclusiveBlocks: boolKnob(
        'VIGIL_REVIEW_INCONCLUSIVE_BLOCKS',
        true,
        'A review still missing verdicts after its one automatic re-run blocks completion.',
      ),
      reviewMergeabilityMin: intKnob(
        'VIGIL_REVIEW_MERGEABILITY_MIN',
        0,
        100,
        0,
        'Block when the mergeability score (100 - 5 per Medium - 2 per Low) is below this; 0: never.',
      ),
      reviewMaxDiffBytes: intKnob(
        'VIGIL_REVIEW_MAX_DIFF_BYTES',
        0,
        10_000_000,
        0,
        'Largest diff sent to reviewers (bigger: the review is refused and blocks); 0: from the context window (about 400 KB).',
      ),
      batchRounds: enumKnob(
        'VIGIL_BATCH_ROUNDS',
        ['auto', 'off'] as const,
        'auto',
        "A council round's members, and a review's reviewers, as one call with a sub-agent each where the provider can (claude " +
          'with --agents and --json-schema): auto; off asks each member in a call of its own.',
      ),
      prdChecklist: boolKnob(
        'VIGIL_PRD_CHECKLIST',
        true,
        'At run start an agent extracts a checklist of verifiable requirements from the PRD (or --checklist FILE); it is verified before completion.',
      ),
      checklistHeldOut: boolKnob(
        'VIGIL_CHECKLIST_HELD_OUT',
        true,
        'Hold out a quarter of the checklist (1 to 5 items, from 4 items on) from the builder; they are verified only at completion.',
      ),
      // The agent's sandbox (docs/security.md, The agent's sandbox).
      sandbox: enumKnob(
        'VIGIL_SANDBOX',
        ['auto', 'strict', 'off'] as const,
        'auto',
        'Run every agent call, test run and gate tool in a sandbox (bubblewrap: the repository, read-only for reviewing roles ' +
          "and gates, the model endpoints through a proxy, nothing of the worker's): auto where the worker can (a run at auto " +
          "takes the worker's VIGIL_SANDBOX), strict refuses to run without it, off never. A worker started with " +
          'VIGIL_SANDBOX=strict is strict for every run.',
      ),
      sandboxRegistries: boolKnob(
        'VIGIL_SANDBOX_REGISTRIES',
        true,
        'Let the builder and the test runs reach the package registries (npm, PyPI, Go, crates.io, RubyGems, Maven Central, ' +
          "and a registry URL the environment configures) through the sandbox's proxy, each fetch logged to the run (`vigil " +
          'status` counts them). Reviewing roles and gates never reach them. false closes them: an install then fails, and ' +
          'status says why.',
      ),
      // Limits inside the sandbox (docs/security.md, Limits inside the sandbox): each call's cgroup.
      sandboxPids: limitKnob(
        'VIGIL_SANDBOX_PIDS',
        SANDBOX_LIMIT_BOUNDS.pids,
        1024,
        'Tasks (processes and threads) one sandboxed call may run at once; a call that reaches it is ended (a failed ' +
          'iteration, not a provider failure). An agent CLI with its test run stays in the low hundreds (a Node process is about ' +
          "a dozen threads); a fork bomb reaches it in milliseconds. Below the compose worker's own pids limit (4096), so a call " +
          "reaches its limit before the worker's container does. 0: no limit.",
      ),
      sandboxMemoryMb: limitKnob(
        'VIGIL_SANDBOX_MEMORY_MB',
        SANDBOX_LIMIT_BOUNDS.memoryMb,
        2048,
        "MiB of memory (its processes, its /tmp, no swap) one sandboxed call may use; the kernel's OOM killer ends it there. " +
          "An agent CLI and a TypeScript build fit (this repository's tsc: 1 GiB); a build that needs more raises it. A council " +
          "of three at the limit (6 GiB) still fits in the compose worker's 8 GiB beside the worker. 0: no limit.",
      ),
      sandboxCpuWeight: intKnob(
        'VIGIL_SANDBOX_CPU_WEIGHT',
        SANDBOX_LIMIT_BOUNDS.cpuWeight.min,
        SANDBOX_LIMIT_BOUNDS.cpuWeight.max,
        50,
        "The sandboxed calls' CPU weight (cgroup cpu.weight; the worker, Temporal and Postgres have 100): under contention " +
          'they get a third of the CPU beside one busy process at 100, and all of an idle machine.',
      ),
      eventStore: boolKnob(
        'VIGIL_EVENT_STORE',
        false,
        "Project the run's events into the event store (the worker's VIGIL_DATABASE_URL / DATABASE_URL, else the local one) at " +
          'iteration boundaries; `vigil start` turns it on by default where a store is configured or the local one exists ' +
          '(--no-store: off). A store that is down never slows or fails the run.',
      ),
      // Checkpoints and rewind (spec §8.3).
      checkpointsKept: intKnob(
        'VIGIL_CHECKPOINTS_KEPT',
        0,
        200,
        50,
        'Per-iteration checkpoints kept (a commit of the tree under refs/vigil/<run>/<iteration> after every iteration that ' +
          'changed it; the oldest is pruned); 0 turns checkpoints, and so rewind, off.',
      ),
      // The run memory and the prompt (issue: the run so far in every prompt).
      memoryBudgetChars: intKnob(
        'VIGIL_MEMORY_BUDGET_CHARS',
        0,
        100_000,
        4000,
        'Characters of "the run so far" (the run memory, newest first) in every prompt; 0 leaves it out (the memory is still kept).',
      ),
      // The memory that outlives a run (docs/memory.md): each retrieval layer's budget in every prompt.
      memoryIndexTokens: intKnob(
        'VIGIL_MEMORY_INDEX_TOKENS',
        0,
        20_000,
        150,
        'Tokens (four characters each) of the memory index in every prompt: topics and counts of what earlier runs left in the ' +
          "event store's memory; 0 leaves it out.",
      ),
      memoryTimelineTokens: intKnob(
        'VIGIL_MEMORY_TIMELINE_TOKENS',
        0,
        20_000,
        250,
        "Tokens of the memory timeline in every prompt: the repository's earlier runs, newest first, one line each; 0 leaves it out.",
      ),
      memoryEntriesTokens: intKnob(
        'VIGIL_MEMORY_ENTRIES_TOKENS',
        0,
        20_000,
        800,
        'Tokens of memory entries in every prompt: the patterns, anti-patterns and skills of earlier runs that share most ' +
          'keywords with the task, whole; 0 leaves them out (all three 0: no memory is retrieved).',
      ),
      memoryJudge: boolKnob(
        'VIGIL_MEMORY_JUDGE',
        true,
        "After a run ends with the event store on, one agent call (role memory, the run's provider) phrases a lesson for each " +
          'pattern or anti-pattern the run made or changed and merges near-duplicates; no call when the run made none.',
      ),
      promptTemplate: {
        schema: z.string().max(4096),
        default: '',
        env: 'VIGIL_PROMPT_TEMPLATE',
        doc:
          'A prompt template file ({{placeholder}}s, see docs/how-a-run-works.md, The prompt and the run memory) used instead of ' +
          'the built-in one; checked at vigil start, read by the worker at every iteration. Empty: the built-in template.',
        allowed: 'a path to a template file, or empty',
        fromString: (raw: string) => raw.trim(),
      } satisfies KnobSpecBase<string>,
    }) as const,
);

export type KnobName = keyof typeof KNOBS;
export const KNOB_NAMES = Object.keys(KNOBS) as KnobName[];

type KnobValue<K extends KnobName> = (typeof KNOBS)[K]['default'] extends infer D
  ? D extends readonly string[]
    ? string[]
    : D extends number
      ? number
      : D extends boolean
        ? boolean
        : D
  : never;

/**
 * The zod schema of a complete, validated knob set. A knob missing from the input takes its
 * default, so runs started by an older client (or carried across a deploy) keep validating.
 */
export const KnobsSchema = shared('schemas/knobs:KnobsSchema', () =>
  z.object(
    Object.fromEntries(KNOB_NAMES.map((k) => [k, (KNOBS[k].schema as z.ZodType<unknown>).default(KNOBS[k].default)])) as {
      [K in KnobName]: z.ZodDefault<z.ZodType<KnobValue<K>>>;
    },
  ),
);
export type Knobs = z.infer<typeof KnobsSchema>;

export function defaultKnobs(): Knobs {
  return Object.fromEntries(
    KNOB_NAMES.map((k) => {
      const d = KNOBS[k].default;
      return [k, Array.isArray(d) ? [...d] : d];
    }),
  ) as Knobs;
}
