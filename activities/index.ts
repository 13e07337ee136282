/**
 * Every activity the Vigil worker registers. Activities report facts; the workflow decides.
 */
export { runAgent } from './agent.js';
export { collectEvidence, writeTranscript } from './evidence.js';
export { writeHandoff } from './handoff.js';
export { notify } from './notify.js';
export { inspectRepo, prepareRun } from './repo.js';
export { readAgentSignals } from './signals.js';
export { runTests } from './tests.js';
export { askProviderBreaker } from './provider-breaker.js';
