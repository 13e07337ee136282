/**
 * The run's activity proxies, one per kind so a hung tool never shares a timeout with the agent
 * call, each typed to the activities it may call and each bound commented with what it bounds.
 *
 * Workflow code: deterministic, no I/O. Activities are imported for their types only.
 */
import { ActivityCancellationType, proxyActivities, proxyLocalActivities } from '@temporalio/workflow';
import type * as activities from '../../activities/index.js';
import { FAILURE_TYPES } from '../../schemas/activities.js';
import type { Knobs } from '../../schemas/knobs.js';
import { gateGroups } from '../../rules/gates.js';
import { INVALID_BREAKER_ASK } from '../provider-breaker-messages.js';
import type { Eras } from './eras.js';

type Acts = typeof activities;

export function makeProxies(knobs: Knobs, eras: Pick<Eras, 'onHost'>) {
  const { onHost } = eras;
  /** The longest gate pass a call may carry (its groups one after the other, the suite among them). */
  const carriedGatesSeconds = gateGroups(knobs).length * knobs.gateTimeoutSeconds + knobs.testTimeoutSeconds;
  const agent = proxyActivities<Pick<Acts, 'runAgent'>>({
    ...onHost,
    // The activity enforces the agent timeout itself (kills the tree, exit 124); this is a backstop
    // (with the gate pass the call may carry).
    startToCloseTimeout: (knobs.agentTimeoutSeconds + 120 + carriedGatesSeconds) * 1000,
    // Liveness bound: a worker that dies mid-call is detected this fast and the call retried.
    heartbeatTimeout: knobs.heartbeatTimeoutSeconds * 1000,
    // STOP --now waits until the agent's process tree is really gone.
    cancellationType: ActivityCancellationType.WAIT_CANCELLATION_COMPLETED,
    // Retried only on infrastructure loss (worker death, heartbeat timeout): an agent that exits
    // non-zero returns a result, it does not throw.
    // After the last attempt the iteration counts as failed (the workflow backs off and goes on).
    retry: { maximumAttempts: 5, initialInterval: '2s', nonRetryableErrorTypes: [FAILURE_TYPES.agentNotRunnable] },
  });
  const repo = proxyActivities<
    Pick<
      Acts,
      | 'prepareRun'
      | 'inspectIteration'
      | 'rewindRepo'
      | 'writeHandoff'
      | 'collectEvidence'
      | 'deliverRun'
      | 'openPullRequest'
      | 'updatePrBranch'
      | 'replyOnPullRequest'
      | 'pollPullRequest'
      | 'releaseRunFiles'
    >
  >({
    ...onHost,
    // git inspection of a working tree: seconds normally, minutes for huge repositories.
    startToCloseTimeout: '10m',
    // Liveness: the activities beat every second, so a dead worker costs seconds, not 10 minutes.
    heartbeatTimeout: Math.max(knobs.heartbeatTimeoutSeconds, 10) * 1000,
    retry: { maximumAttempts: 5, initialInterval: '1s', nonRetryableErrorTypes: [FAILURE_TYPES.notAGitRepository] },
  });
  const tests = proxyActivities<Pick<Acts, 'runTests' | 'runAcceptance' | 'sealAcceptance'>>({
    ...onHost,
    // The test command, bounded by testTimeoutSeconds inside the activity; this is the backstop.
    startToCloseTimeout: (knobs.testTimeoutSeconds + 120) * 1000,
    heartbeatTimeout: Math.max(knobs.heartbeatTimeoutSeconds, 10) * 1000,
    cancellationType: ActivityCancellationType.WAIT_CANCELLATION_COMPLETED,
    retry: { maximumAttempts: 3, initialInterval: '1s' },
  });

  const members = proxyActivities<Pick<Acts, 'runAgent'>>({
    ...onHost,
    // A member that does not answer within its timeout is killed by the activity and counts as
    // REJECT; this bound is the backstop.
    startToCloseTimeout: (knobs.councilMemberTimeoutSeconds + 60) * 1000,
    heartbeatTimeout: knobs.heartbeatTimeoutSeconds * 1000,
    cancellationType: ActivityCancellationType.WAIT_CANCELLATION_COMPLETED,
    // One re-run on infrastructure loss; after that the member's vote is lost (REJECT).
    retry: { maximumAttempts: 2, initialInterval: '2s', nonRetryableErrorTypes: [FAILURE_TYPES.agentNotRunnable] },
  });
  const rounds = proxyActivities<Pick<Acts, 'councilRound' | 'reviewRound'>>({
    ...onHost,
    // A round: its evidence or diff, its members in parallel, a re-run and a devil's advocate, each
    // call bounded by the member timeout inside the activity; this is the backstop.
    startToCloseTimeout: (3 * (knobs.councilMemberTimeoutSeconds + 60) + 600) * 1000,
    // The calls beat while they run, the git steps every second.
    heartbeatTimeout: Math.max(knobs.heartbeatTimeoutSeconds, 10) * 1000,
    cancellationType: ActivityCancellationType.WAIT_CANCELLATION_COMPLETED,
    // A retried round re-attaches to its calls (or collects their answers): no member runs twice.
    retry: { maximumAttempts: 3, initialInterval: '2s', nonRetryableErrorTypes: [FAILURE_TYPES.notAGitRepository] },
  });
  const checks = proxyActivities<Pick<Acts, 'providerHealth'>>({
    ...onHost,
    // Probing a CLI's --help: seconds, up to 30 s for slow ones.
    startToCloseTimeout: '90s',
    retry: { maximumAttempts: 2, initialInterval: '1s' },
  });
  const gateActs = proxyActivities<Pick<Acts, 'runGates'>>({
    ...onHost,
    // The activity bounds its tools by gateTimeoutSeconds (then the gate is inconclusive); this is a backstop.
    startToCloseTimeout: (knobs.gateTimeoutSeconds + 60) * 1000,
    heartbeatTimeout: Math.max(knobs.heartbeatTimeoutSeconds, 10) * 1000,
    cancellationType: ActivityCancellationType.WAIT_CANCELLATION_COMPLETED,
    retry: { maximumAttempts: 3, initialInterval: '1s' },
  });
  const store = proxyLocalActivities<Pick<Acts, 'projectEvents'>>({
    // A local activity: one marker event per projection. The store answers within seconds or
    // the projection waits for the next boundary (the events stay in the journal meanwhile).
    startToCloseTimeout: '15s',
    retry: { maximumAttempts: 2, initialInterval: '1s' },
  });
  const breakers = proxyActivities<Pick<Acts, 'askProviderBreaker'>>({
    // On the workflow's own queue, whatever the run's host: the activity starts the breaker's
    // workflow on the queue it runs on, and host queues serve activities only.
    // One update-with-start round trip to the provider's breaker workflow (a worker must pick up
    // the breaker's task too); a breaker that cannot be reached is no reason to stop the run.
    startToCloseTimeout: '30s',
    retry: { maximumAttempts: 5, initialInterval: '1s', maximumInterval: '10s', nonRetryableErrorTypes: [INVALID_BREAKER_ASK] },
  });
  const admission = proxyActivities<Pick<Acts, 'admitRun'>>({
    // On the run's host: the admission is recorded where its calls check it (a file store is per machine).
    ...onHost,
    // A signature check, a PRD read and one row (or file) of the admission record: seconds.
    startToCloseTimeout: '1m',
    // A record that cannot be reached (the event store down) is waited for, not skipped.
    retry: { initialInterval: '2s', maximumInterval: '1m' },
  });
  const people = proxyActivities<Pick<Acts, 'notify'>>({
    ...onHost,
    // Notifications. A notification retries inside the activity (4 attempts,
    // each bounded by notifyTimeoutSeconds); this bound keeps a dead channel from holding the run.
    startToCloseTimeout: (knobs.notifyTimeoutSeconds * 4 + 20) * 1000,
    // The activity heartbeats between attempts: a dead worker is noticed within one request's bound.
    heartbeatTimeout: (knobs.notifyTimeoutSeconds + 10) * 1000,
    retry: { maximumAttempts: 3, initialInterval: '2s' },
  });
  const streams = proxyActivities<
    Pick<
      Acts,
      | 'streamBase'
      | 'addWorktree'
      | 'removeWorktree'
      | 'mergeStream'
      | 'applyStreams'
      | 'recreateWorktree'
      | 'forkBase'
      | 'addAttempts'
      | 'describeAttempts'
      | 'settleAttempts'
      | 'applyFork'
    >
  >({
    ...onHost,
    // Parallel streams' and forks' git: a worktree added or removed, a merge-tree, a tree written out, K status queries:
    // seconds, minutes for huge repositories.
    startToCloseTimeout: '10m',
    // They beat every second: a dead worker costs seconds, and the retry finds what the first attempt did.
    heartbeatTimeout: Math.max(knobs.heartbeatTimeoutSeconds, 10) * 1000,
    retry: { maximumAttempts: 5, initialInterval: '1s', nonRetryableErrorTypes: [FAILURE_TYPES.notAGitRepository] },
  });
  const memory = proxyActivities<Pick<Acts, 'judgeMemory'>>({
    ...onHost,
    // The memory judge as the run ends: the store catching up on the run's consolidation (seconds),
    // then one reviewing call bounded by the member timeout inside the activity; this is the backstop.
    startToCloseTimeout: (knobs.councilMemberTimeoutSeconds + 180) * 1000,
    heartbeatTimeout: Math.max(knobs.heartbeatTimeoutSeconds, 10) * 1000,
    // One re-run on infrastructure loss; after that the memory stays as consolidation made it.
    retry: { maximumAttempts: 2, initialInterval: '2s', nonRetryableErrorTypes: [FAILURE_TYPES.agentNotRunnable] },
  });
  return { agent, repo, tests, members, rounds, checks, gateActs, store, breakers, people, admission, streams, memory };
}

export type Proxies = ReturnType<typeof makeProxies>;
