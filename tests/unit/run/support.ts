/**
 * A run without a server: the steps of workflows/run/ on a `Run` whose port (workflows/run/port.ts)
 * is this file's, not Temporal's. What stands in for Temporal, and only that:
 *
 * - the clock is a number the waits move: a wait with a timeout that its condition does not end
 *   lasts its whole timeout (a durable timer firing); a wait without one that is not over at once
 *   fails the test (the workflow would wait for a message the test never sends);
 * - activities: each call goes to the handler the test gave for it (`kind.name`); a call the test
 *   did not expect fails it, so a test that gives none shows the step schedules no activity;
 * - signals, search attributes, the UI details and the log are recorded for the test to read.
 *
 * The rest is the real code: the run, its steps, its rules.
 */
import type { SearchAttributePair } from '@temporalio/common';
import { defaultKnobs, type Knobs } from '../../../schemas/knobs.js';
import type { RunInput, RunState } from '../../../schemas/run.js';
import { initialRunState } from '../../../workflows/initial-state.js';
import type { Eras } from '../../../workflows/run/eras.js';
import type { Scope, WorkflowInfo, WorkflowPort } from '../../../workflows/run/port.js';
import type { Proxies } from '../../../workflows/run/proxies.js';
import { Run } from '../../../workflows/run/run.js';

export const START_MS = Date.parse('2026-01-01T00:00:00Z');

export interface Wait {
  timeoutMs: number | null;
  summary: string | null;
  ended: 'condition' | 'timer';
}

/** What the port saw. */
export interface Seen {
  waits: Wait[];
  activities: { name: string; args: unknown[] }[];
  signals: { workflowId: string; signal: string; args: unknown[] }[];
  upserts: SearchAttributePair[][];
  logs: { level: string; message: string; attrs?: Record<string, unknown> }[];
  details: string[];
  continuedAsNew: unknown[];
}

/** Thrown by the port's continueAsNew, as Temporal ends the execution there. */
export class ContinuedAsNew extends Error {
  constructor(readonly input: unknown) {
    super('continued as new');
  }
}

type Handler = (...args: unknown[]) => unknown;

export interface TestRun {
  run: Run;
  seen: Seen;
  clock: { ms: number };
}

export interface TestRunOptions {
  knobs?: Partial<Knobs>;
  state?: (s: RunState) => void;
  /** Activity handlers by `kind.name` (`checks.providerHealth`, `breakers.askProviderBreaker`, ...). */
  activities?: Record<string, Handler>;
  info?: Partial<WorkflowInfo>;
  eras?: Partial<Eras>;
  /** Runs while a wait without a timeout is asked, before its condition is read again (a message arriving). */
  duringWait?: (run: Run) => void;
  /** Fields of the run's input beyond the PRD, the repository and the knobs (`loopRules`, ...). */
  input?: Partial<RunInput>;
}

function testPort(seen: Seen, clock: { ms: number }, info: () => WorkflowInfo, duringWait: () => void): WorkflowPort {
  const log = (level: string) => (message: string, attrs?: Record<string, unknown>) => void seen.logs.push({ level, message, attrs });
  function until(fn: () => boolean): Promise<void>;
  function until(fn: () => boolean, timeoutMs: number, options?: { summary?: string }): Promise<boolean>;
  async function until(fn: () => boolean, timeoutMs?: number, options?: { summary?: string }): Promise<boolean | void> {
    const wait: Wait = { timeoutMs: timeoutMs ?? null, summary: options?.summary ?? null, ended: 'condition' };
    seen.waits.push(wait);
    if (fn()) return true;
    duringWait();
    if (fn()) return true;
    if (timeoutMs === undefined) throw new Error('the step waits for something no test sends (a condition without a timeout)');
    clock.ms += timeoutMs;
    wait.ended = 'timer';
    return fn();
  }
  const scope = (): Scope => ({ run: (fn) => fn(), cancel: () => undefined });
  return {
    until,
    allHandlersFinished: () => true,
    scope,
    nonCancellable: (fn) => fn(),
    cancelRequested: () => false,
    isCancellation: () => false,
    log: { debug: log('debug'), info: log('info'), warn: log('warn'), error: log('error') },
    now: () => clock.ms,
    random: () => 0.5,
    info,
    setCurrentDetails: (d) => void seen.details.push(d),
    upsertSearchAttributes: (u) => void seen.upserts.push(u),
    signal: async (workflowId, def, ...args) => {
      seen.signals.push({ workflowId, signal: typeof def === 'string' ? def : def.name, args });
    },
    startStream: () => Promise.reject(new Error('no stream is started in these tests')),
    continueAsNew: (input) => {
      seen.continuedAsNew.push(input);
      return Promise.reject(new ContinuedAsNew(input));
    },
  };
}

/** The activity proxies: `acts.kind.name.executeWithOptions(options, args)` calls the test's handler for `kind.name`. */
function testActivities(seen: Seen, handlers: Record<string, Handler>): Proxies {
  const kind = (k: string) =>
    new Proxy(
      {},
      {
        get: (_t, name) => {
          const key = `${k}.${String(name)}`;
          const call = async (args: unknown[]) => {
            seen.activities.push({ name: key, args });
            const h = handlers[key];
            if (!h) throw new Error(`unexpected activity ${key}`);
            return h(...args);
          };
          return { executeWithOptions: (_o: unknown, args: unknown[]) => call(args), ...{ call } };
        },
      },
    );
  return new Proxy({}, { get: (_t, k) => kind(String(k)) }) as Proxies;
}

/** A run at its first boundary: prepared (a run-start commit), default knobs unless the test says. */
export function testRun(opts: TestRunOptions = {}): TestRun {
  const seen: Seen = { waits: [], activities: [], signals: [], upserts: [], logs: [], details: [], continuedAsNew: [] };
  const clock = { ms: START_MS };
  const knobs: Knobs = { ...defaultKnobs(), ...opts.knobs };
  const state = initialRunState(START_MS);
  state.runStart = { sha: 'a'.repeat(40), treeHash: 't0', capturedAt: new Date(START_MS).toISOString() };
  state.convergence = { ...state.convergence, lastHash: 't0' };
  opts.state?.(state);
  const info = {
    workflowId: 'vigil-test',
    runId: 'run-1',
    firstExecutionRunId: 'run-1',
    historySize: 1000,
    historyLength: 10,
    continueAsNewSuggested: false,
    parent: undefined,
    typedSearchAttributes: { get: () => undefined },
    ...opts.info,
  } as unknown as WorkflowInfo;
  const eras: Eras = { upsertsSearchAttributes: true, onHost: {}, prFollowUps: true, ...opts.eras };
  const input = { prdPath: '/repo/PRD.md', prdTitle: 'PRD', repoPath: '/repo', knobs, ...opts.input };
  let run: Run | null = null;
  const port = testPort(
    seen,
    clock,
    () => info,
    () => run && opts.duringWait?.(run),
  );
  run = new Run(input, state, info, eras, testActivities(seen, opts.activities ?? {}), port);
  return { run, seen, clock };
}
