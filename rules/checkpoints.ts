/**
 * Checkpoints and rewind, the pure part: ref names (a workflow id made into a legal git ref
 * component), which checkpoint to take and which to prune (retention), sealing a checkpoint with
 * the state after its iteration, whether a rewind target is valid, and the state after a rewind.
 *
 * A checkpoint is a commit of the tree an iteration left (parent: the previous checkpoint) under
 * `refs/vigil/<run>/<iteration>`. Its record in the run state carries a compact snapshot of the
 * state after that iteration, sealed when the next iteration starts: a rewind restores from it.
 *
 * Sandbox-safe: pure functions, no I/O.
 */
import { rewindMemory } from './memory.js';
import type { CheckpointRequest } from '../schemas/activities.js';
import type { CheckpointRecord, CheckpointsState, RewindRecord, RewindSnapshot, RunState } from '../schemas/run.js';
import { sha256Hex } from './sha256.js';

/** Longest encoded workflow id used as is in a ref; longer ones are cut and suffixed with a digest. */
const MAX_COMPONENT = 150;

/**
 * A workflow id as one legal git ref component: letters, digits, `_` and `-` stay; every other
 * UTF-8 byte becomes `%XX` (so no `.`, `..`, `:`, `~`, `^`, `@{`, `\`, spaces or control characters
 * reach git, and distinct ids stay distinct). An id encoding to more than 150 characters is cut
 * and suffixed with `-h` and 16 hex digits of its SHA-256.
 */
export function refComponent(workflowId: string): string {
  if (workflowId.length === 0) throw new Error('an empty workflow id has no checkpoint refs');
  let out = '';
  for (const ch of workflowId) {
    if (/^[A-Za-z0-9_-]$/.test(ch)) {
      out += ch;
      continue;
    }
    for (const b of utf8Bytes(ch)) out += `%${b.toString(16).toUpperCase().padStart(2, '0')}`;
  }
  if (out.length <= MAX_COMPONENT) return out;
  // Never cut inside a %XX escape.
  let cut = out.slice(0, MAX_COMPONENT - 20);
  const pct = cut.lastIndexOf('%');
  if (pct >= cut.length - 2) cut = cut.slice(0, pct);
  return `${cut}-h${sha256Hex(workflowId).slice(0, 16)}`;
}

function utf8Bytes(ch: string): number[] {
  const c = ch.codePointAt(0) ?? 0xfffd;
  const cp = c >= 0xd800 && c <= 0xdfff ? 0xfffd : c; // a lone surrogate is encoded as U+FFFD
  if (cp < 0x80) return [cp];
  if (cp < 0x800) return [0xc0 | (cp >> 6), 0x80 | (cp & 0x3f)];
  if (cp < 0x10000) return [0xe0 | (cp >> 12), 0x80 | ((cp >> 6) & 0x3f), 0x80 | (cp & 0x3f)];
  return [0xf0 | (cp >> 18), 0x80 | ((cp >> 12) & 0x3f), 0x80 | ((cp >> 6) & 0x3f), 0x80 | (cp & 0x3f)];
}

/** `refs/vigil/<encoded id>/`: every ref of the run starts with this. */
export function runRefPrefix(workflowId: string): string {
  return `refs/vigil/${refComponent(workflowId)}/`;
}

export function checkpointRef(workflowId: string, iteration: number): string {
  return `${runRefPrefix(workflowId)}${iteration}`;
}

/** Where the tree before the `n`-th rewind is kept (never pruned). */
export function savedRef(workflowId: string, n: number): string {
  return `${runRefPrefix(workflowId)}before-rewind-${n}`;
}

/**
 * The checkpoint to ask the inspection for after `iteration` (null: checkpoints are off): its
 * ref, the previous checkpoint as parent, a message naming run and iteration, and the refs that
 * fall out of the retention bound once it exists.
 */
export function planCheckpoint(
  list: readonly CheckpointRecord[],
  workflowId: string,
  iteration: number,
  kept: number,
): CheckpointRequest | null {
  if (kept <= 0) return null;
  const keep = Math.max(kept - 1, 0);
  const older = list.filter((c) => c.iteration < iteration);
  const prune = [...older.slice(0, Math.max(older.length - keep, 0)), ...list.filter((c) => c.iteration >= iteration)].map((c) => c.ref);
  return {
    ref: checkpointRef(workflowId, iteration),
    parent: older.at(-1)?.commit ?? null,
    message:
      `vigil checkpoint: run ${workflowId.slice(0, 500)}, iteration ${iteration}\n\nThe working tree Vigil inspected after ` +
      `iteration ${iteration} (\`vigil checkpoints ${workflowId.slice(0, 500)}\`).\n`,
    prune: prune.filter((r) => r !== checkpointRef(workflowId, iteration)),
  };
}

/** The list once `record` exists: older records kept up to the bound, none at or after its iteration. */
export function addCheckpoint(list: readonly CheckpointRecord[], record: CheckpointRecord, kept: number): CheckpointRecord[] {
  const older = list.filter((c) => c.iteration < record.iteration);
  return [...older.slice(Math.max(older.length - Math.max(kept - 1, 0), 0)), record];
}

/** What a rewind to this state restores (see RewindSnapshotSchema). */
export function snapshotOf(state: RunState): RewindSnapshot {
  const ladder = state.ladder
    ? {
        level: state.ladder.level,
        failuresAtLevel: state.ladder.failuresAtLevel,
        successStreak: state.ladder.successStreak,
        pinnedHigh: state.ladder.pinnedHigh,
        humanEscalated: state.ladder.humanEscalated,
      }
    : null;
  return {
    iteration: state.iteration,
    consecutiveFailures: state.consecutiveFailures,
    convergence: { ...state.convergence, recentHashes: [...state.convergence.recentHashes] },
    councilRounds: state.council.rounds,
    uncertainty: { ...state.uncertainty, ring: [...state.uncertainty.ring], lastProxies: { ...state.uncertainty.lastProxies } },
    ladder,
    gateTracks: { ...state.gates.tracks },
    gatesLastTree: state.gates.lastTree,
    reviewRounds: state.gates.reviewRounds,
    lastTests: state.lastTests,
    lastEvidence: state.lastEvidence,
    lastCompletion: state.lastCompletion,
    driftReports: state.driftReports,
  };
}

/** The tests on a checkpoint's tree and the council's verdict at its iteration, as the state knows them. */
function judged(c: CheckpointRecord, state: RunState): Pick<CheckpointRecord, 'tests' | 'verdict'> {
  const t = state.lastTests;
  const tests = t && t.treeHash === c.tree ? (t.verdict ?? (t.passed ? 'pass' : 'fail')) : c.tests;
  const verdict = state.council.verdicts.filter((v) => v.iteration === c.iteration).at(-1)?.result ?? c.verdict;
  return { tests, verdict };
}

/**
 * Before the next iteration starts: the checkpoint of the iteration just over gets the state after
 * it (and its tests and council verdict). Other records are left as they are.
 */
export function sealCheckpoint(list: readonly CheckpointRecord[], state: RunState): CheckpointRecord[] {
  const last = list.at(-1);
  if (!last || last.iteration !== state.iteration || last.snapshot !== null) return [...list];
  return [...list.slice(0, -1), { ...last, ...judged(last, state), snapshot: snapshotOf(state) }];
}

/** The checkpoints for status and `vigil checkpoints`: without snapshots; the latest judged from the live state. */
export function checkpointRows(state: RunState): Omit<CheckpointRecord, 'snapshot'>[] {
  return state.checkpoints.list.map((c) => {
    const { snapshot, ...row } = c;
    return snapshot === null && c.iteration === state.iteration ? { ...row, ...judged(c, state) } : row;
  });
}

/**
 * Why a rewind to iteration `to` cannot happen (null: it can). `current` is the run's iteration
 * counter (an iteration in progress counts).
 */
export function rewindProblem(cp: CheckpointsState, to: number, current: number, kept: number): string | null {
  if (kept <= 0) return 'this run keeps no checkpoints (knob checkpointsKept is 0), so it cannot be rewound';
  if (to > current) return `iteration ${to} has not happened yet: the run is at iteration ${current}`;
  const c = cp.list.find((x) => x.iteration === to);
  const have = cp.list.map((x) => x.iteration);
  const listed =
    have.length === 0
      ? 'the run has no checkpoints yet'
      : `checkpoints: ${have.length > 20 ? `${have.slice(0, 3).join(', ')}, …, ${have.slice(-16).join(', ')}` : have.join(', ')}`;
  if (!c) return `iteration ${to} has no checkpoint (it changed nothing, or its checkpoint was pruned: ${kept} are kept); ${listed}`;
  if (c.snapshot === null && c.iteration !== current) return `checkpoint ${to} has no saved state; ${listed}`;
  return null;
}

/** The refs of checkpoints after iteration `to` (their commits stay reachable from the saved ref). */
export function refsAfter(cp: CheckpointsState, to: number): string[] {
  return cp.list.filter((c) => c.iteration > to).map((c) => c.ref);
}

/** What the next prompt says about a rewind. */
export function rewindFindings(r: RewindRecord): string {
  return (
    `The run was rewound by ${r.by} from iteration ${r.from} to iteration ${r.to}${r.reason ? ` (${r.reason.slice(0, 500)})` : ''}. ` +
    `The working tree is again as it was after iteration ${r.to}; what came after was set aside.` +
    (r.directive ? ' Follow the directive below.' : '')
  );
}

/**
 * The run state after a rewind to checkpoint `target` (whose snapshot, or for the latest iteration
 * the live state, says what to restore): counters and small records from the snapshot; bounded
 * lists cut back to the target's iteration; what was spent, sent or asked for kept; an automatic
 * pause (an escalation of the abandoned iterations) lifted, a person's pause kept.
 */
export function rewindState(
  state: RunState,
  target: CheckpointRecord,
  record: RewindRecord,
  directive: { text: string; by: string; at: string } | null,
): RunState {
  const snap = target.snapshot ?? snapshotOf(state);
  const n = target.iteration;
  const upTo = <T extends { iteration: number }>(xs: readonly T[]): T[] => xs.filter((x) => x.iteration <= n);
  const checklist = state.gates.checklist
    ? {
        ...state.gates.checklist,
        status: Object.fromEntries(Object.entries(state.gates.checklist.status).filter(([, v]) => v.iteration <= n)),
      }
    : null;
  const deadTracked = state.deadLetter.tracked
    .map((t) => ({ ...t, iterations: t.iterations.filter((i) => i <= n) }))
    .filter((t) => t.iterations.length > 0)
    .map((t) => ({ ...t, count: Math.min(t.count, t.iterations.length) }));
  return {
    ...state,
    iteration: snap.iteration,
    consecutiveFailures: snap.consecutiveFailures,
    convergence: { ...snap.convergence, lastHash: target.tree },
    pendingDirectives: directive ? [...state.pendingDirectives, directive] : state.pendingDirectives,
    pause: state.pause && state.pause.by !== 'vigil' ? state.pause : null,
    lastCompletion: snap.lastCompletion,
    lastFindings: rewindFindings(record),
    recentIterations: upTo(state.recentIterations),
    council: { ...state.council, rounds: snap.councilRounds, verdicts: upTo(state.council.verdicts) },
    lastTests: snap.lastTests,
    lastEvidence: snap.lastEvidence,
    uncertainty: snap.uncertainty,
    ladder: snap.ladder ? { ...snap.ladder, changes: upTo(state.ladder?.changes ?? []) } : state.ladder,
    escalations: upTo(state.escalations),
    driftReports: snap.driftReports,
    contextClear: null,
    handoffContextPending: false,
    latestHandoff: state.latestHandoff && state.latestHandoff.iteration <= n ? state.latestHandoff : null,
    deadLetter: { tracked: deadTracked, entries: state.deadLetter.entries.filter((e) => (e.iterations.at(-1) ?? 0) <= n) },
    gates: {
      ...state.gates,
      tracks: snap.gateTracks,
      latest: upTo(state.gates.latest),
      lastTree: snap.gatesLastTree,
      reviews: upTo(state.gates.reviews),
      reviewRounds: snap.reviewRounds,
      checklist,
      lastRefusal: state.gates.lastRefusal && state.gates.lastRefusal.iteration <= n ? state.gates.lastRefusal : null,
    },
    // The run memory forgets the iterations set aside, and remembers that they were.
    memory: rewindMemory(state.memory, record),
    checkpoints: {
      list: state.checkpoints.list.filter((c) => c.iteration <= n),
      rewinds: [...state.checkpoints.rewinds, record].slice(-20),
      rewindCount: state.checkpoints.rewindCount + 1,
    },
  };
}
