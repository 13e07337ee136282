/**
 * Every activity the Vigil worker registers. Activities report facts; the workflow decides.
 * Repository activities heartbeat while they work (see heartbeat.ts). Only what a run's workflow
 * of this release or the one before can schedule: the round activities call the evidence,
 * transcript and review steps in process (activities/rounds.ts).
 */
import { collectEvidence as collect } from './evidence.js';
import { writeHandoff as handoff } from './handoff.js';
import { heartbeating } from './heartbeat.js';
import { prepareRun as prepare } from './repo.js';
import { sealAcceptance as seal } from './acceptance.js';
import { rewindRepo as rewind } from './checkpoints.js';
import { inspectIteration as inspectAfter } from './iteration.js';
import { deliverRun as deliver, openPullRequest as pullRequest } from './deliver.js';
import * as streams from './worktree.js';
import { releaseRunFiles as release } from '../lib/sandbox.js';
import { judgeMemory as judge } from './memory-judge.js';
import * as attempts from './attempts.js';
import { compareAttempts as compareAttemptsRound } from './comparison.js';
import { updatePrBranch as prBranch } from './pr-branch.js';
import { replyOnPullRequest as prReply } from './pr-reply.js';
import { pollPullRequest as prPoll } from './pr-poll.js';

// The agent call, with the lean iteration's prompt references and inspection (activities/iteration.ts).
export { runAgent } from './iteration.js';
export { notify } from './notify.js';
export { runTests } from './tests.js';
export { runAcceptance } from './acceptance.js';
export { askProviderBreaker } from './provider-breaker.js';

export const prepareRun = heartbeating(prepare);
export const sealAcceptance = heartbeating(seal);
export const rewindRepo = heartbeating(rewind);
export const collectEvidence = heartbeating(collect);
export const writeHandoff = heartbeating(handoff);
export { providerHealth } from '../lib/provider-health.js';
export { runGates } from './gates/index.js';
export const inspectIteration = heartbeating(inspectAfter);
export const deliverRun = heartbeating(deliver);
export const openPullRequest = heartbeating(pullRequest);
// A followed pull request's base moved: the run branch rebased (or merged) onto it (activities/pr-branch.ts).
export const updatePrBranch = heartbeating(prBranch);
// The run's reply on its pull request after an iteration a review or a comment asked for (activities/pr-reply.ts).
export const replyOnPullRequest = heartbeating(prReply);
// The polling fallback of a followed pull request without a webhook (activities/pr-poll.ts).
export const pollPullRequest = heartbeating(prPoll);
export const streamBase = heartbeating(streams.streamBase);
export const addWorktree = heartbeating(streams.addWorktree);
export const removeWorktree = heartbeating(streams.removeWorktree);
export const mergeStream = heartbeating(streams.mergeStream);
export const applyStreams = heartbeating(streams.applyStreams);
export const recreateWorktree = heartbeating(streams.recreateWorktree);
export const releaseRunFiles = heartbeating(release);
// The memory judge as a run ends (activities/memory-judge.ts): it beats while the store consolidates; its agent call beats too.
export const judgeMemory = heartbeating(judge);
export { councilRound, reviewRound } from './rounds.js';
export { projectEvents } from '../lib/event-journal.js';
export { readRunHandoff, readRunLog } from './logs.js';
export { admitRun } from './run-authorization.js';
// Attempts from the start (workflows/attempts-workflow.ts): worktrees, facts, the winner onto the run's branch.
export const addAttempts = heartbeating(attempts.addAttempts);
export const describeAttempts = heartbeating(attempts.describeAttempts);
export const settleAttempts = heartbeating(attempts.settleAttempts);
// Attempts from a stuck point (workflows/run/fork.ts): the forks' base commit, the winner's tree into the run's.
export const forkBase = heartbeating(attempts.forkBase);
export const applyFork = heartbeating(attempts.applyFork);
// The comparison round of several approved attempts (activities/comparison.ts): the pack, then the council's picks.
export const compareAttempts = heartbeating(compareAttemptsRound);
