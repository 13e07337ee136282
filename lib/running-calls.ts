/**
 * The agent calls this worker process runs, by workflow run: where the run's word that it has
 * cancelled its call (workflows/running-call.ts, a workflow sink) reaches the call, without
 * waiting for Temporal's cancellation to arrive with the call's next heartbeat.
 */
import type { CallCancel } from '../schemas/messages.js';

export interface RunRef {
  workflowId: string;
  runId: string;
}

type Listener = (meant: CallCancel) => void;

const byRun = new Map<string, Set<Listener>>();
const keyOf = (run: RunRef): string => `${run.workflowId}\u0000${run.runId}`;

/** Hears the run's cancellations until the returned function is called. */
export function listenForRunCancel(run: RunRef, listener: Listener): () => void {
  const key = keyOf(run);
  let set = byRun.get(key);
  if (!set) byRun.set(key, (set = new Set()));
  set.add(listener);
  return () => {
    set.delete(listener);
    if (set.size === 0 && byRun.get(key) === set) byRun.delete(key);
  };
}

/** Tells the run's calls in this process what its cancellation means; how many heard it. */
export function cancelRunningCalls(run: RunRef, meant: CallCancel): number {
  const set = byRun.get(keyOf(run));
  if (!set) return 0;
  const listeners = [...set];
  for (const listener of listeners) listener(meant);
  return listeners.length;
}
