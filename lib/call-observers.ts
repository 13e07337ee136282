/**
 * Agent calls made in process by a round activity (a council member, a reviewer, a devil's
 * advocate: activities/rounds.ts) never pass through the worker's activity interceptors, which see
 * only the round. Whoever watches agent calls (the worker's metrics, its per-call log line, its
 * spans: workers/activity-observer.ts) wraps them here instead. With no wrapper registered a call
 * runs as it is.
 */
import type { AgentResult, RunAgentInput } from '../schemas/activities.js';

/** Runs `call` (the agent call for `input`) and returns its result; may time it, trace it, count it. */
export type AgentCallWrapper = (input: RunAgentInput, call: () => Promise<AgentResult>) => Promise<AgentResult>;

const wrappers = new Set<AgentCallWrapper>();

/** Registers a wrapper of every in-process agent call from now on; returns its removal. */
export function wrapInProcessAgentCalls(w: AgentCallWrapper): () => void {
  wrappers.add(w);
  return () => {
    wrappers.delete(w);
  };
}

/** `fn` with the registered wrappers around each call (the first registered outermost). */
export function observedAgentCall(fn: (input: RunAgentInput) => Promise<AgentResult>): (input: RunAgentInput) => Promise<AgentResult> {
  return (input) => {
    let call = (): Promise<AgentResult> => fn(input);
    for (const w of [...wrappers].reverse()) {
      const inner = call;
      call = () => w(input, inner);
    }
    return call();
  };
}
