/**
 * Every activity the Vigil worker registers. Activities report facts; the workflow decides.
 * Repository activities heartbeat while they work (see heartbeat.ts).
 */
import { collectEvidence as collect, writeTranscript as transcript } from './evidence.js';
import { writeHandoff as handoff } from './handoff.js';
import { heartbeating } from './heartbeat.js';
import { inspectRepo as inspect, prepareRun as prepare } from './repo.js';
import { readAgentSignals as signals } from './signals.js';
import { rewindRepo as rewind } from './checkpoints.js';
import { inspectIteration as inspectAfter } from './iteration.js';
import { deliverRun as deliver, openPullRequest as pullRequest } from './deliver.js';
import * as streams from './worktree.js';
import { releaseRunFiles as release } from './sandbox.js';
import { judgeMemory as judge } from './memory-judge.js';
import { prepareReview as review, writeReviewReport as reviewReport } from './review.js';

// The agent call, with the lean iteration's prompt references and inspection (activities/iteration.ts).
export { runAgent } from './iteration.js';
export { notify } from './notify.js';
export { runTests } from './tests.js';
export { askProviderBreaker } from './provider-breaker.js';

export const prepareRun = heartbeating(prepare);
export const inspectRepo = heartbeating(inspect);
export const readAgentSignals = heartbeating(signals);
export const rewindRepo = heartbeating(rewind);
export const collectEvidence = heartbeating(collect);
export const writeTranscript = heartbeating(transcript);
export const writeHandoff = heartbeating(handoff);
export { providerHealth } from './provider-health.js';
export { runGate, runGates } from './gates/index.js';
export const inspectIteration = heartbeating(inspectAfter);
export const prepareReview = heartbeating(review);
export const writeReviewReport = heartbeating(reviewReport);
export const deliverRun = heartbeating(deliver);
export const openPullRequest = heartbeating(pullRequest);
export const streamBase = heartbeating(streams.streamBase);
export const addWorktree = heartbeating(streams.addWorktree);
export const removeWorktree = heartbeating(streams.removeWorktree);
export const mergeStream = heartbeating(streams.mergeStream);
export const applyStreams = heartbeating(streams.applyStreams);
export const releaseRunFiles = heartbeating(release);
// The memory judge as a run ends (activities/memory-judge.ts): it beats while the store consolidates; its agent call beats too.
export const judgeMemory = heartbeating(judge);
export { councilRound, reviewRound } from './rounds.js';
export { projectEvents } from './event-journal.js';
export { readRunHandoff, readRunLog } from './logs.js';
export { admitRun } from './run-authorization.js';
