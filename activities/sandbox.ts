/**
 * The agent sandbox (lib/sandbox.ts) as the agent, test and scratch-tree activities prepare it: a
 * call the sandbox refuses to run here (strict mode without bubblewrap) ends as an agent that
 * cannot run — a non-retryable agentNotRunnable failure, with the reason.
 */
import * as lib from '../lib/sandbox.js';
import { notRunnableFailure } from './agent-failure.js';

export { callSignalPath, discardCallSignals, sandboxReport, type PreparedSandbox } from '../lib/sandbox.js';

export function prepareSandbox(...a: Parameters<typeof lib.prepareSandbox>): lib.PreparedSandbox {
  try {
    return lib.prepareSandbox(...a);
  } catch (err) {
    return notRunnableFailure(err);
  }
}
