/**
 * Every activity the Vigil worker registers. Activities report facts; the workflow decides.
 */
export { runAgent } from './agent.js';
export { collectEvidence, writeTranscript } from './evidence.js';
export { inspectRepo, prepareRun } from './repo.js';
export { runTests } from './tests.js';
