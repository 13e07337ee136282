/**
 * The docs/knobs.md text of each knob: its meaning (Markdown, longer than the one-line `doc` of
 * schemas/knobs.ts that `vigil config --explain` prints), and where the page says more than the
 * registry, its allowed values and a note after its default. The knob's variable and default come
 * from the registry; scripts/knob-docs.ts renders the page. A knob missing here fails the type check.
 */
import type { KnobName } from '../schemas/knobs.js';

export interface KnobDoc {
  /** The meaning column (Markdown; a link is relative to docs/). */
  readonly meaning: string;
  /** The allowed column, where it says it better than the registry's `allowed` (which error messages quote). */
  readonly allowed?: string;
  /** Text after the default (`(4 h)`). */
  readonly defaultNote?: string;
}

export const KNOB_DOCS: Readonly<Record<KnobName, KnobDoc>> = {
  maxIterations: { meaning: 'Iteration cap; the run ends with `max_iterations_reached` (exit 20).' },
  iterationGrace: {
    meaning:
      'At the iteration cap, a completion claim the run has not judged yet (the council could not convene on it, or its ' +
      'iteration failed), with no quality gate failing, gets one more iteration to be judged in; once per run ' +
      '([how a run works](how-a-run-works.md#the-loops-small-rules)).',
  },
  selfHeal: {
    meaning:
      "A failed iteration leaves `LAST_ERROR.json` (its error class and one line) in the run's folder; the next iteration's " +
      'prompt starts with what failed and what to do about it, and the record moves to `failure-history.jsonl` ' +
      '([how a run works](how-a-run-works.md#the-loops-small-rules)). Off: the file is still written, the prompt says nothing of it.',
  },
  maxDurationSeconds: { meaning: 'Wall-clock cap measured on workflow time from the run start; 0 turns it off.' },
  maxRetries: { meaning: 'Consecutive failed iterations before the run ends as `failed` (exit 1).' },
  baseWaitSeconds: {
    meaning: 'Backoff base after a failed iteration: `min(base · 2^retry + jitter, max)`, `retry` = failures in a row before this one.',
  },
  maxWaitSeconds: { meaning: 'Backoff ceiling.' },
  backoffJitterSeconds: { meaning: 'Random extra wait (replay-safe randomness).' },
  provider: {
    meaning:
      'Agent CLI (see [Providers](agents-and-providers.md#providers)): argv, model per tier, cost, rate limits and auth errors ' +
      'understood; `command` runs `agentCommand` as is.',
    allowed: '`command`, `claude`, `codex`, `gemini`, `aider`, `opencode`, `cline`',
  },
  agentCommand: {
    meaning: "`command`: the agent's argv (no shell). Other providers: replaces the CLI's binary and leading words (e.g. `npx claude`).",
    allowed: 'a command line or a JSON array of strings',
  },
  model: { meaning: 'One model for every tier (overrides the per-tier models).', allowed: 'text, ≤ 200 characters' },
  modelPlanning: { meaning: "Model at the planning (HIGH) tier; empty: the provider's default.", allowed: 'text, ≤ 200 characters' },
  modelDevelopment: {
    meaning: "Model at the development (MEDIUM) tier; empty: the provider's default.",
    allowed: 'text, ≤ 200 characters',
  },
  modelFast: { meaning: "Model at the fast (LOW) tier; empty: the provider's default.", allowed: 'text, ≤ 200 characters' },
  effort: {
    meaning:
      'Reasoning effort for CLIs that take one (claude `--effort`, codex `model_reasoning_effort`); empty: by tier (planning ' +
      'xhigh, development high, fast low).',
    allowed: 'text, ≤ 20 characters',
  },
  fallbackModel: { meaning: 'claude `--fallback-model`, where the installed CLI has it.', allowed: 'text, ≤ 200 characters' },
  councilProvider: {
    meaning: "Provider of council members and the devil's advocate; empty: the builder's. A reviewer on another model is a stronger check.",
    allowed: 'empty or a provider',
  },
  councilModel: {
    meaning: "Model of council members and the devil's advocate; empty: their provider's model for the tier.",
    allowed: 'text, ≤ 200 characters',
  },
  devilsAdvocateProvider: { meaning: "Provider of the devil's advocate; empty: the council's.", allowed: 'empty or a provider' },
  devilsAdvocateModel: { meaning: "Model of the devil's advocate; empty: the council's.", allowed: 'text, ≤ 200 characters' },
  providerFailover: {
    meaning:
      "Providers that may take an iteration, in order, when the run's own is unavailable (its breaker open, or rate-limited " +
      'past `failoverAfterSeconds`) and they are healthy (CLI installed, a credential set); each iteration record says which ' +
      'provider ran it.',
    allowed: 'a comma-separated list of providers (not `command`)',
  },
  failoverAfterSeconds: {
    meaning: 'A rate-limit wait longer than this sends the next iteration to the failover chain instead of waiting.',
  },
  providerBreaker: {
    meaning: 'One circuit breaker per provider shared by every run (workflow `vigil-provider-<name>`); not used for `command`.',
    allowed: '`true`, `false`',
  },
  breakerFailures: { meaning: 'Provider failures (rate limits, auth errors, API/network errors) within the window that open it.' },
  breakerWindowSeconds: { meaning: 'The window those failures are counted in.' },
  breakerCooldownSeconds: {
    meaning: 'How long an open breaker keeps runs waiting (`waiting_for_provider`) before one probe goes through.',
  },
  breakerProbeSeconds: { meaning: 'Half-open: at most one probe per this many seconds.' },
  breakerSuccesses: { meaning: 'Probe successes in a row that close it again.' },
  agentTimeoutSeconds: { meaning: 'Hard cap on one agent call; the tree is killed and the iteration fails with exit 124.' },
  agentSilenceMinutes: {
    meaning:
      'The silence watchdog: an agent call (any role) that prints nothing and changes nothing in the repository for this long ' +
      'is hung, and is ended whatever `agentTimeoutSeconds` says: its whole tree is killed, exit 124, `vigil status` says `no ' +
      "output for 15 min: ended` on the iteration's line, and the provider's breaker counts it as a failure. `0` turns the " +
      'watchdog off (only `agentTimeoutSeconds` bounds a call then). See [How a run works](how-a-run-works.md#durability).',
    allowed: 'a number from 0 to 2880 (fractions allowed)',
  },
  heartbeatTimeoutSeconds: { meaning: 'How fast a dead worker is detected and its agent call re-run elsewhere.' },
  completionPromise: {
    meaning: 'Text that, in the agent output, claims completion; empty turns promise matching off.',
    allowed: 'text, ≤ 500 characters',
  },
  testCommand: {
    meaning:
      'Shell command run in the repository for the tests gate and the evidence check (exit 0 = green, unless its summary says ' +
      'zero tests ran). Empty: the runner is detected (package.json `test` script, vitest/jest/mocha, pytest or unittest, `go ' +
      'test`, `cargo test`, workspaces); with nothing runnable the outcome says tests were not verified.',
    allowed: 'text, ≤ 4096 characters',
  },
  testTimeoutSeconds: { meaning: 'Hard cap on one test run.' },
  affectedTestsFullEvery: {
    meaning:
      'Between completion checks the tests gate runs only the test files the change can affect (pytest by the tests its ' +
      'per-test coverage map says executed the change, where coverage.py is installed, else by imports; vitest and jest by ' +
      "their imports and the runner's own related-tests mode; go test by the packages that import the change), and the full " +
      'suite every this many iterations, on the first tree, and whenever the test map is missing or stale or a harness or ' +
      'configuration file changed. Every completion check runs the full suite. `1`: the full suite every time.',
  },
  acceptanceTests: {
    meaning:
      'A folder of acceptance tests a person wrote from the PRD (`vigil start --acceptance DIR`), outside the repository: ' +
      'checked at `vigil start` (exit 2 when it is missing, holds no test file or a file does not parse), sealed into the ' +
      "worker's private folder at the run's start with each file's sha256 in the history, never shown to an agent, and run on " +
      'every claimed tree before the code review and the council; a failure refuses the claim, and tests that already pass on ' +
      'the starting tree end the run `already_satisfied` ([Acceptance tests](how-a-run-works.md#acceptance-tests-the-wall)). ' +
      'Empty: none.',
    allowed: 'text, ≤ 4096 characters',
  },
  acceptanceFromPrd: {
    meaning:
      'Before the first iteration, an agent in the `acceptance` role writes the acceptance tests from the PRD and a map of the ' +
      "repository (`vigil start --acceptance-from-prd`) into a folder of the worker's private one that its sandbox shows " +
      'writable (the repository stays read-only for it; `VIGIL_ANSWER=files`, [the agent contract](agent-contract.md)); they ' +
      "are sealed and run exactly as a person's `acceptanceTests` are, never shown to the builder or the reviewers. A " +
      'supervised run pauses once, naming the sealed folder and its files for the person to read, before the builder starts ' +
      '(`vigil resume`); a perpetual run goes on and says so. A folder it leaves without a test ends the run `failed` before ' +
      'any builder call. Refused together with `acceptanceTests` (exit 2 at `vigil start`).',
    allowed: '`true`, `false`',
  },
  acceptanceCommand: {
    meaning:
      'Shell command that runs the acceptance tests, their files appended (`python3 -m pytest -q`). Empty: the runner detected ' +
      'in the candidate tree. Its timeout is `testTimeoutSeconds`.',
    allowed: 'text, ≤ 4096 characters',
  },
  tier: { meaning: 'Model tier pinned for the run (`VIGIL_TIER` for the agent).', allowed: '`planning`, `development`, `fast`' },
  legacyTierRotation: {
    meaning: 'Rotate the tier with the phase (REASON planning, ACT/REFLECT development, VERIFY fast).',
    allowed: '`true`, `false`',
  },
  continueAsNewEvery: { meaning: 'Fresh workflow history every K iterations (and whenever Temporal suggests it).' },
  councilEnabled: {
    meaning:
      'Completion needs a council approval. Off: a claim that passes the evidence gate completes the run (`completion_promise_fulfilled`).',
    allowed: '`true`, `false`',
  },
  councilSize: { meaning: 'Members; each is an independent agent call (`VIGIL_ROLE=council`, `VIGIL_MEMBER`).' },
  councilThreshold: { meaning: 'Approvals needed: `clamp(max(ceil(2n/3), threshold), 1, n)`, so it can only tighten.' },
  councilCheckInterval: { meaning: 'The council also convenes every this many iterations.' },
  councilMinIterations: { meaning: 'No round before this iteration, not even for a claim (a `forceReview` ignores it).' },
  councilEarlyCheck: {
    meaning:
      'Convene as soon as the tests pass on a tree the council has not judged yet, when what changed since the last check ' +
      "could flip its verdict (a new file, a flagged file, an open checklist item's file).",
    allowed: '`true`, `false`',
  },
  councilMemberTimeoutSeconds: { meaning: 'A member still silent then is killed and counts as REJECT (`TIMEOUT`).' },
  councilBlind: { meaning: 'Members do not see convergence data in the evidence pack.', allowed: '`true`, `false`' },
  councilSeverityThreshold: {
    meaning: 'Above `low`, a REJECT listing only lesser issues is reconsidered with the error budget.',
    allowed: '`low`, `medium`, `high`, `critical`',
  },
  councilErrorBudget: { meaning: 'Share of non-blocking issues a reconsidered REJECT may carry and still approve (0: any).' },
  stagnationLimit: {
    meaning: 'Iterations without change that trip the circuit breaker; twice this after a rejected round force-stops the run.',
  },
  doneSignalLimit: { meaning: 'Total done signals (claims and done-phrases) after which a rejected round force-stops the run.' },
  onStuck: {
    meaning:
      'Where the stagnation or done-signal valve would force-stop the run: `stop` ends it `force_stopped`; `fork` starts ' +
      '`forkAttempts` attempts from its last good checkpoint (the latest whose tests passed, else the latest whose tests did ' +
      'not fail, else the run start), each a run of its own in a worktree under the full completion check and the valves, each with its `forkWith` ' +
      'entry; the first approved one becomes the run (its tree delivered as usual), and with none approved the run ends ' +
      '`force_stopped` as with `stop` ([attempts from a stuck point](attempts.md#attempts-from-a-stuck-point)).',
    allowed: '`stop`, `fork`',
  },
  forkAttempts: {
    meaning: 'How many attempts `onStuck=fork` starts from the stuck point, side by side, each with a share of what is left of the budget.',
  },
  forkWith: {
    meaning:
      'What each fork runs with, cycled over the forks (fork n takes the ((n-1) mod length)-th entry): an entry is one or ' +
      'more of `agent:<provider>`, `model:<name>`, `tier:<tier>` (`planning`, `development`, `fast`) joined by `+`, what it leaves out ' +
      "being the run's (`model:opus,agent:codex+tier:planning`). Empty: every fork with the run's own agent, model and tier.",
    allowed: 'a comma-separated list of such entries, or empty',
  },
  evidenceGate: { meaning: 'Completion requires evidence (diff, green tests, no secret in changed files).', allowed: '`true`, `false`' },
  evidenceSecretScan: { meaning: "Scan the changed files' content for credentials.", allowed: '`true`, `false`' },
  evidenceNoTestsAffirmative: { meaning: 'Count "no test command" as verified instead of inconclusive.', allowed: '`true`, `false`' },
  autonomyMode: {
    meaning:
      "supervised: an automatic escalation pauses until a person answers; perpetual: it only notifies (and says so). A person's pause always pauses.",
    allowed: '`supervised`, `perpetual`',
  },
  deliver: {
    meaning:
      'branch: a run that ends done (council approved, promise fulfilled) commits its work on the branch `vigil/<run id>`, ' +
      'with a message that says what the run did; the current branch, index and working tree are untouched. pr: the same, then ' +
      "the branch is pushed to the repository's remote and a pull request opened through `gh` (title from the PRD, body the " +
      "run's report) when `gh` is installed and logged in (`vigil doctor` checks it); otherwise the outcome's notes say why " +
      'there is none, and the branch is delivered all the same. none: the work stays uncommitted.',
    allowed: '`branch`, `pr`, `none`',
  },
  followPr: {
    meaning:
      'With `deliver=pr`: the run follows its pull request after delivering it instead of ending. Red checks and a comment ' +
      'addressed to the run (`/vigil …`, or a review that requests changes) become an iteration whose prompt carries them, ' +
      'judged as any, whose work is pushed to the same branch; merged ends the run `merged` (exit 0), closed without merge ' +
      "`pr_closed` (exit 20). Events come from `vigil hooks` (GitHub's webhooks) or `vigil pr-event`. `false`: the run ends at " +
      'delivery. See [Following the pull request](how-a-run-works.md#following-the-pull-request).',
    allowed: '`true`, `false`',
  },
  followPrDays: {
    meaning:
      'A followed pull request with no event for this many days ends the run with its done outcome (the notes say it was delivered and nothing came).',
  },
  prPollEvery: {
    meaning:
      "Without a webhook (`vigil hooks`), a followed pull request is polled this often with `gh api graphql` on the run's " +
      'host: its checks, reviews, comments, state and mergeability, as the same events a webhook sends, each taken once. ' +
      'It costs one gh call per interval per open pull request (at the default, 6 an hour; GitHub allows 5,000). `0` turns ' +
      "it off: set it where `vigil hooks` receives the repository's webhooks, or an event can be taken once from each. " +
      'See [Following the pull request](how-a-run-works.md#following-the-pull-request).',
  },
  deliverToCurrent: {
    meaning:
      'Opt-in (`vigil start --deliver-to-current`): the work is committed on the current branch instead of `vigil/<run id>`, ' +
      'and the index set to that commit; with `pr` the current branch is pushed and the pull request opened from it.',
    allowed: '`true`, `false`',
  },
  parallelStreams: {
    meaning:
      'With tasks (`vigil start --tasks FILE`, else each item of the PRD checklist a task), at most this many run at once, ' +
      "each a child run in its own git worktree on its own branch, merged back in dependency order before the run's own " +
      'completion check; 1: one run, no streams (nothing changes). See [Parallel streams](how-a-run-works.md#parallel-streams).',
  },
  mergeConflicts: {
    meaning:
      "agent: a stream's merge that conflicts becomes an iteration of the run's agent, the conflict and both sides in its " +
      'prompt; person: a supervised run pauses and shows both sides (a perpetual run gives it to the agent).',
    allowed: '`agent`, `person`',
  },
  taskPlanner: {
    meaning:
      "Where a run's tasks come from when `parallelStreams` is above 1 and no `--tasks` file was given. agent: one planner " +
      "call (role `planner`, [the agent contract](agent-contract.md)) groups the PRD checklist's items into tasks with " +
      'dependencies; an answer that does not cover every item exactly once falls back to the checklist, and status says why. ' +
      'checklist: each checklist item is a task of its own, none depending on another.',
    allowed: '`agent`, `checklist`',
  },
  uncertaintyEscalation: {
    meaning: 'Escalate when 2 of 3 stuck signals co-occur; off: nothing is evaluated or stored.',
    allowed: '`true`, `false`',
  },
  uncertaintyRounds: { meaning: 'Consecutive iterations the signals must co-occur.' },
  uncertaintyNoChangeMin: { meaning: 'No-change streak that counts as stuck; 0 means `max(1, stagnationLimit - 1)`.' },
  uncertaintySplitRounds: { meaning: 'Trailing rounds rejected with at least one approval that count as a split council.' },
  notifyWebhookUrl: {
    meaning: 'Generic webhook: JSON `{event, run, title, message, severity, time, details, dedupeKey}` with an `Idempotency-Key` header.',
    allowed: 'an http(s) URL, `env:NAME`, or empty',
  },
  notifySlackWebhookUrl: { meaning: 'Slack incoming webhook.', allowed: 'an http(s) URL, `env:NAME`, or empty' },
  notifyDiscordWebhookUrl: { meaning: 'Discord webhook.', allowed: 'an http(s) URL, `env:NAME`, or empty' },
  notifyFile: { meaning: 'Append every notification as a JSON line.', allowed: 'a path, or empty' },
  notifyDesktop: { meaning: '`notify-send`, where installed.', allowed: '`true`, `false`' },
  escalationRemindAfter: {
    meaning:
      'A pause Vigil made that waits for a person (an escalation, a dead letter, a contract error, the budget…) sends a ' +
      "`pause_reminder` on the run's channels this long after it began, once: [questions with " +
      'deadlines](how-a-run-works.md#questions-with-deadlines).',
    allowed: '`0` (off), or a duration up to 365 days: seconds, or a number with `s`, `m`, `h`, `d`',
    defaultNote: '(4 h)',
  },
  escalationRerouteAfter: {
    meaning:
      '… sends a `pause_rerouted` to the second list of channels (the four `reroute*` knobs) this long after it began; nothing while that list is empty.',
    allowed: 'as above',
    defaultNote: '(24 h)',
  },
  escalationDeadline: {
    meaning:
      '… ends this long after it began, as `onDeadline` says, recorded as "nobody answered in 72 h: stopped". Off by default: ' +
      "stopping or guessing on a person's behalf is theirs to choose.",
    allowed: 'as above',
    defaultNote: '(off)',
  },
  onDeadline: {
    meaning:
      "At the deadline: stop the run; lift the pause and go on; or give the next prompt the agent's `defaultAnswer` (from " +
      "`HUMAN_REVIEW_NEEDED`) as the person's input and go on (a pause without one stops).",
    allowed: '`stop`, `continue`, `default-answer`',
  },
  rerouteWebhookUrl: {
    meaning: "The re-route's generic webhook (the second list of channels).",
    allowed: 'an http(s) URL, `env:NAME`, or empty',
  },
  rerouteSlackWebhookUrl: { meaning: "The re-route's Slack incoming webhook.", allowed: 'an http(s) URL, `env:NAME`, or empty' },
  rerouteDiscordWebhookUrl: { meaning: "The re-route's Discord webhook.", allowed: 'an http(s) URL, `env:NAME`, or empty' },
  rerouteFile: { meaning: "The re-route's file: the notification as a JSON line.", allowed: 'a path, or empty' },
  tierLadder: {
    meaning: 'The [model-tier ladder](how-a-run-works.md#the-model-tier-ladder); off: `tier` is pinned.',
    allowed: '`true`, `false`',
  },
  maxTier: {
    meaning:
      "The highest model tier any call may use, a cost ceiling (the original's `LOKI_MAX_TIER`, by tier name): the tier " +
      "ladder, a pinned tier or the legacy rotation above it run at it instead; every role's calls keep under it.",
    allowed: '`planning`, `development`, `fast`',
  },
  complexity: {
    meaning:
      "The task's complexity, detected as the run starts from the PRD and the repository (`auto`) or named: it sets the " +
      "council's size, floor and interval and the review panel (see [how a run " +
      'works](how-a-run-works.md#effort-that-fits-the-task)), each only where that knob is not set explicitly. `off`: the ' +
      'knobs as given.',
    allowed: '`auto`, `off`, `simple`, `standard`, `complex`',
  },
  prUpdate: {
    meaning:
      "When a followed pull request's base branch moves (a `push` to it through `vigil hooks`, or `vigil pr-event " +
      '--base-moved`): `rebase` replays the run branch onto the new base, `merge` merges the base into it. The new tree is ' +
      'judged again (gates, acceptance tests, review, checklist, council) before it is pushed; a rebase is pushed with ' +
      '`--force-with-lease`, so it never overwrites what someone else pushed. A conflict pauses the run for a person. See ' +
      '[Following the pull request](how-a-run-works.md#following-the-pull-request).',
    allowed: '`rebase`, `merge`',
  },
  tierLowMaxFailures: { meaning: 'Failures in a row tolerated at LOW before climbing to MEDIUM.' },
  tierMediumMaxFailures: { meaning: '… at MEDIUM before climbing to HIGH.' },
  tierHighMaxFailures: { meaning: '… at HIGH before escalating to a person.' },
  tierDeescalateSuccesses: { meaning: 'Single-file successes in a row that step the tier down one level.' },
  deadLetterAfter: {
    meaning:
      'The same iteration failure (error class + normalised last lines) this many times is a dead letter: recorded (`vigil ' +
      'status --json` → `deadLetters`) and escalated to a person (a pause in supervised mode) instead of retried on; 0 turns ' +
      'it off.',
  },
  budgetUsd: { meaning: 'Spend limit for the run; reaching it pauses the run in every mode until `vigil budget` raises it. 0: no budget.' },
  orchestrationBudgetShare: {
    meaning:
      'Share of the budget reviewers, checklist roles and council members may spend (0.3: 30 %); a completion check that would ' +
      'pass it pauses the run first, until `vigil budget` raises the budget. 0: no cap; needs `budgetUsd`.',
  },
  rateLimitRpm: { meaning: 'A rate limit without a retry hint waits `clamp(7200 / rpm, 60, 300)` seconds.' },
  rateLimitNotifySeconds: { meaning: 'Notify people when a rate-limit wait is longer than this (0: never).' },
  notifyTimeoutSeconds: { meaning: 'Bound on one notification request (up to 4 attempts).' },
  qualityGates: {
    meaning: 'Run the tool gates below (each has its own switch). Off: none runs; review and checklist keep their own switches.',
    allowed: '`true`, `false`',
  },
  gateCadence: {
    meaning: '`changed`: after every successful iteration that changed the tree; `claim`: only when completion is about to be judged.',
    allowed: '`changed`, `claim`',
  },
  gateTimeoutSeconds: {
    meaning:
      'Hard cap on one gate; its tools are killed. A build, app check, e2e journey or benchmark that does not finish fails; any other gate is inconclusive.',
  },
  gateStaticAnalysis: {
    meaning:
      'Blocking: eslint (where configured), `tsc --noEmit` (errors in changed files), ruff or a Python compile, `bash -n` and ' +
      'shellcheck, `go vet`, `cargo check`.',
    allowed: '`true`, `false`',
  },
  gateSecretScan: { meaning: 'Blocking: credentials in changed files, passwords inside URLs included.', allowed: '`true`, `false`' },
  gateTests: {
    meaning: 'Blocking: the test suite (`testCommand`, else the detected runner); zero tests run is inconclusive.',
    allowed: '`true`, `false`',
  },
  buildCommand: {
    meaning:
      "Blocking: the build gate's shell command (exit 0 = builds), run sandboxed in a scratch copy of the tree. Empty: " +
      'detected (`npm run build`, `tsc -p tsconfig.json --noEmit`, `go build ./...`, `cargo build --offline`, `python3 -m ' +
      'compileall -q .`; see [the build](how-a-run-works.md#quality-gates)); none detected passes as not applicable. `off` or ' +
      '`none`: no build gate. Runs on full passes only (not where the tests ran an affected-tests selection).',
    allowed: 'text, ≤ 4096 characters',
  },
  appCheck: {
    meaning:
      'Blocking on full passes (every completion check): a shell command that boots the app and probes it (exit 0 = it works), ' +
      "sandboxed in a scratch copy of the tree, loopback only. Empty: the repository's `.vigil/app-check.*` as the run started " +
      "(a copy kept at the start; the agent's edits to it do not count), when it has one, else not applicable. `off` or " +
      '`none`: no app check. See [the product checks](how-a-run-works.md#quality-gates).',
    allowed: 'text, ≤ 4096 characters',
  },
  e2eCommand: {
    meaning:
      'Blocking on full passes: an end-to-end command (Playwright or any runner; exit 0 = the journeys pass), sandboxed like ' +
      'the app check. Empty: no e2e gate.',
    allowed: 'text, ≤ 4096 characters',
  },
  perfCommand: {
    meaning:
      'Blocking on full passes: a benchmark whose last line is a positive number or `{"value": n}` (lower is better), run on ' +
      "the candidate and on the run's start tree; twice the baseline or more, measured twice, blocks. Empty: no performance " +
      'check.',
    allowed: 'text, ≤ 4096 characters',
  },
  gateMockIntegrity: {
    meaning: 'Blocking on HIGH: tautological assertions, tests that import no source (JS/TS, Python).',
    allowed: '`true`, `false`',
  },
  gateTestMutation: {
    meaning:
      'Blocking: test integrity since the run started: a baseline test deleted or renamed, a skip/only/xfail marker added, a ' +
      'baseline assertion changed, the test harness changed (conftest, runner and coverage configs, lint configs the gates ' +
      'read, `package.json` test scripts, CI workflows); a person may waive a finding.',
    allowed: '`true`, `false`',
  },
  gateTestGaming: {
    meaning:
      "Blocking: product code added since the run started that games its tests: reads its caller's frame or stack, probes for " +
      'the test runner, exits or hooks the exit outside an entry point, reads test files, compares against a literal input of ' +
      'a test that failed at the start.',
    allowed: '`true`, `false`',
  },
  gateDocCoverage: {
    meaning:
      'README present; exported symbols of changed modules documented (blocking for packages npm or PyPI would publish, ' +
      'advisory otherwise; see [documentation coverage](how-a-run-works.md#quality-gates)).',
    allowed: '`true`, `false`',
  },
  gateCoverage: {
    meaning: 'Opt-in, blocking: line coverage from the report the tests wrote (istanbul summary, cobertura, lcov).',
    allowed: '`true`, `false`',
  },
  coverageThreshold: { meaning: 'Line coverage in percent the coverage gate asks for.' },
  gateEscalateAfter: { meaning: 'Consecutive failures of one gate after which a person is told (once per streak).' },
  gatePauseAfter: { meaning: 'Consecutive failures of one gate after which the run pauses, in every mode.' },
  gateStuckAfter: {
    meaning:
      'The same failure reason of the static-analysis, mock or mutation gate this many times in a row ends the run (`gate_stuck`); 0 turns it off.',
  },
  gateFindingsInPrompt: { meaning: 'Gate findings quoted in the next prompt at most (failures first).' },
  codeReview: {
    meaning: 'Blind specialist code review before completion is judged; Critical/High block, Medium/Low advise.',
    allowed: '`true`, `false`',
  },
  reviewComplexity: { meaning: 'Specialists joining the mandatory reviewers: 2, 2 or 4.', allowed: '`simple`, `standard`, `complex`' },
  reviewMaxReviewers: { meaning: 'Cap on reviewers, never dropping a mandatory one; 0: none.' },
  reviewProvider: { meaning: "Provider of the reviewers; empty: the council's.", allowed: 'a provider, or empty' },
  reviewModel: { meaning: "Model of the reviewers; empty: the council's (or the provider's default).", allowed: 'text, ≤ 200 characters' },
  reviewDevilsAdvocate: {
    meaning: "A unanimous PASS is re-reviewed by a devil's advocate, whose Critical/High findings block.",
    allowed: '`true`, `false`',
  },
  reviewInconclusiveBlocks: {
    meaning: 'A review still missing verdicts after its one automatic re-run blocks.',
    allowed: '`true`, `false`',
  },
  reviewMergeabilityMin: { meaning: 'Block below this mergeability score (100 − 5 per Medium − 2 per Low); 0: never.' },
  reviewMaxDiffBytes: { meaning: 'Largest diff sent to reviewers (bigger: refused, which blocks); 0: about 400 KB.' },
  batchRounds: {
    meaning:
      "A council round's members, and a review's reviewers, as one call with a sub-agent each (each blind to the others) where " +
      'the provider can: claude with `--agents` and `--json-schema` (`vigil doctor` says whether it can); `off` asks each ' +
      'member in a call of its own. See [batched rounds](agents-and-providers.md#providers).',
    allowed: '`auto`, `off`',
  },
  prdChecklist: {
    meaning:
      'Extract a checklist of verifiable requirements from the PRD at run start (or take `--checklist FILE`) and verify it before completion.',
    allowed: '`true`, `false`',
  },
  checklistHeldOut: {
    meaning: 'Hold out `clamp(round(N/4), 1, 5)` items (from 4 items on) from the builder; verified only at completion.',
    allowed: '`true`, `false`',
  },
  sandbox: {
    meaning:
      'Run every agent call, test run and gate tool in a sandbox (bubblewrap: the repository, read-only for reviewing roles ' +
      "and gates; the model endpoints through a proxy; nothing of the worker's): `auto` where the worker can (a run at `auto` " +
      "takes the worker's `VIGIL_SANDBOX`, so an operator's `off` or `strict` decides), `strict` refuses to run without it, " +
      '`off` never. A worker started with `VIGIL_SANDBOX=strict` is strict for every run. Status lists the escape attempts the ' +
      "sandbox refused. See [The agent's sandbox](security.md#the-agents-sandbox).",
    allowed: '`auto`, `strict`, `off`',
  },
  sandboxRegistries: {
    meaning:
      'Let the builder and the test runs reach the package registries (npm, PyPI, Go, crates.io, RubyGems, Maven Central, and ' +
      "a registry URL the environment configures) through the sandbox's proxy, each fetch logged to the run (`vigil status` " +
      'counts them). Reviewing roles and gates never reach them. false closes them: an install then fails, and status says ' +
      'why. See [Package registries](security.md#package-registries): what open registries let an agent do.',
    allowed: '`true`, `false`',
  },
  sandboxPids: {
    meaning:
      'Tasks (processes and threads) one sandboxed call (agent call, test run, gate tool) may run at once; a call that reaches ' +
      'it is ended with the reason, a failed iteration and never a provider failure. An agent CLI and its test run stay in the ' +
      "low hundreds (a Node process is about a dozen threads; this repository's vitest run peaked at 65); a fork bomb reaches " +
      "it in milliseconds. Below the compose worker's own `pids` limit (`VIGIL_WORKER_PIDS`, 4096), so a call reaches its " +
      "limit before the worker's container does. See [Limits inside the sandbox](security.md#limits-inside-the-sandbox).",
    allowed: '`0` (no limit), or an integer from 32 to 4194304',
  },
  sandboxMemoryMb: {
    meaning:
      "MiB of memory (its processes, their page cache, its `/tmp`; no swap) one sandboxed call may use; the kernel's OOM " +
      "killer ends it there, with the reason. An agent CLI and a TypeScript build fit (this repository's `tsc --noEmit` peaked " +
      'at 1.0 GiB of resident memory); a build that needs more (a large bundler run) raises it, and a call that reaches it ' +
      'says so (`the agent used 2.0 GiB: memory limit (sandboxMemoryMb=2048)`). A council of three all at the limit (6 GiB) ' +
      "still fits the compose worker's 8 GiB (`VIGIL_WORKER_MEMORY`) beside the worker itself.",
    allowed: '`0` (no limit), or an integer from 256 to 16777216',
  },
  sandboxCpuWeight: {
    meaning:
      "The sandboxed calls' CPU weight (cgroup `cpu.weight`; `cpu.shares` = weight × 10.24 on cgroup v1), for all of them " +
      'together against the rest of the machine and for each among them: beside one busy process at the default 100 they get a ' +
      'third of the CPU, and all of an idle machine.',
  },
  eventStore: {
    meaning:
      "Journal the run's events and project them into the event store (the worker's `VIGIL_DATABASE_URL` / `DATABASE_URL`, " +
      'else the local one) at iteration boundaries; `vigil start` turns it on by default where a store is configured or the ' +
      'local one exists (`--no-store`: off; see [Event store](event-store-and-reports.md#which-store-by-default)); a store ' +
      'that is down never slows or fails the run.',
    allowed: '`true`, `false`',
    defaultNote: '; `vigil start` makes it `true` where a store is found',
  },
  checkpointsKept: { meaning: 'Per-iteration checkpoints kept (the oldest ref is pruned); 0 turns checkpoints, and so rewind, off.' },
  memoryBudgetChars: {
    meaning:
      'Characters of "the run so far" (the run memory, newest first) in every prompt; 0 leaves it out (the memory is still ' +
      'kept). See [The prompt and the run memory](how-a-run-works.md#the-prompt-and-the-run-memory).',
  },
  memoryIndexTokens: {
    meaning:
      'Tokens (four characters each) of the memory index in every prompt: topics and counts of what earlier runs left in the ' +
      "event store's memory; 0 leaves it out. See [Memory that outlives a run](memory.md).",
  },
  memoryTimelineTokens: {
    meaning: "Tokens of the memory timeline in every prompt: the repository's earlier runs, newest first, one line each; 0 leaves it out.",
  },
  memoryEntriesTokens: {
    meaning:
      'Tokens of memory entries in every prompt: the patterns, anti-patterns and skills of earlier runs that share most ' +
      'keywords with the task, whole; 0 leaves them out (all three 0: no memory is retrieved).',
  },
  memoryJudge: {
    meaning:
      "After a run ends with the event store on, one agent call (role `memory`, the run's provider and model for the `fast` " +
      'tier) phrases a one-line lesson for each pattern or anti-pattern the run made or changed and merges near-duplicates; no ' +
      'call when the run made or changed none. Its cost is shown by `vigil report` and `vigil memory list`. See ' +
      '[Judgement](memory.md#judgement).',
    allowed: '`true`, `false`',
  },
  promptTemplate: {
    meaning:
      'A prompt template file used instead of the built-in one; checked by `vigil start` (a bad one is exit 2; a relative path ' +
      'is taken from the current directory), read by the worker at every iteration.',
    allowed: 'a path, or empty',
  },
};
