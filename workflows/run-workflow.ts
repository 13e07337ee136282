/**
 * The `vigilRun` workflow: one durable run of a coding agent against a repository.
 *
 * This file reads in one screen: parse the input, decide the eras (workflows/run/eras.ts: the
 * patch markers every execution records first, in a fixed order), build the run (workflows/run/run.ts: the carried
 * state, the per-execution fields, the named waits, publish and journal), install the message
 * handlers (before the first `await`), then the loop. Each pass: the boundary (messages, budget,
 * caps, rollover), the provider, the agent call, what it changed, then the path of a good or a
 * failed iteration. Each step is a function of the run in its own module under workflows/run/
 * and answers a `Step` (workflows/run/run.ts): again, interrupted (round again), end, refused (the
 * run ends), or go with what the next step needs; the loop switches on it, every case named. The
 * steps reach the SDK through the run's port (workflows/run/port.ts, workflows/sdk-port.ts).
 * Judgement lives in `decisions/`; side effects in activities; the steps only orchestrate.
 */
import { ApplicationFailure, isCancellation, workflowInfo } from '@temporalio/workflow';
import { RunInputSchema, RunStateSchema, type Outcome, type RunInput, type RunState } from '../schemas/run.js';
import { unpackValue } from './carried-state.js';
import { missingPayloadKey } from '../rules/payload-key.js';
import { initialRunState } from './initial-state.js';
import { afterFailedIteration } from './run/after-failed.js';
import { afterGoodIteration } from './run/after-good.js';
import { atBoundary, begin, holdPreparation, prepareExecution } from './run/boundary.js';
import { callAgent } from './run/call-agent.js';
import { discoverPrd } from './run/discovery.js';
import { handleRepositoryTrouble, stopOutcome } from './run/ending.js';
import { decideEras } from './run/eras.js';
import { installHandlers } from './run/handlers.js';
import { observeIteration } from './run/observe.js';
import { afterAuthFailure, chooseProvider } from './run/provider.js';
import { makeProxies } from './run/proxies.js';
import { type End, type Go, nowMs, Run, type Step } from './run/run.js';
import { runStreams } from './run/streams.js';
import { temporalPort } from './sdk-port.js';

const initialState = (): RunState => initialRunState(nowMs());

/**
 * The state a continue-as-new carried in (null: the run starts here). A packed state that does not unpack to a valid one
 * fails the run, as a bad input does.
 */
function carriedState(input: RunInput): RunState | null {
  if (input.state) return RunStateSchema.parse(input.state);
  if (!input.packedState) return null;
  let unpacked: unknown;
  try {
    unpacked = unpackValue(input.packedState);
  } catch (err) {
    throw ApplicationFailure.nonRetryable(
      `invalid run input: packedState: ${err instanceof Error ? err.message : String(err)}`,
      'InvalidRunInput',
    );
  }
  const parsed = RunStateSchema.safeParse(unpacked);
  if (!parsed.success) {
    const issues = parsed.error.issues.map((i) => `${i.path.join('.') || '(the state)'}: ${i.message}`);
    throw ApplicationFailure.nonRetryable(
      `invalid run input: packedState is not a run state: ${issues.slice(0, 5).join('; ')}${issues.length > 5 ? `; and ${issues.length - 5} more` : ''}`,
      'InvalidRunInput',
    );
  }
  return parsed.data;
}

/** Before the loop, and again after repository trouble: the preparation of this execution, then a run's parallel streams. */
async function prepare(run: Run): Promise<End | Go<undefined>> {
  // A failed preparation's pause waits for a person before preparing again.
  const held = await holdPreparation(run);
  if (held.step === 'end') return held;
  // A run started from a goal: the PRD written first; a supervised run shows it and waits for a person.
  const found = await discoverPrd(run);
  if (found.step === 'end') return found;
  if (found.go) {
    const shown = await holdPreparation(run);
    if (shown.step === 'end') return shown;
  }
  const prepared = await prepareExecution(run);
  if (prepared.step === 'end') return prepared;
  // A run split into tasks: its parallel streams first, merged into its tree.
  return await runStreams(run);
}

/** One pass of the loop: the boundary, the provider, the agent call, what it changed, then the path of a good or a failed iteration. */
async function iteration(run: Run): Promise<Step> {
  // The boundary: messages, the budget, a forced review or a held claim, the caps, a fresh history.
  const boundary = await atBoundary(run);
  if (boundary.step !== 'go') return boundary;
  // The provider: its breaker lets the call out, or a failover provider takes over.
  const pick = await chooseProvider(run);
  if (pick.step !== 'go') return pick;
  // The iteration: the agent call.
  const call = await callAgent(run, pick.go);
  if (call.step !== 'go') return call;
  // What did the iteration change?
  const snap = await observeIteration(run, call.go);
  // An authentication failure pauses; success: completion check on a claim; failure: durable, interruptible backoff.
  const { result } = call.go;
  if (result.authError) return await afterAuthFailure(run, result);
  return result.exitCode !== 0 ? await afterFailedIteration(run, result) : await afterGoodIteration(run, result, snap);
}

const unreachable = (step: never): never => {
  throw new Error(`vigilRun: a step answered ${JSON.stringify(step)}`);
};

export async function vigilRun(rawInput: RunInput): Promise<Outcome> {
  // Ciphertext this worker cannot read: the task fails with what to do, and Temporal retries it
  // until a worker with the key takes it (rules/payload-key.ts). Not behind a patch:
  // a worker without the key replays a keyed run's history with no marker to find, and must not
  // take an old branch there; nothing of a run is decided or written on this path.
  const lacksKey = missingPayloadKey(rawInput);
  if (lacksKey !== null) throw new Error(lacksKey);
  const parsed = RunInputSchema.safeParse(rawInput);
  if (!parsed.success) {
    throw ApplicationFailure.nonRetryable(`invalid run input: ${parsed.error.message}`, 'InvalidRunInput');
  }
  const input = parsed.data;
  const state: RunState = carriedState(input) ?? initialState();
  const info = workflowInfo();
  // What the run hands its activities names the execution it started as, whatever the input said:
  // the admission is recorded for it, and every call must belong to it (activities/run-authorization.ts).
  if (input.authorization) input.authorization = { ...input.authorization, firstExecutionRunId: info.firstExecutionRunId };
  // Decided once per execution, before the first command (continue-as-new starts a fresh one).
  const eras = decideEras(input, rawInput);
  // ---- activity proxies, one per kind so a hung tool never shares a timeout with the agent ----
  const run = new Run(input, state, info, eras, makeProxies(input.knobs, eras), temporalPort());
  // ---- message handling: one implementation per message, reached by update and by signal ----
  installHandlers(run);

  try {
    const started = await begin(run);
    if (started.step === 'refused') return started.end;
    for (;;) {
      try {
        // A failed preparation's pause, the execution's preparation, a run's parallel streams.
        const ready = await prepare(run);
        if (ready.step === 'end') return ready.end;
        for (;;) {
          const next = await iteration(run);
          switch (next.step) {
            case 'again':
            case 'interrupted':
            case 'go':
              continue;
            case 'end':
            case 'refused':
              return next.end;
            default:
              return unreachable(next);
          }
        }
      } catch (err) {
        const ended = await handleRepositoryTrouble(run, err);
        if (ended) return ended;
      }
    }
  } catch (err) {
    // A Temporal cancellation request (UI "Cancel", `temporal workflow cancel`) is a stop.
    if (isCancellation(err)) {
      run.stopRequest ??= { reason: 'workflow cancellation requested', by: 'temporal', now: true };
      return await stopOutcome(run);
    }
    throw err;
  }
}
