/**
 * A parallel stream's lost worktree: a stream works in a git worktree Vigil made for it
 * (workflows/run/streams.ts), so when that folder is deleted while the stream runs, "restore the
 * repository" is nothing a person can do. Its repository trouble pauses it with advice saying so
 * (rules/repository.ts), and the person's resume — the stream's own, or its run's,
 * which reaches the streams that wait — makes the worktree again from the stream's last
 * checkpoint (activities/worktree.ts `recreateWorktree`) before the stream goes on.
 *
 * Workflow code: deterministic, no I/O.
 */
import { handleRepositoryTrouble } from './ending.js';
import { markStreamRecovery } from './eras.js';
import { end, type End, type Run } from './run.js';

/**
 * After a pause of a stream ends with a resume: its worktree made again when it is gone (the
 * activity answers at once when it is there). Null to go on; the stream's end when its repository
 * trouble ends it (perpetual mode). A worktree that cannot be made (the run's repository itself
 * gone) pauses the stream again, with the same advice.
 */
export async function recoverStreamWorktree(run: Run): Promise<End | null> {
  const { input, state } = run;
  // Without its start commit (a worktree lost before the stream's preparation) there is nothing to make it from.
  if (!input.stream || !state.runStart || state.pause !== null || run.stopRequest !== null) return null;
  markStreamRecovery();
  const last = state.checkpoints.list.at(-1) ?? null;
  try {
    const r = await run.acts.streams.recreateWorktree.executeWithOptions({ summary: 'the stream’s worktree, made again if it is gone' }, [
      {
        worktree: input.repoPath,
        runId: input.stream.parentId,
        task: input.stream.task,
        startSha: state.runStart.sha ?? null,
        checkpoint: last ? { iteration: last.iteration, commit: last.commit, tree: last.tree } : null,
      },
    ]);
    if (!r.recreated) return null;
    const from = r.fromIteration === null ? 'the commit this stream started from' : `the checkpoint after iteration ${r.fromIteration}`;
    run.sdk.log.info('the stream’s worktree was made again', { task: input.stream.task, fromIteration: r.fromIteration });
    state.lastFindings =
      `This stream's worktree was deleted and Vigil made it again from ${from}: any work after that is gone. Check the files and carry on.`.slice(
        0,
        2000,
      );
    run.publish();
    return null;
  } catch (err) {
    const outcome = await handleRepositoryTrouble(run, err);
    return outcome ? end(outcome) : null;
  }
}
