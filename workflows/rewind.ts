/**
 * The rewind step of the run workflow: the `rewind` update and signal, and the rewind itself,
 * performed by the loop at an iteration boundary.
 *
 * Why an in-workflow rewind and not Temporal's workflow reset: a reset to the workflow task before
 * iteration N+1's agent call would restore the state exactly, but the run must learn in that same
 * workflow task that it was rewound (restore the tree, take the directive) before it schedules the
 * agent again. The reset API's post-reset SignalWorkflow operation that would deliver that
 * atomically is not implemented by Temporal server 1.32 (the pinned CLI 1.9.1's dev server; its
 * `workflow reset` offers only `with-workflow-update-options`), and a signal sent after the reset
 * races the new run's first workflow task. A reset would also forget what must be kept (the spend,
 * a raised budget, the event journal's sequence, checklist waivers), lose signals or reapply them
 * all, and leave a running agent call of the terminated run to die on its own while the tree is
 * being restored. In-workflow, the rewind is one acknowledged update in the run's own history:
 * a running agent call is cancelled and awaited first, the repository refuses (changing nothing)
 * when a person changed the tree, and the state comes from the snapshot sealed with checkpoint N.
 */
import { ActivityFailure, ApplicationFailure, condition, setHandler, type ActivityInterfaceFor } from '@temporalio/workflow';
import type * as activities from '../activities/index.js';
import type { Knobs } from '../schemas/knobs.js';
import { parseMessage, type RewindPayload } from '../schemas/messages.js';
import type { RewindRecord, RunState } from '../schemas/run.js';
import type { RunEvent } from '../schemas/events.js';
import { refsAfter, rewindProblem, rewindState, savedRef } from '../rules/checkpoints.js';
import { directiveRefusal } from '../rules/directives.js';
import { messageEvent } from '../rules/journal.js';
import { rewindSignal, rewindUpdate, type MessageAck } from './messages.js';

interface Request {
  payload: RewindPayload;
  by: string;
  interruptedAgent: boolean;
  /** Sent as a signal: nobody waits for the answer, so a refusal is listed under invalidMessages. */
  viaSignal: boolean;
  /** Set by `perform`: the answer for the update's caller. */
  result: { ok: true; message: string } | { ok: false; error: string } | null;
}

export interface RewindDeps {
  workflowId: string;
  repoPath: string;
  knobs: Knobs;
  state: RunState;
  acts: Pick<ActivityInterfaceFor<typeof activities>, 'rewindRepo'>;
  nowIso: () => string;
  /** Null while the run may be rewound, else why not (finished, stopping). */
  closed: () => string | null;
  agentRunning: () => boolean;
  cancelAgent: () => void;
  ack: (changed: boolean, message: string) => MessageAck;
  recordEvent: (e: RunEvent) => void;
  recordInvalid: (name: string, error: string) => void;
  publish: () => void;
}

export interface Rewinder {
  /** A rewind waits for the loop: every wait of the loop ends on it. */
  pending: () => boolean;
  /** At an iteration boundary: performs the pending rewind (or refuses it), answering its caller. */
  perform: () => Promise<void>;
  /** The run ends: a rewind still waiting is refused. */
  abandon: (why: string) => void;
}

/** Registers the `rewind` update and signal; the loop calls `perform` at its boundary. */
export function installRewind(d: RewindDeps): Rewinder {
  let request: Request | null = null;

  const problem = (p: RewindPayload): string | null => {
    const closed = d.closed();
    if (closed) return closed;
    if (request) return `a rewind (to iteration ${request.payload.to}) is already under way`;
    const why = rewindProblem(d.state.checkpoints, p.to, d.state.iteration, d.knobs.checkpointsKept);
    if (why) return why;
    return p.directive ? directiveRefusal(d.state.pendingDirectives, p.directive) : null;
  };

  const accept = (p: RewindPayload, by: string, viaSignal: boolean): Request => {
    const r: Request = { payload: p, by, interruptedAgent: false, viaSignal, result: null };
    request = r;
    // A running agent call is cancelled (its process tree killed) before the tree is touched.
    if (d.agentRunning()) {
      r.interruptedAgent = true;
      d.cancelAgent();
    }
    d.publish();
    return r;
  };

  setHandler(
    rewindUpdate,
    async (raw: RewindPayload): Promise<MessageAck> => {
      const parsed = parseMessage('rewind', raw);
      if (!parsed.ok) throw ApplicationFailure.create({ message: parsed.error, nonRetryable: true });
      const r = accept(parsed.value, parsed.value.by ?? 'unknown', false);
      await condition(() => r.result !== null);
      const result = r.result as NonNullable<Request['result']>;
      if (!result.ok) throw ApplicationFailure.create({ message: `rewind: ${result.error}`, nonRetryable: true });
      return d.ack(true, result.message);
    },
    {
      validator: (raw: RewindPayload) => {
        const parsed = parseMessage('rewind', raw);
        if (!parsed.ok) throw new Error(parsed.error);
        const why = problem(parsed.value);
        if (why) throw new Error(`rewind: ${why}`);
      },
      description: 'rewind the run to just after an iteration with a checkpoint (answers once done)',
    },
  );
  setHandler(
    rewindSignal,
    (raw?: unknown) => {
      const parsed = parseMessage('rewind', raw);
      if (!parsed.ok) return d.recordInvalid('rewind', parsed.error);
      const why = problem(parsed.value);
      if (why) return d.recordInvalid('rewind', `rewind: ${why}`);
      accept(parsed.value, parsed.value.by ?? 'signal', true);
    },
    { description: 'rewind the run (signal form; a refusal is listed under invalidMessages)' },
  );

  const answer = (r: Request, result: NonNullable<Request['result']>): void => {
    r.result = result;
    if (!result.ok && r.viaSignal) d.recordInvalid('rewind', `rewind: ${result.error}`);
    d.recordEvent(messageEvent('rewind', { ...r.payload }, r.by, result.ok, result.ok ? undefined : result.error));
    request = null;
  };

  const perform = async (): Promise<void> => {
    const r = request;
    if (!r) return;
    const p = r.payload;
    const s = d.state;
    // The state may have moved on since the request was accepted (a pruned checkpoint).
    const why = d.closed() ?? rewindProblem(s.checkpoints, p.to, s.iteration, d.knobs.checkpointsKept);
    const target = s.checkpoints.list.find((c) => c.iteration === p.to);
    if (why || !target) return answer(r, { ok: false, error: why ?? `iteration ${p.to} has no checkpoint` });
    const n = s.checkpoints.rewindCount + 1;
    const saveAs = savedRef(d.workflowId, n);
    const lastTree = s.convergence.lastHash ?? target.tree;
    let out;
    try {
      out = await d.acts.rewindRepo.executeWithOptions(
        { summary: `rewind to iteration ${p.to} (from ${s.iteration}), requested by ${r.by}` },
        [
          {
            repoPath: d.repoPath,
            lastTree,
            target: { commit: target.commit, tree: target.tree },
            latest: s.checkpoints.list.at(-1)?.commit ?? null,
            savedRef: saveAs,
            message:
              `vigil: the tree before rewind ${n} of run ${d.workflowId.slice(0, 500)} (from iteration ${s.iteration} to ` +
              `${p.to})\n\nRequested by ${r.by.slice(0, 200)}${p.reason ? `: ${p.reason.slice(0, 1000)}` : ''}.\n`,
            // An interrupted agent call's partial work is the run's own, not a person's: it is saved, not refused.
            force: p.force === true || r.interruptedAgent,
            drop: refsAfter(s.checkpoints, p.to),
          },
        ],
      );
    } catch (err) {
      if (!(err instanceof ActivityFailure)) throw err;
      return answer(r, { ok: false, error: `the repository could not be rewound: ${(err.cause?.message ?? err.message).slice(0, 500)}` });
    }
    if (!out.ok) {
      const more = out.count > out.files.length ? ` and ${out.count - out.files.length} more` : '';
      return answer(r, {
        ok: false,
        error:
          `the working tree has changes made since the run last inspected it (${out.count} file(s): ` +
          `${out.files.join(', ')}${more}); nothing was changed. Look at them, then rewind with --force to keep them in a ` +
          `checkpoint first, or undo them`,
      });
    }
    const at = d.nowIso();
    const record: RewindRecord = {
      from: s.iteration,
      to: p.to,
      by: r.by,
      reason: p.reason ?? '',
      directive: p.directive ? p.directive.slice(0, 300) : null,
      checkpoint: target.commit,
      savedRef: saveAs,
      savedCommit: out.savedCommit,
      interruptedAgent: r.interruptedAgent,
      at,
    };
    Object.assign(s, rewindState(s, target, record, p.directive ? { text: p.directive, by: r.by, at } : null));
    answer(r, {
      ok: true,
      message:
        `rewound from iteration ${record.from} to iteration ${p.to}: the working tree is checkpoint ` +
        `${target.commit.slice(0, 12)} again (${out.changedFiles} path(s) restored); the tree before the rewind is kept as ` +
        `${saveAs} (${out.savedCommit.slice(0, 12)})${p.directive ? '; the directive goes into the next prompt' : ''}`,
    });
    d.publish();
  };

  return {
    pending: () => request !== null,
    perform,
    abandon: (why: string) => {
      if (request) answer(request, { ok: false, error: why });
    },
  };
}
