/**
 * A completion check's refusal (what refused it, for the check's record and the builder's next
 * prompt) and the agent contract's streak over a check's reviewing answers: shared by the steps of
 * completion.ts and council.ts.
 *
 * Workflow code: deterministic, no I/O.
 */
import type { GateName } from '../../schemas/gates.js';
import type { CheckCause, ContractBreach, Outcome } from '../../schemas/run.js';
import { describeBreach, trackContract } from '../../rules/contract.js';
import { refusalMemory } from '../../rules/memory.js';
import { finish } from './ending.js';
import { notifyPeople } from './people.js';
import { type Run } from './run.js';

/** Refuses the check: what refused it, for its record, the builder's memory and status. */
export function refuse(
  run: Run,
  gates: GateName[],
  reason: string,
  cause: CheckCause = gates[0] === 'code_review' ? 'code_review' : gates[0] === 'checklist' ? 'checklist' : 'quality_gates',
): 'refused' {
  const { state } = run;
  run.judging.refused(cause, reason);
  state.gates.lastRefusal = { iteration: state.iteration, gates, reason: reason.slice(0, 500) };
  run.remember(refusalMemory(state.iteration, reason));
  run.sdk.log.info('completion refused by the quality gates', { iteration: state.iteration, gates: gates.join(',') });
  return 'refused';
}

/**
 * One check's reviewing answers against the agent contract. The second
 * check in a row with an answer in the wrong format stops the spending: supervised, a pause
 * that names the role, the missing line and the fix; perpetual, the end (contract_error).
 */
export async function keepContract(run: Run, breaches: readonly ContractBreach[]): Promise<Outcome | null> {
  const { state, knobs, info } = run;
  const t = trackContract(state.contract, breaches);
  state.contract = t.state;
  const first = breaches[0];
  if (!first) return null;
  run.sdk.log.warn('agent contract error', { role: first.role, who: first.who, answer: first.answer, inARow: t.state.consecutive });
  if (!t.stop) return null;
  const why = `contract error, ${t.state.consecutive} checks in a row: ${describeBreach(first)}`;
  if (knobs.autonomyMode === 'perpetual') return finish(run, 'contract_error', why);
  if (!state.pause) {
    state.pause = { reason: why.slice(0, 2000), by: 'vigil', at: run.nowIso() };
    await notifyPeople(
      run,
      'escalation',
      `Agent contract error (${first.role}): the run is paused`,
      why,
      'critical',
      { role: first.role, answer: first.answer, iteration: state.iteration },
      `${info.workflowId}:contract:${state.iteration}`,
    );
  }
  return null;
}
