/**
 * The messages a person sends to a run with attempts (`vigil pause|resume|stop|input|budget <run>`,
 * docs/attempts.md): each reaches every live attempt (a child `vigilRun`), as the same message
 * sent as a signal, and is answered with the acknowledgement every run's update answers. The budget
 * covers all the attempts: a new budget is what the ended attempts did not spend, shared by the
 * live ones (rules/attempts.ts `liveAttemptBudget`), each enforcing its share as any run does.
 * A stop also ends the run itself: no winner is delivered, and the attempts' worktrees go.
 *
 * Installed only for runs whose input says `forwarding` (every start from the release that added
 * it): a message sent to an older run found no handler (an update was refused, a signal buffered
 * unread), so its history replays unchanged; no patch is asked. `forceReview` and `waive` are
 * forwarded the same way, each only where the input's `forwardsAlso` names it (starts from the
 * release after): a run started with `forwarding` alone may hold such a signal, buffered unread,
 * which a handler would now turn into signals to its attempts, so they are keyed on a field of
 * their own. A forced review asks every live attempt's council to convene at its next boundary; a
 * waiver reaches every live attempt, and one that has no such item lists it among its invalid
 * messages (`vigil status <attempt>`), as a waiver signalled to any run does.
 *
 * Workflow code: deterministic, no I/O.
 */
import { condition, log, setHandler, type ChildWorkflowHandle } from '@temporalio/workflow';
import type { SignalDefinition, UpdateDefinition } from '@temporalio/common';
import { parseMessage, type MessageName } from '../schemas/messages.js';
import type { AttemptRow, AttemptsStatus } from '../schemas/attempts.js';
import type { RunStatus } from '../schemas/status.js';
import { liveAttemptBudget } from '../rules/attempts.js';
import {
  budgetSignal,
  budgetUpdate,
  forceReviewSignal,
  forceReviewUpdate,
  inputSignal,
  inputUpdate,
  pauseSignal,
  pauseUpdate,
  resumeSignal,
  resumeUpdate,
  stopSignal,
  stopUpdate,
  waiveSignal,
  waiveUpdate,
  type MessageAck,
} from './messages.js';
import type { vigilRun } from './run-workflow.js';

/** Forwarded only where the run's input names them (`forwardsAlso`). */
export type ForwardedAlso = 'forceReview' | 'waive';
type Forwarded = 'pause' | 'resume' | 'stop' | 'input' | 'budget' | ForwardedAlso;

/** What the run was told, read by the run's own steps (a stop ends it without a winner). */
export interface Steering {
  pause: { by: string; reason: string } | null;
  stop: { by: string; reason: string; now: boolean } | null;
}

export interface SteeringContext {
  status: AttemptsStatus;
  /** The attempts' handles once started, 1..K in order. */
  children: ChildWorkflowHandle<typeof vigilRun>[];
  /** The input's `forwardsAlso` (absent: none of them). */
  also?: readonly ForwardedAlso[];
  /** The run's knob: a forced review is refused where the council is off, as a single run refuses it. */
  councilEnabled: boolean;
  /** Told after a pause, resume or stop changed what the run says of itself (its search attributes). */
  onChange?: () => void;
}

const ORDER: readonly Forwarded[] = ['pause', 'resume', 'stop', 'input', 'budget'];
const UPDATES: Record<Forwarded, UpdateDefinition<MessageAck, [never]>> = {
  forceReview: forceReviewUpdate as UpdateDefinition<MessageAck, [never]>,
  waive: waiveUpdate as UpdateDefinition<MessageAck, [never]>,
  pause: pauseUpdate as UpdateDefinition<MessageAck, [never]>,
  resume: resumeUpdate as UpdateDefinition<MessageAck, [never]>,
  stop: stopUpdate as UpdateDefinition<MessageAck, [never]>,
  input: inputUpdate as UpdateDefinition<MessageAck, [never]>,
  budget: budgetUpdate as UpdateDefinition<MessageAck, [never]>,
};
const SIGNALS: Record<Forwarded, SignalDefinition<[unknown?]>> = {
  pause: pauseSignal,
  resume: resumeSignal,
  stop: stopSignal,
  input: inputSignal,
  budget: budgetSignal,
  forceReview: forceReviewSignal,
  waive: waiveSignal,
};

const list = (rows: readonly AttemptRow[]): string => rows.map((r) => r.n).join(', ');

/** Registers the forwarding messages of a run with attempts. Call before the first `await`. */
export function installSteering(ctx: SteeringContext): Steering {
  const { status } = ctx;
  const steering: Steering = { pause: null, stop: null };
  const live = (): AttemptRow[] => status.attempts.filter((a) => a.state === 'running');
  const runStatus = (): RunStatus =>
    status.phase === 'ended'
      ? 'finished'
      : steering.stop
        ? 'stopping'
        : steering.pause
          ? 'paused'
          : status.phase === 'starting'
            ? 'starting'
            : 'running';
  const ack = (changed: boolean, message: string): MessageAck => ({
    changed,
    message,
    status: runStatus(),
    iteration: 0,
    paused: steering.pause !== null,
  });
  const publish = (): void => {
    status.paused = steering.pause;
    status.stopping = steering.stop;
    ctx.onChange?.();
  };

  /** The message to every live attempt, as a signal; one that ended meanwhile is skipped. */
  const tell = async (name: Forwarded, payload: (row: AttemptRow) => Record<string, unknown>): Promise<AttemptRow[]> => {
    await condition(() => status.phase !== 'starting');
    const rows = live();
    await Promise.all(
      rows.map(async (r) =>
        ctx.children[r.n - 1]
          ?.signal(SIGNALS[name], payload(r))
          .catch((err: unknown) => log.warn('an attempt could not be told', { attempt: r.n, message: name, error: String(err) })),
      ),
    );
    return rows;
  };
  const said = (rows: AttemptRow[]): string => (rows.length ? `sent to attempt(s) ${list(rows)}` : 'no attempt is running');

  const apply: Record<Forwarded, (p: Record<string, unknown>, by: string) => Promise<MessageAck>> = {
    pause: async (p, by) => {
      if (steering.pause) return ack(false, `already paused by ${steering.pause.by}`);
      if (status.phase !== 'starting' && !live().length) return ack(false, `no attempt is running (${status.phase}): nothing to pause`);
      steering.pause = { by, reason: typeof p.reason === 'string' ? p.reason : '' };
      publish();
      const rows = await tell('pause', () => ({
        reason: `the run with attempts is paused: ${steering.pause?.reason ?? ''}`.slice(0, 2000),
        by,
      }));
      return ack(true, `paused: ${said(rows)}; no attempt starts a new iteration until resumed`);
    },
    resume: async (_p, by) => {
      const was = steering.pause;
      if (!was && status.phase !== 'starting' && !live().length) return ack(false, 'not paused');
      steering.pause = null;
      publish();
      // Every live attempt, also one paused on its own (its budget, a question for a person).
      const rows = await tell('resume', () => ({ by }));
      return ack(rows.length > 0 || was !== null, `resumed: ${said(rows)}`);
    },
    stop: async (p, by) => {
      const now = p.now === true;
      if (steering.stop && !(now && !steering.stop.now)) return ack(false, 'already stopping');
      steering.stop = { by, reason: typeof p.reason === 'string' ? p.reason : '', now };
      publish();
      const rows = await tell('stop', () => ({
        reason: `the run with attempts was stopped: ${steering.stop?.reason ?? ''}`.slice(0, 2000),
        by,
        now,
      }));
      return ack(
        true,
        rows.length
          ? `stopping: ${said(rows)}; the run ends stopped once they have, no winner delivered`
          : 'stopping: no winner is delivered; the attempts’ worktrees are removed',
      );
    },
    input: async (p, by) => {
      const rows = await tell('input', () => ({ ...p, by }));
      if (!rows.length) return ack(false, 'no attempt is running: the directive reached none');
      return ack(true, `directive queued for the next prompt of attempt(s) ${list(rows)}`);
    },
    budget: async (p, by) => {
      const usd = p.usd as number;
      status.budgetUsd = usd;
      await condition(() => status.phase !== 'starting');
      const ended = status.attempts.filter((a) => a.state === 'ended');
      const spent = ended.reduce((s, a) => s + (a.spendUsd ?? 0), 0);
      const share = liveAttemptBudget(usd, spent, live().length);
      for (const r of live()) r.budgetUsd = share;
      const rows = await tell('budget', () => ({ usd: share, by }));
      const each = usd === 0 ? 'no budget' : `$${share.toFixed(2)} each`;
      return ack(
        true,
        `budget set to $${usd.toFixed(2)} for all the attempts: ` +
          (rows.length ? `attempt(s) ${list(rows)} get ${each}` : 'no attempt is running') +
          (ended.length ? ` (the ended ones spent $${spent.toFixed(2)})` : ''),
      );
    },
    forceReview: async (p, by) => {
      const rows = await tell('forceReview', () => ({ ...p, by }));
      if (!rows.length) return ack(false, 'no attempt is running: no council to convene');
      return ack(true, `council review requested of attempt(s) ${list(rows)}: each convenes at its next iteration boundary`);
    },
    waive: async (p, by) => {
      const rows = await tell('waive', () => ({ ...p, by }));
      const item = String(p.item);
      if (!rows.length) return ack(false, `no attempt is running: the waiver of ${item} reached none`);
      return ack(
        true,
        `waiver of ${item} sent to attempt(s) ${list(rows)}; an attempt without that item lists it among its invalid ` +
          'messages (vigil status <attempt>)',
      );
    },
  };

  const refusal = (name: Forwarded): string | null => {
    if (status.phase === 'ended') return `${name}: the run has finished (${status.outcome?.status ?? 'ended'})`;
    if (status.phase === 'delivering') return `${name}: the run is delivering its winner`;
    if (steering.stop && name !== 'stop') return `${name}: the run is stopping`;
    if (name === 'input' && status.phase !== 'starting' && !live().length)
      return `input: no attempt of the run is running (${status.phase}); a directive would reach none`;
    if ((name === 'waive' || name === 'forceReview') && status.phase !== 'starting' && !live().length)
      return `${name}: no attempt of the run is running (${status.phase}); it would reach none`;
    if (name === 'forceReview' && !ctx.councilEnabled)
      return 'forceReview: the completion council is disabled for this run (knob councilEnabled)';
    return null;
  };

  for (const name of [...ORDER, ...(ctx.also ?? [])]) {
    const parse = (raw: unknown): Record<string, unknown> => {
      const r = parseMessage(name as MessageName, raw);
      if (!r.ok) throw new Error(r.error);
      return r.value as Record<string, unknown>;
    };
    const byOf = (p: Record<string, unknown>, fallback: string): string => (typeof p.by === 'string' ? p.by : fallback);
    setHandler(
      UPDATES[name],
      async (raw: unknown) => {
        const p = parse(raw);
        return apply[name](p, byOf(p, 'unknown'));
      },
      {
        validator: (raw: unknown) => {
          parse(raw);
          const why = refusal(name);
          if (why) throw new Error(why);
        },
        description: `${name} every live attempt of the run (validated; answers with an acknowledgement)`,
      },
    );
    setHandler(
      SIGNALS[name],
      async (raw?: unknown) => {
        const r = parseMessage(name as MessageName, raw);
        const why = r.ok ? refusal(name) : r.error;
        if (why || !r.ok) return log.warn('ignored a message to the run with attempts', { message: name, error: why });
        const p = r.value as Record<string, unknown>;
        await apply[name](p, byOf(p, 'signal'));
      },
      { description: `${name} every live attempt of the run (signal form)` },
    );
  }
  return steering;
}
