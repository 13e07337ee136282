/**
 * A status snapshot as the `status` query answers it, for tests of what people read from it (the
 * UI card, the console): a supervised run at iteration 3 of 25, three iterations recorded, every
 * field valid (parsed by the schema), with `over` laid on top.
 */
import type { IterationRecord } from '../../schemas/run.js';
import { StatusSnapshotSchema, type StatusSnapshot } from '../../schemas/status.js';

/** The time every recorded iteration carries. */
export const T = '2025-03-01T10:00:00.000Z';

export const iterationRecord = (over: Partial<IterationRecord> = {}): IterationRecord => ({
  iteration: 3,
  phase: 'VERIFY',
  tier: 'development',
  exitCode: 0,
  durationMs: 12_400,
  logPath: '/home/dev/todo-app/.vigil/logs/iteration-3.log',
  attempts: 1,
  claimed: false,
  changed: true,
  filesChangedSinceStart: 4,
  treeHash: 'tree3',
  at: T,
  ...over,
});

export const statusSnapshot = (over: Partial<StatusSnapshot> = {}): StatusSnapshot =>
  StatusSnapshotSchema.parse({
    workflowId: 'vigil-todo-app-1',
    runId: 'run-1',
    status: 'running',
    iteration: 3,
    maxIterations: 25,
    phase: 'VERIFY',
    tier: 'development',
    paused: false,
    pause: null,
    consecutiveFailures: 0,
    consecutiveNoChange: 0,
    recentHashes: ['tree1', 'tree2', 'tree3'],
    runStartSha: 'abc1234',
    pendingDirectives: 0,
    backoffUntil: null,
    agentRunning: false,
    lastIteration: iterationRecord(),
    recentIterations: [iterationRecord({ iteration: 1 }), iterationRecord({ iteration: 2 }), iterationRecord()],
    lastCompletion: null,
    outcome: null,
    invalidMessages: [],
    invalidMessageCount: 0,
    generations: 0,
    repoPath: '/home/dev/todo-app',
    prdPath: '/home/dev/todo-app/docs/PRD.md',
    doneSignals: 0,
    totalDoneSignals: 0,
    breaker: null,
    council: { enabled: true, rounds: 0, verdicts: [], forceReviewPending: false },
    lastEvidence: null,
    lastTests: null,
    autonomyMode: 'supervised',
    uncertainty: {
      enabled: true,
      noChangeMin: 4,
      consecutiveCoOccur: 0,
      escalatedEpisode: false,
      escalatedAtIteration: -1,
      ring: [],
      lastRoundIteration: -1,
      lastProxies: { p1: false, p2: false, p3: false },
    },
    ladder: null,
    complexity: null,
    escalations: [],
    notifications: { sent: 0, failed: 0, recentFailures: [] },
    driftReports: 0,
    latestHandoff: null,
    spend: { usd: 0, inputTokens: 0, outputTokens: 0, calls: 0 },
    budgetUsd: 0,
    ...over,
  } satisfies StatusSnapshot);
