/**
 * The replay fixtures of the run workflow (histories/, in the official CLI's JSON export), in
 * three tables that follow a patch's life (CONTRIBUTING.md, Adding a patch):
 *
 * - `ERAS`: per live patch (`PATCH_IDS`, workflows/run/eras.ts), the histories recorded by the
 *   code from just before it landed (`before-<patch>[-<scenario>].json`), which the code must
 *   replay down its old path.
 * - `RELEASE_FIXTURES`: the runs this release must replay, recorded by the release before it
 *   (`v<release>-<scenario>.json`): 0.4.0's code at tag v0.4.0, each scenario as a test of that
 *   commit ran it (its file and name below), exported from the suite's server once the test was
 *   over. Between them they hold the marker of every deprecated patch where 0.4.0 asked it
 *   (`markers`, checked against each history), so the `deprecatePatch()` calls are proven to stand
 *   where the markers are, and the new paths those runs took are the code's one path now.
 * - `RETIRED`: the fixtures a release deleted, and why: the runs they pinned can no longer be open.
 *
 * replay.test.ts replays every fixture of the first two tables in a test of its own and fails on
 * a history in histories/ that no table lists; tests/unit/architecture.test.ts checks that `ERAS`
 * and `PATCH_IDS` name the same ids.
 */
import type { PatchId } from '../../workflows/run/eras.js';

export interface EraFixture {
  /** File under tests/replay/histories/. */
  file: string;
  /** The commit whose code recorded it (abbreviated). */
  commit: string;
  /** What ran: demo, rewind, carry-1 (the execution that continued as new), carry-2, ... */
  scenario: string;
  /** The behaviour of that era this recording pins, one line. */
  pins: string;
}

export interface Era {
  /** The patch id, as `patched()` is called with it (one of `PatchId`: the table is checked against it). */
  patch: string;
  /** The commit that introduced the patch (abbreviated). */
  introducedBy: string;
  /** Completes "replays a run from before ...". */
  before: string;
  fixtures: EraFixture[];
}

/** Live patches and their fixtures from before them. */
export const ERAS: Era[] = [
  {
    patch: 'vigil-done-means-done-v1',
    introducedBy: 'f20e9a5',
    before: 'the tests baseline: its first test run is iteration 1, on the tree the builder left',
    fixtures: [
      {
        file: 'before-vigil-done-means-done-v1-demo.json',
        commit: '2567605',
        scenario: 'demo',
        pins: 'the demo with its test command, no baseline test run before the first agent call',
      },
    ],
  },
  {
    patch: 'vigil-judges-see-changes-v1',
    introducedBy: '65ac0d8',
    before:
      'the judges saw what changed: reviews stood for reviewed files, cached contract errors, unread claims, pausing perpetual requests',
    fixtures: [
      {
        file: 'before-vigil-judges-see-changes-v1-delta.json',
        commit: '6ec21a3',
        scenario: 'delta',
        pins: 'a passing review stood for a later tree whose product code changed in reviewed, unflagged files: no second review',
      },
      {
        file: 'before-vigil-judges-see-changes-v1-contract.json',
        commit: '6ec21a3',
        scenario: 'contract',
        pins: 'a code review without verdict lines reused on its unchanged tree, uncounted: every claim refused, no pause',
      },
      {
        file: 'before-vigil-judges-see-changes-v1-claim.json',
        commit: '6ec21a3',
        scenario: 'claim',
        pins: 'a claim naming files the diff does not hold, judged by the review and the evidence gate as any other',
      },
      {
        file: 'before-vigil-judges-see-changes-v1-agent-request.json',
        commit: '6ec21a3',
        scenario: 'agent-request',
        pins: 'a blocking HUMAN_REVIEW_NEEDED paused a perpetual run until a person resumed it',
      },
    ],
  },
  {
    patch: 'vigil-acceptance-from-prd-v1',
    introducedBy: '79ac036',
    before: 'the acceptance role: a run started with acceptanceFromPrd had no acceptance tests',
    fixtures: [
      // The patch is asked only by runs with the knob: a run without it, recorded before the patch, replays with no marker.
      {
        file: 'before-vigil-done-means-done-v1-demo.json',
        commit: '2567605',
        scenario: 'demo',
        pins: 'a run without the acceptanceFromPrd knob: no acceptance call, and no marker of this patch asked',
      },
    ],
  },
  {
    patch: 'vigil-stream-recovery-v1',
    introducedBy: '22bd35f',
    before:
      'the stream recovery: a stream resumed with its worktree gone pauses again, a stream stopped on its own is a dead letter at once',
    fixtures: [
      {
        file: 'before-vigil-stream-recovery-v1.json',
        commit: '6ec21a3',
        scenario: 'streams',
        pins: 'a run of two streams, one of which a person stops on its own after its worktree was deleted: its task dead-lettered, no second attempt',
      },
      {
        file: 'before-vigil-stream-recovery-v1-stream.json',
        commit: '6ec21a3',
        scenario: 'stream',
        pins: 'that stream: its worktree deleted mid-iteration, paused, resumed by its run and paused again, then stopped',
      },
    ],
  },
  {
    patch: 'vigil-stop-now-closes-first-v1',
    introducedBy: '5487317',
    before: 'stop --now closed one step after another: the final notification, the journal, the memory judge, the run files',
    fixtures: [
      {
        file: 'before-vigil-stop-now-closes-first-v1.json',
        commit: 'ec0db20',
        scenario: 'stop-now',
        pins: 'a run with the event store and the default knobs stopped with --now mid-call: notify, flush, judgeMemory, releaseRunFiles in turn',
      },
    ],
  },
  {
    patch: 'vigil-affected-tests-v1',
    introducedBy: '7a6cbe0',
    before: 'the full suite in every gate pass: no affected tests between completion checks, no marker where a gate pass is prepared',
    fixtures: [
      {
        file: 'before-vigil-affected-tests-v1-demo.json',
        commit: 'e0a2051',
        scenario: 'demo',
        pins: 'the demo with its test command: every iteration’s gate pass carries the full suite, without a scope',
      },
    ],
  },
  {
    patch: 'vigil-pause-deadlines-v1',
    introducedBy: '88dde39',
    before: 'a pause that waits for a person, with a notification channel set, waited for the person with no timer',
    fixtures: [
      {
        file: 'before-vigil-pause-deadlines-v1.json',
        commit: 'ef0551e',
        scenario: 'agent-request',
        pins: 'a supervised run paused by a blocking HUMAN_REVIEW_NEEDED, with the file channel, resumed after 2 s: no timer in its pause',
      },
    ],
  },
  {
    patch: 'vigil-follow-pr-v1',
    introducedBy: '53b5b2e',
    before: 'following the pull request: a done run with deliver=pr delivered, opened its pull request and ended',
    fixtures: [
      {
        file: 'before-vigil-follow-pr-v1.json',
        commit: '823dd25',
        scenario: 'deliver-pr',
        pins: 'tests/workflow/delivery.test.ts "deliver=pr": approved at iteration 3, delivered, the pull request opened through a fake gh, ended council_approved with no wait',
      },
    ],
  },
  {
    patch: 'vigil-attempts-comparison-v1',
    introducedBy: '6bb235c',
    before: 'the comparison round of a run with attempts: the pick rule alone chose among several approved attempts',
    fixtures: [
      {
        file: 'before-vigil-attempts-comparison-v1.json',
        commit: 'e586641',
        scenario: 'attempts',
        pins: 'tests/workflow/attempts.test.ts "three attempts, one failing its tests": the vigilAttempts run, attempts 2 and 3 approved, the rule picked 2 with no comparison, delivered on the run branch',
      },
    ],
  },
  {
    patch: 'vigil-pr-update-v1',
    introducedBy: '2fb9d00',
    before: 'a followed pull request whose base moved: the event was logged and not acted on, and a rewind waited for the next event',
    fixtures: [
      {
        file: 'before-vigil-pr-update-v1.json',
        commit: 'e586641',
        scenario: 'base-moved',
        pins: 'deliver=pr, approved at iteration 3, following its pull request; another clone moved main, a base-moved event taken and not acted on (no activity), then merged',
      },
    ],
  },
] satisfies (Era & { patch: PatchId })[];

export interface ReleaseFixture {
  /** File under tests/replay/histories/: `v<release>-<scenario>.json`. */
  file: string;
  /** The release whose code recorded it, and its commit (the tag). */
  release: string;
  commit: string;
  /** The test of that commit that ran it: its file and name. */
  source: string;
  /** What it pins, one line. */
  pins: string;
  /** The deprecated patches whose marker it holds, short ids (`vigil-` and `-v1` left out), first asked first. */
  markers: string[];
}

/** The markers every execution of 0.4.0 records first, in its order (workflows/run/eras.ts, `decideEras`). */
const EXECUTION = [
  'council',
  'escalation',
  'hardening',
  'providers',
  'gates',
  'journal',
  'checkpoints',
  'lean-iteration',
  'memory',
  'lean-prompt',
  'round-activity',
  'gates-with-call',
  'claims-held',
  'completion-rule',
  'provider-wait-rewind',
  'recheck-before-call',
  'lean-rounds',
];
const at040 = (scenario: string, source: string, pins: string, then: string[], first: string[] = EXECUTION): ReleaseFixture => ({
  file: `v0.4.0-${scenario}.json`,
  release: '0.4.0',
  commit: '04f0a78',
  source,
  pins,
  markers: [...first, ...then],
});

/** A recording of 0.5.0 (at v0.5.0, e586641): `then` the markers it holds beyond the two every execution records first. */
const at050 = (scenario: string, source: string, pins: string, then: string[]): ReleaseFixture => ({
  file: `v0.5.0-${scenario}.json`,
  release: '0.5.0',
  commit: 'e586641',
  source,
  pins,
  markers: ['done-means-done', 'judges-see-changes', ...then],
});

/** What the demo and the rewind pin. */
const DEMO_RUN =
  'the demo: a failed iteration, a claim refused by a gate, a backoff, a directive, a pause, the council split then approving, delivered';
const REWIND_RUN = 'a rewind from 4 to 2 with a directive, asked while paused after a pause given during the agent call';

/**
 * What 0.5.0 must replay: runs 0.4.0 started (recorded at v0.4.0 with VIGIL_EXPORT_HISTORIES); then
 * the runs 0.5.0 started (recorded at v0.5.0 the same way), which the next release replays in their
 * place. Those hold, deprecated, the markers of the patches 0.5.0 deprecated.
 */
export const RELEASE_FIXTURES: ReleaseFixture[] = [
  at040('demo', "tests/replay/replay.test.ts 'replays a fresh recording of the demo scenario run'", DEMO_RUN, [
    'council-checklist',
    'delivery',
    'run-files-released',
  ]),
  at040('rewind', "tests/replay/replay.test.ts 'replays a fresh recording of a rewound run'", REWIND_RUN, ['run-files-released']),
  at040(
    'carry-1',
    "tests/replay/replay.test.ts 'replays a fresh recording of a run that continues as new'",
    'the execution that hands its state over packed',
    ['packed-carry'],
  ),
  at040(
    'carry-2',
    "tests/replay/replay.test.ts 'replays a fresh recording of a run that continues as new'",
    'the execution that takes the packed state and ends at its iteration cap',
    ['run-files-released'],
  ),
  at040(
    'carry-rewind',
    "tests/workflow/continue-as-new.test.ts 'rewinds to a checkpoint taken two executions earlier'",
    'the third execution of a run carried twice: a rewind to a checkpoint whose snapshot crossed both carries, then a stop',
    ['run-files-released'],
  ),
  at040(
    'paused-claim-council',
    "tests/workflow/gates.test.ts 'is held through a pause and judged after the resume, not dropped (council)'",
    'a claim whose gate pass a pause cut short, held and judged by the council after the resume',
    ['delivery', 'run-files-released'],
  ),
  at040(
    'paused-claim',
    "tests/workflow/gates.test.ts 'is held through a pause and judged after the resume, not dropped (no council)'",
    'the same without a council: the held claim judged by the evidence gate as workflow code (collectEvidence)',
    ['delivery', 'run-files-released'],
  ),
  at040(
    'late-directive',
    "tests/workflow/run-basic.test.ts 'a directive sent during the last iteration is named in the outcome's notes'",
    'a run that ends at its cap with a directive no prompt carried: the note in its outcome',
    ['undelivered-directives', 'run-files-released'],
  ),
  at040(
    'stagnant',
    "tests/workflow/council.test.ts 'trips at the stagnation limit and force-stops at twice the limit (exit 20)'",
    'claims on an unchanged tree refused by the evidence gate, each check through the safety valves, until force_stopped',
    ['run-files-released'],
  ),
  at040(
    'provider-wait-rewind',
    "tests/workflow/races.test.ts 'a rewind asked for while the run waits for an open circuit breaker happens at once'",
    'a rewind that ends a wait for the provider (the breaker open) at once, with no agent call, then a stop',
    ['run-files-released'],
  ),
  at040(
    'breaker-ask-stop',
    "tests/workflow/races.test.ts 'a stop --now that arrives while the breaker is being asked ends the run before any agent call'",
    'a stop --now that came while the breaker was asked: honoured before the call, the permission released',
    ['run-files-released'],
  ),
  at040(
    'prepare-paused',
    "tests/workflow/hardening.test.ts 'a repository that cannot be prepared before the first iteration (supervised)'",
    'a run paused by a failed preparation waits for a person, then stop --now ends it',
    ['prepare-waits', 'run-files-released'],
  ),
  at040(
    'signed',
    "tests/workflow/signed-runs.test.ts 'a signed run completes; its signature replayed after it ... is refused'",
    'a signed run admitted at its start (admitRun), reviewed, approved and delivered',
    ['run-admission', 'council-checklist', 'delivery', 'run-files-released'],
  ),
  at040(
    'signed-refused',
    "tests/workflow/signed-runs.test.ts 'a signed run completes; its signature replayed after it ... is refused'",
    'the signature replayed by a run with another PRD: refused by its admission, agent_not_runnable before any agent call',
    ['run-admission', 'run-files-released'],
  ),
  at040(
    'signed-streams',
    "tests/workflow/signed-runs.test.ts 'a signed run split into parallel streams'",
    'a signed run given two tasks with parallelStreams=2: each a child run in its worktree, merged, judged on the merged tree and delivered',
    ['run-admission', 'streams', 'stream-waits', 'council-checklist', 'delivery', 'run-files-released'],
  ),
  at040(
    'signed-stream',
    "tests/workflow/signed-runs.test.ts 'a signed run split into parallel streams'",
    'one stream of that run (its child): admitted as the run’s child, its task in its first prompt, approved and delivered on its branch',
    ['run-admission', 'stream-waits', 'council-checklist', 'delivery', 'run-files-released'],
  ),
  at040(
    'resent-directive',
    "tests/workflow/directive-ids.test.ts 'a directive resent with its id (update, then signal, then update) reaches the next prompt once'",
    'a directive resent with its id, acknowledged and not queued again',
    ['directive-ids', 'delivery', 'run-files-released'],
  ),
  at040(
    'checklist-retry',
    "tests/workflow/checklist-retry.test.ts 'is asked again after the wait, and the run gets its checklist and verifies it'",
    'a checklist extraction spoiled by the provider, asked again at a later boundary, then verified',
    ['checklist-retry', 'delivery', 'run-files-released'],
  ),
  at040(
    'checklist-give-up',
    "tests/workflow/checklist-retry.test.ts 'pauses a supervised run that could not get one after three tries'",
    'three spoiled extractions, then the supervised run pauses and says why',
    ['checklist-retry', 'run-files-released'],
  ),
  at040(
    'delivery',
    "tests/workflow/delivery.test.ts 'commits an approved run’s work on its run branch'",
    'an approved run delivered on its run branch (deliverRun) before its outcome',
    ['council-checklist', 'delivery', 'run-files-released'],
  ),
  at040(
    'memory-judge',
    "tests/workflow/lasting-memory.test.ts 'the memory judge: a malformed answer changes nothing'",
    'a run with the event store on: its journal flushed, then the memory judge (judgeMemory), then its sandbox homes released',
    ['council-checklist', 'delivery', 'memory-judge', 'run-files-released'],
  ),
  at040(
    'council-checklist-claude',
    "tests/workflow/round-batch.test.ts 'a claim the council refuses costs one call: the checklist verifier rides in the round'",
    'the claude preset (the fake claude CLI): the checklist verifier rides in the batched council round',
    ['council-checklist', 'delivery', 'run-files-released'],
  ),
  at040(
    'green-rounds',
    "tests/workflow/orchestration-calls.test.ts 'refused rounds on a tree that changed only in reviewed files cost the council and one re-check each'",
    'judgements that still hold are not paid for again: the early check, the standing review, the checklist items re-checked',
    ['council-checklist', 'delivery', 'run-files-released'],
  ),
  at040(
    'rate-limit',
    "tests/workflow/providers.test.ts 'a provider rate limit waits as long as the provider says'",
    'a rate limit waited out as the provider said (not a failure, no tier climb), then approved and delivered',
    ['rate-limit', 'delivery', 'run-files-released'],
  ),
  at040(
    'hosts',
    "tests/workflow/hosts.test.ts 'sends every repository-bound activity of a run to its host's queue and worker'",
    'a run naming a host: its repository-bound activities on the host’s queue',
    ['hosts', 'delivery', 'run-files-released'],
  ),
  at040(
    'no-search-attributes',
    "tests/workflow/visibility.test.ts 'a run started without the search attributes (searchAttributes: false) upserts none'",
    'a run started without Vigil’s search attributes: no upsert, its marker asked',
    ['search-attributes', 'delivery', 'run-files-released'],
  ),
  at040(
    'planner',
    "tests/workflow/streams.test.ts 'without a task list, one planner call groups the checklist into tasks with a dependency'",
    'a run split by a planner call (taskPlanner=agent) into two streams with a dependency, merged, judged on the merged tree and delivered',
    ['streams', 'stream-planner', 'stream-waits', 'council-checklist', 'delivery', 'run-files-released'],
  ),
  at040(
    'stream-waits',
    "tests/workflow/streams.test.ts 'a stream that waits for a person shows on the run and in its inbox; the run’s resume reaches it'",
    'a run whose stream waits for a person: told by the stream, a rewind refused while its streams run, its resume sent to the stream, stop --now',
    ['streams', 'stream-waits', 'run-files-released'],
  ),
  at040(
    'stream-waits-stream',
    "tests/workflow/streams.test.ts 'a stream that waits for a person shows on the run and in its inbox; the run’s resume reaches it'",
    'that stream: a dead letter pauses it, it tells its run it waits, the run’s resume reaches it, then the run’s stop',
    ['stream-waits', 'run-files-released'],
  ),
  at050('demo', "tests/replay/replay.test.ts 'replays a fresh recording of the demo scenario run'", DEMO_RUN, ['affected-tests']),
  at050('rewind', "tests/replay/replay.test.ts 'replays a fresh recording of a rewound run'", REWIND_RUN, ['affected-tests']),
  at050(
    'carry-1',
    "tests/replay/replay.test.ts 'replays a fresh recording of a run that continues as new'",
    'the execution that hands its state over packed (the packed-carry marker deprecated)',
    ['affected-tests'],
  ),
  at050(
    'carry-2',
    "tests/replay/replay.test.ts 'replays a fresh recording of a run that continues as new'",
    'the execution that takes the packed state and ends at its iteration cap',
    ['affected-tests'],
  ),
  at050(
    'stop-now',
    "tests/workflow/stop.test.ts 'stop --now kills the agent tree and closes the run, wherever in the call it lands'",
    'a run stopped with --now during its agent call: the final notification and the run files side by side, no memory judge',
    ['stop-now-closes-first'],
  ),
  at050(
    'pause-deadline',
    "tests/workflow/pause-deadlines.test.ts 'reminds on its channels, tells the second list, and stops at the deadline, a worker killed in between changing nothing'",
    'a run paused by the agent’s blocking request for a person, with a reminder, a re-route and a deadline: each a durable timer, its worker killed in between, stopped at the deadline',
    ['pause-deadlines'],
  ),
  at050(
    'affected-tests',
    "tests/workflow/affected-tests.test.ts 'an iteration runs the tests its change affects; the completion check runs everything and refuses what they missed'",
    'gate passes of ordinary iterations on the affected tests, completion checks on the full suite, a claim refused for what the selection missed',
    ['affected-tests'],
  ),
];

/** The fixtures a release deleted: recordings from before 0.4.0 (0.3.0 and the development builds after it). */
export interface RetiredFixture {
  file: string;
  /** The commit whose code recorded it. */
  commit: string;
  /** The patches it pinned: it was recorded before them. */
  pinned: string[];
  droppedIn: string;
}

const dropped050 = ([file, commit, pinned]: [string, string, string[]]): RetiredFixture => ({ file, commit, pinned, droppedIn: '0.5.0' });

/**
 * Deleted by 0.5.0, which deprecated every patch they pinned and deleted the old paths they took:
 * runs started before 0.4.0 must have finished before 0.5.0 (docs/operations.md).
 */
export const RETIRED: RetiredFixture[] = (
  [
    ['demo-v0.1.0.json', 'b3e14e6', ['vigil-council-v1']],
    ['demo-v0.2.0.json', '7262249', ['vigil-escalation-v1']],
    ['demo-v0.3.0.json', 'ca5bf01', []],
    ['rewind-v0.3.0.json', 'bae4be8', []],
    ['before-vigil-rate-limit-v1.json', '315d21e', ['vigil-rate-limit-v1']],
    ['before-vigil-hardening-v1.json', 'efd5f49', ['vigil-hardening-v1']],
    ['before-vigil-providers-v1.json', '8ff4793', ['vigil-providers-v1']],
    ['before-vigil-gates-v1.json', 'd5260eb', ['vigil-gates-v1']],
    ['before-vigil-search-attributes-v1.json', '67b9771', ['vigil-search-attributes-v1']],
    ['before-vigil-journal-v1.json', 'b2fb71f', ['vigil-journal-v1']],
    ['before-vigil-checkpoints-v1.json', '48e8ebf', ['vigil-checkpoints-v1', 'vigil-memory-v1', 'vigil-hosts-v1']],
    ['before-vigil-memory-v1-demo.json', 'b12c3be', ['vigil-memory-v1']],
    ['before-vigil-memory-v1-rewind.json', 'b12c3be', ['vigil-memory-v1']],
    ['before-vigil-lean-iteration-v1.json', '9651252', ['vigil-lean-iteration-v1']],
    ['before-vigil-lean-prompt-v1-demo.json', 'caddedf', ['vigil-lean-prompt-v1']],
    ['before-vigil-lean-prompt-v1-rewind.json', 'caddedf', ['vigil-lean-prompt-v1']],
    ['before-vigil-packed-carry-v1-demo.json', 'd0c0e1e', ['vigil-packed-carry-v1']],
    ['before-vigil-packed-carry-v1-rewind.json', 'd0c0e1e', ['vigil-packed-carry-v1']],
    ['before-vigil-packed-carry-v1-carry-1.json', 'd0c0e1e', ['vigil-packed-carry-v1']],
    ['before-vigil-packed-carry-v1-carry-2.json', 'd0c0e1e', ['vigil-packed-carry-v1']],
    ['before-vigil-round-activity-v1-demo.json', '7e37ab0', ['vigil-round-activity-v1']],
    ['before-vigil-round-activity-v1-rewind.json', '7e37ab0', ['vigil-round-activity-v1']],
    ['before-vigil-gates-with-call-v1-demo.json', 'aec9556', ['vigil-gates-with-call-v1']],
    ['before-vigil-gates-with-call-v1-rewind.json', 'aec9556', ['vigil-gates-with-call-v1']],
    ['before-vigil-claims-held-v1-demo.json', '8cdba70', ['vigil-claims-held-v1']],
    ['before-vigil-claims-held-v1-rewind.json', '8cdba70', ['vigil-claims-held-v1']],
    ['before-vigil-claims-held-v1-paused-claim.json', '8cdba70', ['vigil-claims-held-v1']],
    ['before-vigil-claims-held-v1-paused-claim-council.json', '8cdba70', ['vigil-claims-held-v1']],
    ['before-vigil-undelivered-directives-v1-demo.json', 'd096cba', ['vigil-undelivered-directives-v1']],
    ['before-vigil-undelivered-directives-v1-rewind.json', 'd096cba', ['vigil-undelivered-directives-v1']],
    ['before-vigil-undelivered-directives-v1-late-directive.json', 'd096cba', ['vigil-undelivered-directives-v1']],
    [
      'before-vigil-completion-rule-v1-demo.json',
      'a075efe',
      ['vigil-completion-rule-v1', 'vigil-provider-wait-rewind-v1', 'vigil-recheck-before-call-v1'],
    ],
    ['before-vigil-completion-rule-v1-stagnant.json', 'a075efe', ['vigil-completion-rule-v1']],
    ['before-vigil-completion-rule-v1-rewind.json', 'a075efe', ['vigil-completion-rule-v1']],
    ['before-vigil-completion-rule-v1-carry-1.json', 'a075efe', ['vigil-completion-rule-v1']],
    ['before-vigil-completion-rule-v1-carry-2.json', 'a075efe', ['vigil-completion-rule-v1']],
    ['before-vigil-provider-wait-rewind-v1.json', '13d7881', ['vigil-provider-wait-rewind-v1']],
    ['before-vigil-recheck-before-call-v1.json', '13d7881', ['vigil-recheck-before-call-v1']],
    ['before-vigil-prepare-waits-v1.json', '2e7e78b', ['vigil-prepare-waits-v1']],
    ['before-vigil-run-admission-v1.json', '08ba0a1', ['vigil-run-admission-v1']],
    ['before-vigil-lean-rounds-v1.json', '08ba0a1', ['vigil-lean-rounds-v1']],
    ['before-vigil-directive-ids-v1.json', '84fb9de', ['vigil-directive-ids-v1']],
    ['before-vigil-checklist-retry-v1.json', '08ba0a1', ['vigil-checklist-retry-v1']],
    ['before-vigil-delivery-v1.json', '9af4b34', ['vigil-delivery-v1']],
    ['before-vigil-streams-v1.json', '6cbed54', ['vigil-streams-v1']],
    ['before-vigil-run-files-released-v1.json', 'c0c51d7', ['vigil-run-files-released-v1']],
    ['before-vigil-stream-planner-v1.json', 'c6e6124', ['vigil-stream-planner-v1', 'vigil-stream-waits-v1']],
    ['before-vigil-stream-waits-v1-stream.json', 'c6e6124', ['vigil-stream-waits-v1']],
    ['before-vigil-memory-judge-v1.json', '66f2a3b', ['vigil-memory-judge-v1']],
    ['before-vigil-council-checklist-v1-claude.json', '0c3e2d2', ['vigil-council-checklist-v1']],
    ['before-vigil-council-checklist-v1-command.json', '0c3e2d2', ['vigil-council-checklist-v1']],
  ] satisfies [string, string, string[]][]
).map(dropped050);

/** Every era fixture of the table once, with the eras that list it. */
export function eraFixtures(): { fixture: EraFixture; eras: Era[] }[] {
  const byFile = new Map<string, { fixture: EraFixture; eras: Era[] }>();
  for (const era of ERAS) {
    for (const fixture of era.fixtures) {
      const entry = byFile.get(fixture.file) ?? { fixture, eras: [] };
      entry.eras.push(era);
      byFile.set(fixture.file, entry);
    }
  }
  return [...byFile.values()];
}
