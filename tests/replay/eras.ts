/**
 * The eras of the run workflow: for every `patched()` id declared in workflows/, the committed
 * histories (in histories/) recorded by the code from just before that patch landed, and what
 * each one pins. replay.test.ts replays each with the current code and fails when a patch id
 * declared in workflows/ has no entry here, so a new patch comes with its fixture.
 *
 * `before-<patch>[-<scenario>].json` files were recorded with the official CLI's JSON export by
 * the test harness of the commit named (the parent of the commit that introduced the patch; for
 * memory also main just before it was merged), each scenario as that commit's own
 * tests/replay/replay.test.ts records it (`demo`, `rewind`) or as a small recorder written
 * against that commit's harness (`carry-1`/`carry-2`, `paused-claim`, `late-directive`,
 * `stagnant`, `provider-wait-rewind`, `breaker-ask-stop`). Where several patches share a parent
 * commit, they share its recordings. The patched point of vigil-hosts-v1 and
 * vigil-search-attributes-v1 is reached only by runs whose input names a host or turns search
 * attributes off, which no run from before them could do: their recordings are demo runs. The
 * two races of 9261af5 were recorded at its parent 13d7881 with the fake opencode CLI, as that
 * commit's tests/workflow/races.test.ts drives them. d5260eb (before the gates) does not
 * type-check on its own (its knobs arrive with d552a55); tsc emits it all the same and it ran.
 *
 * The patch ids are the workflow's own (`PatchId`, workflows/run/eras.ts, where every `patched()`
 * of the loop is asked); tests/unit/architecture.test.ts checks that this table and `PATCH_IDS`
 * list the same ids.
 *
 * `RELEASE_FIXTURES`: the runs the next release must replay, recorded by this one
 * (`v<release>-<scenario>.json`): 0.4.0's code at tag v0.4.0, each scenario as a test of that
 * commit ran it (its file and name below), exported from the suite's server once the test was
 * over (`VIGIL_EXPORT_HISTORIES`, tests/support/global-setup.ts). Between them they hold the marker
 * of every patch where 0.4.0 asks it (`markers`, checked against each history).
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

/** What the demo fixtures pin in each era: the demo run as that era's code ran it. */
const DEMO =
  'the demo (a claim refused, a crash and its backoff, a directive, a pause, the council split then approving) as that era ran it';
const REWIND = 'a rewind from 4 to 2 with a directive, paused during the agent call, as that era ran it';

const demo = (patch: string, commit: string, pins: string, file = `before-${patch}-demo.json`): EraFixture => ({
  file,
  commit,
  scenario: 'demo',
  pins,
});
const rewind = (patch: string, commit: string, pins: string): EraFixture => ({
  file: `before-${patch}-rewind.json`,
  commit,
  scenario: 'rewind',
  pins,
});

/** Recorded at 48e8ebf, the parent of the memory, checkpoints and hosts commits alike (three branches forked there). */
const BEFORE_MEMORY_CHECKPOINTS_HOSTS: EraFixture = {
  file: 'before-vigil-checkpoints-v1.json',
  commit: '48e8ebf',
  scenario: 'demo',
  pins: 'no checkpoint asked of the inspection, no run memory in the prompts, activities on the run queue',
};

/**
 * Recorded at a075efe. The three patches of 9261af5 landed together; its parent 13d7881 differs
 * from a075efe in no file of the run workflow but pure decisions the older path does not call.
 */
const BEFORE_COMPLETION_RULE_DEMO = demo('vigil-completion-rule-v1', 'a075efe', DEMO);
const BEFORE_COMPLETION_RULE_REWIND = rewind('vigil-completion-rule-v1', 'a075efe', REWIND);

export const ERAS: Era[] = [
  {
    patch: 'vigil-council-v1',
    introducedBy: 'd332aec',
    before: 'the completion council',
    fixtures: [{ file: 'demo-v0.1.0.json', commit: 'b3e14e6', scenario: 'demo', pins: 'a claim is judged by the plain completion check' }],
  },
  {
    patch: 'vigil-escalation-v1',
    introducedBy: 'ca5bf01',
    before: 'escalation',
    fixtures: [
      { file: 'demo-v0.2.0.json', commit: '7262249', scenario: 'demo', pins: 'no escalation, notifications, tier ladder or signal files' },
    ],
  },
  {
    patch: 'vigil-rate-limit-v1',
    introducedBy: '2ccd55c',
    before: 'provider-aware rate-limit waits',
    fixtures: [
      demo(
        'vigil-rate-limit-v1',
        '315d21e',
        'a failed agent call backs off exponentially, a rate limit too',
        'before-vigil-rate-limit-v1.json',
      ),
    ],
  },
  {
    patch: 'vigil-hardening-v1',
    introducedBy: '8f6bde1',
    before: 'the hardening',
    fixtures: [
      demo(
        'vigil-hardening-v1',
        'efd5f49',
        'backoff not trimmed to the caps, no rollover while the agent runs',
        'before-vigil-hardening-v1.json',
      ),
    ],
  },
  {
    patch: 'vigil-providers-v1',
    introducedBy: '71d2cfd',
    before: 'provider presets',
    fixtures: [
      demo('vigil-providers-v1', '8ff4793', 'no provider breaker, auth pause or budget warning', 'before-vigil-providers-v1.json'),
    ],
  },
  {
    patch: 'vigil-gates-v1',
    introducedBy: 'd552a55',
    before: 'quality gates',
    fixtures: [
      demo('vigil-gates-v1', 'd5260eb', 'no quality gates, code review or PRD checklist before the council', 'before-vigil-gates-v1.json'),
    ],
  },
  {
    patch: 'vigil-search-attributes-v1',
    introducedBy: '1d35986',
    before: 'runs without search attributes',
    fixtures: [
      demo(
        'vigil-search-attributes-v1',
        '67b9771',
        'every run upserts its search attributes (no input can turn them off)',
        'before-vigil-search-attributes-v1.json',
      ),
    ],
  },
  {
    patch: 'vigil-journal-v1',
    introducedBy: 'bafa10e',
    before: 'the event journal',
    fixtures: [demo('vigil-journal-v1', 'b2fb71f', 'no journal and no projection into the event store', 'before-vigil-journal-v1.json')],
  },
  {
    patch: 'vigil-checkpoints-v1',
    introducedBy: '719e275',
    before: 'checkpoints',
    fixtures: [BEFORE_MEMORY_CHECKPOINTS_HOSTS],
  },
  {
    patch: 'vigil-memory-v1',
    introducedBy: 'c54217b',
    before: 'the run memory',
    fixtures: [
      BEFORE_MEMORY_CHECKPOINTS_HOSTS,
      demo(
        'vigil-memory-v1',
        'b12c3be',
        'main with checkpoints and the lean iteration, before the memory merged: prompts without the run so far',
      ),
      rewind('vigil-memory-v1', 'b12c3be', 'a rewind that restores no run memory'),
    ],
  },
  {
    patch: 'vigil-hosts-v1',
    introducedBy: '1ac6343',
    before: 'host task queues',
    fixtures: [BEFORE_MEMORY_CHECKPOINTS_HOSTS],
  },
  {
    patch: 'vigil-lean-iteration-v1',
    introducedBy: '9a98b13',
    before: 'the lean iteration',
    fixtures: [
      demo(
        'vigil-lean-iteration-v1',
        '9651252',
        'inspection and signal files as activities of their own, one activity per gate',
        'before-vigil-lean-iteration-v1.json',
      ),
    ],
  },
  {
    patch: 'vigil-lean-prompt-v1',
    introducedBy: 'bec016b',
    before: 'the lean prompt',
    fixtures: [
      demo('vigil-lean-prompt-v1', 'caddedf', 'the run memory and the notes travel as text in every call'),
      rewind('vigil-lean-prompt-v1', 'caddedf', 'a rewind whose next prompts carry the memory as text'),
    ],
  },
  {
    patch: 'vigil-packed-carry-v1',
    introducedBy: '17ca4b4',
    before: 'the packed carry',
    fixtures: [
      demo('vigil-packed-carry-v1', 'd0c0e1e', DEMO),
      rewind('vigil-packed-carry-v1', 'd0c0e1e', REWIND),
      {
        file: 'before-vigil-packed-carry-v1-carry-1.json',
        commit: 'd0c0e1e',
        scenario: 'carry-1',
        pins: 'continue-as-new hands the state over as is (`state`, not `packedState`)',
      },
      {
        file: 'before-vigil-packed-carry-v1-carry-2.json',
        commit: 'd0c0e1e',
        scenario: 'carry-2',
        pins: 'the execution that took an unpacked state',
      },
    ],
  },
  {
    patch: 'vigil-round-activity-v1',
    introducedBy: 'd1e6b3c',
    before: 'round activities',
    fixtures: [
      demo(
        'vigil-round-activity-v1',
        '7e37ab0',
        'a council round and a code review as workflow code, one activity per member and reviewer',
      ),
      rewind('vigil-round-activity-v1', '7e37ab0', REWIND),
    ],
  },
  {
    patch: 'vigil-gates-with-call-v1',
    introducedBy: 'ef41f4b',
    before: 'the gate pass rode with the call',
    fixtures: [
      demo('vigil-gates-with-call-v1', 'aec9556', 'a gated iteration as two activities: the agent call, then the gate pass'),
      rewind('vigil-gates-with-call-v1', 'aec9556', REWIND),
    ],
  },
  {
    patch: 'vigil-claims-held-v1',
    introducedBy: '8f2fa9c',
    before: 'claims were held',
    fixtures: [
      demo('vigil-claims-held-v1', '8cdba70', DEMO),
      rewind('vigil-claims-held-v1', '8cdba70', REWIND),
      {
        file: 'before-vigil-claims-held-v1-paused-claim.json',
        commit: '8cdba70',
        scenario: 'paused-claim',
        pins: 'a claim a pause interrupted is dropped (no council)',
      },
      {
        file: 'before-vigil-claims-held-v1-paused-claim-council.json',
        commit: '8cdba70',
        scenario: 'paused-claim-council',
        pins: 'a claim a pause interrupted is dropped (council)',
      },
    ],
  },
  {
    patch: 'vigil-undelivered-directives-v1',
    introducedBy: '750edcd',
    before: 'undelivered directives were named',
    fixtures: [
      demo('vigil-undelivered-directives-v1', 'd096cba', DEMO),
      rewind('vigil-undelivered-directives-v1', 'd096cba', REWIND),
      {
        file: 'before-vigil-undelivered-directives-v1-late-directive.json',
        commit: 'd096cba',
        scenario: 'late-directive',
        pins: 'a directive sent during the last iteration ends the run without a note',
      },
    ],
  },
  {
    patch: 'vigil-completion-rule-v1',
    introducedBy: '9261af5',
    before: 'the completion rule',
    fixtures: [
      BEFORE_COMPLETION_RULE_DEMO,
      {
        file: 'before-vigil-completion-rule-v1-stagnant.json',
        commit: 'a075efe',
        scenario: 'stagnant',
        pins: 'an unchanged tree claimed every iteration under default knobs: each claim reviewed and refused',
      },
      BEFORE_COMPLETION_RULE_REWIND,
      {
        file: 'before-vigil-completion-rule-v1-carry-1.json',
        commit: 'a075efe',
        scenario: 'carry-1',
        pins: 'continue-as-new hands the state over packed',
      },
      {
        file: 'before-vigil-completion-rule-v1-carry-2.json',
        commit: 'a075efe',
        scenario: 'carry-2',
        pins: 'the execution that took a packed state',
      },
    ],
  },
  {
    patch: 'vigil-provider-wait-rewind-v1',
    introducedBy: '9261af5',
    before: 'a rewind ended a provider wait',
    fixtures: [
      {
        file: 'before-vigil-provider-wait-rewind-v1.json',
        commit: '13d7881',
        scenario: 'provider-wait-rewind',
        pins: 'a rewind asked during a provider wait is held through the wait and a whole agent call',
      },
      BEFORE_COMPLETION_RULE_DEMO,
    ],
  },
  {
    patch: 'vigil-recheck-before-call-v1',
    introducedBy: '9261af5',
    before: 'messages were rechecked before the call',
    fixtures: [
      {
        file: 'before-vigil-recheck-before-call-v1.json',
        commit: '13d7881',
        scenario: 'breaker-ask-stop',
        pins: 'a stop --now that came while the breaker was asked lets the agent call start first',
      },
      BEFORE_COMPLETION_RULE_DEMO,
    ],
  },
  {
    patch: 'vigil-prepare-waits-v1',
    introducedBy: 'da3d62e',
    before: 'a failed preparation waited for a person',
    fixtures: [
      {
        file: 'before-vigil-prepare-waits-v1.json',
        commit: '2e7e78b',
        scenario: 'prepare-paused',
        pins: 'a supervised run whose committed .vigil link failed its preparation paused and prepared again at once, in a loop, until terminated',
      },
    ],
  },
  {
    patch: 'vigil-run-admission-v1',
    introducedBy: '1c748e1',
    before: 'a signed run went to its preparation without an admission',
    fixtures: [
      {
        file: 'before-vigil-run-admission-v1.json',
        commit: '08ba0a1',
        scenario: 'signed',
        pins: 'a signed run (loop only) on a worker that requires signed runs: no admission activity, straight to its preparation, completed by its promise',
      },
    ],
  },
  {
    patch: 'vigil-lean-rounds-v1',
    introducedBy: '0ef09ec',
    before: 'every green tree was convened, reviewed and verified again',
    fixtures: [
      {
        file: 'before-vigil-lean-rounds-v1.json',
        commit: '08ba0a1',
        scenario: 'green-rounds',
        pins: 'green iterations that only appended to a reviewed file, each an early check with a full review, checklist verification and council round, then two refused claims',
      },
    ],
  },
  {
    patch: 'vigil-directive-ids-v1',
    introducedBy: '3d3641d',
    before: 'a resent directive was taken once',
    fixtures: [
      {
        file: 'before-vigil-directive-ids-v1.json',
        commit: '84fb9de',
        scenario: 'resent-directive',
        pins: 'a directive sent by update and resent by signal while the agent worked, both queued: the next prompt carried it twice',
      },
    ],
  },
  {
    patch: 'vigil-checklist-retry-v1',
    introducedBy: '0ef09ec',
    before: 'a checklist extraction a provider spoiled was not asked again',
    fixtures: [
      {
        file: 'before-vigil-checklist-retry-v1.json',
        commit: '08ba0a1',
        scenario: 'checklist-rate-limited',
        pins: 'a run whose checklist extraction hit a 429 at its start went on without a checklist, never asking again',
      },
    ],
  },
  {
    patch: 'vigil-delivery-v1',
    introducedBy: 'd105dee',
    before: 'a run that ended done left its work uncommitted',
    fixtures: [
      {
        file: 'before-vigil-delivery-v1.json',
        commit: '9af4b34',
        scenario: 'approved',
        pins: 'a default run approved by the council at iteration 3 recorded its outcome without a delivery activity',
      },
    ],
  },
  {
    patch: 'vigil-streams-v1',
    introducedBy: 'fc03a0a',
    before: 'a run with tasks and parallelStreams above 1 ran as one stream',
    fixtures: [
      {
        file: 'before-vigil-streams-v1.json',
        commit: '6cbed54',
        scenario: 'tasks',
        pins: 'a default run given two tasks (one depending on the other) and parallelStreams=3, approved at iteration 3 and delivered, with no child workflow and no worktree',
      },
    ],
  },
  {
    patch: 'vigil-run-files-released-v1',
    introducedBy: '6c76332',
    before: 'a run that ended left its sandbox homes in VIGIL_HOME',
    fixtures: [
      {
        file: 'before-vigil-run-files-released-v1.json',
        commit: 'c0c51d7',
        scenario: 'demo',
        pins: 'the demo run, approved and delivered, closed after flushing its journal with no activity after it',
      },
    ],
  },
  {
    patch: 'vigil-stream-planner-v1',
    introducedBy: 'fd16d4c',
    before: 'a run split into parallel streams without a task list took each checklist item as a task',
    fixtures: [
      {
        file: 'before-vigil-stream-planner-v1.json',
        commit: 'c6e6124',
        scenario: 'streams-by-checklist',
        pins: 'a default run with parallelStreams=2 and no task list, its two checklist items run as two streams (child runs), merged, approved and delivered, with no planner call',
      },
    ],
  },
  {
    patch: 'vigil-stream-waits-v1',
    introducedBy: 'fd16d4c',
    before: 'a stream waited for a person without telling its run',
    fixtures: [
      {
        file: 'before-vigil-stream-planner-v1.json',
        commit: 'c6e6124',
        scenario: 'streams-by-checklist',
        pins: 'a default run with parallelStreams=2 and no task list, its two checklist items run as two streams (child runs), merged, approved and delivered, with no planner call',
      },
      {
        file: 'before-vigil-stream-waits-v1-stream.json',
        commit: 'c6e6124',
        scenario: 'streams-by-checklist',
        pins: 'one stream (child run) of that run: its task as a directive in its first prompt, approved at iteration 3 and delivered on its branch, telling its run nothing but its outcome',
      },
    ],
  },
  {
    patch: 'vigil-memory-judge-v1',
    introducedBy: '4592b63',
    before: 'a run that ended with the event store on left its memory as consolidation made it',
    fixtures: [
      {
        file: 'before-vigil-memory-judge-v1.json',
        commit: '66f2a3b',
        scenario: 'memory-judge',
        pins: 'a default run with the event store on (the test failing three times for one reason, then fixed, approved and delivered) whose end flushed its journal and released its sandbox homes, with no memory judge',
      },
    ],
  },
  {
    patch: 'vigil-council-checklist-v1',
    introducedBy: '66f53f7',
    before: 'a claim whose checklist had to be verified again asked the verifier in a call of its own before the council round',
    fixtures: [
      {
        file: 'before-vigil-council-checklist-v1-claude.json',
        commit: '0c3e2d2',
        scenario: 'council-checklist-claude',
        pins: 'a default run with the claude preset (the fake claude CLI, rounds batched): the claim at 3 verified by the checklist verifier, then refused by the council in one batched round; the claim at 4 verified again and approved',
      },
      {
        file: 'before-vigil-council-checklist-v1-command.json',
        commit: '0c3e2d2',
        scenario: 'council-checklist-command',
        pins: 'the same with the command provider (the scripted agent): the verifier, then three member calls in the round, at each claim',
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

/** What the demo and the rewind pin. */
const DEMO_RUN =
  'the demo: a failed iteration, a claim refused by a gate, a backoff, a directive, a pause, the council split then approving, delivered';
const REWIND_RUN = 'a rewind from 4 to 2 with a directive, asked while paused after a pause given during the agent call';

/** What 0.5.0 will replay: runs 0.4.0 started (recorded at v0.4.0 with VIGIL_EXPORT_HISTORIES). */
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
];

/** Every fixture file of the table once, with the eras that list it. */
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
