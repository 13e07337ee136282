/**
 * The replay fixtures of the run workflow (histories/, in the official CLI's JSON export), in
 * three tables that follow a patch's life (CONTRIBUTING.md, Adding a patch):
 *
 * - `ERAS`: per live patch (`PATCH_IDS`, workflows/run/eras.ts), the histories recorded by the
 *   code from just before it landed (`before-<patch>[-<scenario>].json`), which the code must
 *   replay down its old path.
 * - `RELEASE_FIXTURES`: the runs this release must replay, recorded by the release before it
 *   (`v<release>-<scenario>.json`): 0.5.0's code at tag v0.5.0, each scenario as a test of that
 *   commit ran it (its file and name below), exported from the suite's server once the test was
 *   over. Between them they hold the marker of every deprecated patch where 0.5.0 asked it
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
 * What 0.6.0 must replay: runs 0.5.0 started (recorded at v0.5.0 with VIGIL_EXPORT_HISTORIES). Besides
 * the markers below, each holds, deprecated, the markers of the patches 0.5.0 deprecated, whose
 * calls 0.6.0 deleted: their replay proves a workflow without the calls skips them.
 */
export const RELEASE_FIXTURES: ReleaseFixture[] = [
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
  at050(
    'acceptance-from-prd',
    "tests/workflow/acceptance-from-prd.test.ts 'pauses once to show the written tests, then refuses a hard-coded answer by them and approves the fix; the builder never finds them'",
    'a supervised run with acceptanceFromPrd: its acceptance tests written and sealed, a pause to show them, a hard-coded answer refused by them, the fix approved',
    ['acceptance-from-prd', 'pause-deadlines', 'affected-tests'],
  ),
  at050(
    'stream-recovery',
    "tests/workflow/streams-recovery.test.ts 'stopped on its own, it is tried once more from a fresh worktree (the run’s stop alone stops a stream for good), and the run ends approved'",
    'a run of two streams, one stopped on its own by a person: tried once more from a fresh worktree, both merged, approved',
    ['stream-recovery', 'affected-tests'],
  ),
  at050(
    'stream-recovery-stream',
    "tests/workflow/streams-recovery.test.ts 'pauses with advice that works: the run’s resume makes the worktree again from its last checkpoint, and the run ends approved with both streams merged'",
    'a stream whose worktree was deleted: paused with advice, resumed by its run, its worktree made again from its last checkpoint, done',
    ['affected-tests', 'pause-deadlines', 'stream-recovery'],
  ),
  at050(
    'follow-pr',
    "tests/workflow/follow-pr.test.ts 'red checks: an iteration whose prompt carries them fixes the work, judged again, pushed to the same branch; the redelivery is taken once'",
    'deliver=pr with followPr: delivered, its pull request followed, red checks an iteration judged again and pushed to the same branch, then merged',
    ['affected-tests', 'follow-pr'],
  ),
];

/** A fixture a release deleted, with the release that dropped it. */
export interface RetiredFixture {
  file: string;
  /** The commit whose code recorded it. */
  commit: string;
  /** The patches it pinned: recorded before them (`before-*`), or holding their markers (`v<release>-*`). */
  pinned: string[];
  droppedIn: string;
}

const dropped050 = ([file, commit, pinned]: [string, string, string[]]): RetiredFixture => ({ file, commit, pinned, droppedIn: '0.5.0' });

/**
 * Deleted by 0.5.0, which deprecated every patch they pinned and deleted the old paths they took:
 * runs started before 0.4.0 must have finished before 0.5.0 (docs/operations.md). Recordings from
 * before 0.4.0 (0.3.0 and the development builds after it).
 */
const RETIRED_BY_050: RetiredFixture[] = (
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

const dropped060 = ([file, commit, pinned]: [string, string, string[]]): RetiredFixture => ({ file, commit, pinned, droppedIn: '0.6.0' });
/** The patches whose marker every execution of 0.4.0 recorded first, in its order. */
const EXECUTION_040 = [
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
/** A recording of 0.4.0 (at v0.4.0, 04f0a78) and the markers it held beyond every execution's. */
const at040 = (scenario: string, then: string[]): [string, string, string[]] => [
  `v0.4.0-${scenario}.json`,
  '04f0a78',
  [...EXECUTION_040, ...then].map((id) => `vigil-${id}-v1`),
];

/**
 * Deleted by 0.6.0, which deleted the calls of the patches 0.5.0 deprecated (the runs 0.4.0 started,
 * which these recordings are, held their markers undeprecated) and the old paths of the eight
 * patches 0.5.0 had live (the `before-*` recordings took them): runs started by 0.4.0 must have
 * finished before 0.6.0 (docs/operations.md).
 */
const RETIRED_BY_060: RetiredFixture[] = (
  [
    at040('demo', ['council-checklist', 'delivery', 'run-files-released']),
    at040('rewind', ['run-files-released']),
    at040('carry-1', ['packed-carry']),
    at040('carry-2', ['run-files-released']),
    at040('carry-rewind', ['run-files-released']),
    at040('paused-claim-council', ['delivery', 'run-files-released']),
    at040('paused-claim', ['delivery', 'run-files-released']),
    at040('late-directive', ['undelivered-directives', 'run-files-released']),
    at040('stagnant', ['run-files-released']),
    at040('provider-wait-rewind', ['run-files-released']),
    at040('breaker-ask-stop', ['run-files-released']),
    at040('prepare-paused', ['prepare-waits', 'run-files-released']),
    at040('signed', ['run-admission', 'council-checklist', 'delivery', 'run-files-released']),
    at040('signed-refused', ['run-admission', 'run-files-released']),
    at040('signed-streams', ['run-admission', 'streams', 'stream-waits', 'council-checklist', 'delivery', 'run-files-released']),
    at040('signed-stream', ['run-admission', 'stream-waits', 'council-checklist', 'delivery', 'run-files-released']),
    at040('resent-directive', ['directive-ids', 'delivery', 'run-files-released']),
    at040('checklist-retry', ['checklist-retry', 'delivery', 'run-files-released']),
    at040('checklist-give-up', ['checklist-retry', 'run-files-released']),
    at040('delivery', ['council-checklist', 'delivery', 'run-files-released']),
    at040('memory-judge', ['council-checklist', 'delivery', 'memory-judge', 'run-files-released']),
    at040('council-checklist-claude', ['council-checklist', 'delivery', 'run-files-released']),
    at040('green-rounds', ['council-checklist', 'delivery', 'run-files-released']),
    at040('rate-limit', ['rate-limit', 'delivery', 'run-files-released']),
    at040('hosts', ['hosts', 'delivery', 'run-files-released']),
    at040('no-search-attributes', ['search-attributes', 'delivery', 'run-files-released']),
    at040('planner', ['streams', 'stream-planner', 'stream-waits', 'council-checklist', 'delivery', 'run-files-released']),
    at040('stream-waits', ['streams', 'stream-waits', 'run-files-released']),
    at040('stream-waits-stream', ['stream-waits', 'run-files-released']),
    ['before-vigil-done-means-done-v1-demo.json', '2567605', ['vigil-done-means-done-v1', 'vigil-acceptance-from-prd-v1']],
    ['before-vigil-judges-see-changes-v1-delta.json', '6ec21a3', ['vigil-judges-see-changes-v1']],
    ['before-vigil-judges-see-changes-v1-contract.json', '6ec21a3', ['vigil-judges-see-changes-v1']],
    ['before-vigil-judges-see-changes-v1-claim.json', '6ec21a3', ['vigil-judges-see-changes-v1']],
    ['before-vigil-judges-see-changes-v1-agent-request.json', '6ec21a3', ['vigil-judges-see-changes-v1']],
    ['before-vigil-stop-now-closes-first-v1.json', 'ec0db20', ['vigil-stop-now-closes-first-v1']],
    ['before-vigil-affected-tests-v1-demo.json', 'e0a2051', ['vigil-affected-tests-v1']],
    ['before-vigil-pause-deadlines-v1.json', 'ef0551e', ['vigil-pause-deadlines-v1']],
    ['before-vigil-stream-recovery-v1.json', '6ec21a3', ['vigil-stream-recovery-v1', 'vigil-acceptance-from-prd-v1']],
    ['before-vigil-stream-recovery-v1-stream.json', '6ec21a3', ['vigil-stream-recovery-v1']],
    ['before-vigil-follow-pr-v1.json', '823dd25', ['vigil-follow-pr-v1']],
  ] satisfies [string, string, string[]][]
).map(dropped060);

/** The fixtures releases deleted, and why: the runs they pinned can no longer be open. */
export const RETIRED: RetiredFixture[] = [...RETIRED_BY_050, ...RETIRED_BY_060];

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
