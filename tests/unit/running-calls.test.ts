import { describe, expect, it } from 'vitest';
import { cancelRunningCalls, listenForRunCancel } from '../../lib/running-calls.js';
import type { CallCancel } from '../../workflows/messages.js';

describe("a run's word to the calls its worker runs", () => {
  const run = { workflowId: 'w1', runId: 'r1' };

  it('reaches every call of that run, and only while it listens', () => {
    const heard: string[] = [];
    const stopA = listenForRunCancel(run, (m) => heard.push(`a:${m}`));
    const stopB = listenForRunCancel(run, (m) => heard.push(`b:${m}`));
    expect(cancelRunningCalls(run, 'skipGates')).toBe(2);
    stopA();
    expect(cancelRunningCalls(run, 'kill')).toBe(1);
    stopB();
    expect(cancelRunningCalls(run, 'kill')).toBe(0);
    expect(heard).toEqual(['a:skipGates', 'b:skipGates', 'b:kill']);
  });

  it('does not reach the calls of another run, or of another execution of the same workflow', () => {
    const heard: CallCancel[] = [];
    const stop = listenForRunCancel(run, (m) => heard.push(m));
    expect(cancelRunningCalls({ workflowId: 'w2', runId: 'r1' }, 'kill')).toBe(0);
    expect(cancelRunningCalls({ workflowId: 'w1', runId: 'r2' }, 'kill')).toBe(0);
    expect(heard).toEqual([]);
    stop();
    stop(); // twice is harmless
    expect(cancelRunningCalls(run, 'kill')).toBe(0);
  });

  it('a listener that stops listening while it hears does not keep the others from hearing', () => {
    const heard: string[] = [];
    const stopA: () => void = listenForRunCancel(run, () => {
      heard.push('a');
      stopA();
    });
    const stopB = listenForRunCancel(run, () => heard.push('b'));
    expect(cancelRunningCalls(run, 'kill')).toBe(2);
    expect(heard).toEqual(['a', 'b']);
    stopB();
  });
});
