/**
 * The workflow bundle's entry point: every workflow type the Vigil worker serves.
 */
export { vigilRun } from './run-workflow.js';
export { vigilProviderBreaker } from './provider-breaker-workflow.js';
export { vigilReadLog } from './read-log.js';
export { vigilAttempts } from './attempts-workflow.js';
