/**
 * Ctrl+C while a command follows a run (`vigil start --wait`, `vigil watch`): the original's double
 * interrupt, for a run that lives apart from the terminal. The first pauses the run (at the next
 * boundary: the running agent call finishes first), the second stops it at once (the agent's
 * process tree killed), each said before it is sent; a third leaves the command at once, the run
 * as it is. The command itself goes on following, so its lines show the pause and the end.
 */
import type { Endpoint } from './endpoint.js';
import type { RunApi } from './run-api.js';
import { sendMessage } from './steer.js';
import { defaultActor } from './steer-commands.js';

/** What each Ctrl+C does, in order (then every further one leaves). */
export const CTRL_C_STEPS = ['pause', 'stop', 'leave'] as const;
export type CtrlCStep = (typeof CTRL_C_STEPS)[number];

/** The line said before a step is taken. */
export function ctrlCLine(step: CtrlCStep, workflowId: string): string {
  switch (step) {
    case 'pause':
      return `Ctrl+C: pausing ${workflowId} at its next boundary (vigil resume ${workflowId} goes on); Ctrl+C again stops it`;
    case 'stop':
      return `Ctrl+C again: stopping ${workflowId} now (its agent call is killed); Ctrl+C once more leaves without waiting`;
    case 'leave':
      return `Ctrl+C a third time: leaving; ${workflowId} stays as it is (vigil status ${workflowId})`;
  }
}

export interface CtrlCOptions {
  /** Where the lines go (stderr by default, so that `--json` output stays JSON). */
  say?: (line: string) => void;
  /** Leaves the command (default: exit 130, as a shell's interrupted command). */
  leave?: () => void;
  /** The process whose SIGINT is taken (tests pass their own emitter). */
  signals?: Pick<NodeJS.Process, 'on' | 'off'>;
}

/** Takes SIGINT for the run `workflowId` until the returned function is called (see the file comment). */
export function steerOnCtrlC(api: RunApi, ep: Endpoint, workflowId: string, o: CtrlCOptions = {}): () => void {
  const say = o.say ?? ((line: string) => process.stderr.write(`${line}\n`));
  const leave = o.leave ?? (() => process.exit(130));
  const signals = o.signals ?? process;
  const by = `${defaultActor()} (Ctrl+C)`;
  let count = 0;
  const onSignal = (): void => {
    const step = CTRL_C_STEPS[Math.min(count, CTRL_C_STEPS.length - 1)] as CtrlCStep;
    count += 1;
    say(ctrlCLine(step, workflowId));
    if (step === 'leave') {
      leave();
      return;
    }
    const payload = step === 'pause' ? { by, reason: 'Ctrl+C where the run was followed' } : { by, reason: 'Ctrl+C twice', now: true };
    sendMessage(api, ep, workflowId, step, payload).then(
      (ack) => {
        if (ack) say(`${workflowId}: ${ack.message}`);
      },
      (err: unknown) => say(`vigil: the ${step} was not delivered: ${err instanceof Error ? err.message : String(err)}`),
    );
  };
  signals.on('SIGINT', onSignal);
  return () => signals.off('SIGINT', onSignal);
}
