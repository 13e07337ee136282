/**
 * `vigil checkpoints <id>` (a run's per-iteration checkpoints and rewinds, from its status query)
 * and `vigil rewind <id> --to N` (the `rewind` update; with `--fork`, a new run from checkpoint N
 * of a finished run, the tree restored to it first).
 */
import { existsSync } from 'node:fs';
import type { Client, Connection } from '@temporalio/client';
import { decodeFromPayloadsAtIndex } from '@temporalio/common/lib/internal-non-workflow/index.js';
import { createCheckpoint, restoreWorkingTree } from '../lib/checkpoints.js';
import { changedPaths, refTarget, workingTreeHash } from '../lib/git.js';
import { parseMessage } from '../schemas/messages.js';
import { RunInputSchema, type CheckpointRecord, type RunInput } from '../schemas/run.js';
import type { StatusSnapshot } from '../schemas/status.js';
import { runRefPrefix } from '../rules/checkpoints.js';
import { rewindUpdate, type MessageAck } from '../workflows/messages.js';
import { CliError, EXIT, searchAttributeHint, type Endpoint } from './connection.js';
import { idTakenMessage } from './run-id.js';
import { checkRepo, finishedError, noWorkerError, startRun, viewRun, type RunView } from './runs.js';
import { sdkRunApi } from './sdk-run-api.js';
import type { CheckpointsJson, RewindJson } from '../schemas/cli-output.js';

type Row = Omit<CheckpointRecord, 'snapshot'>;

const pad = (s: string, n: number): string => (s.length >= n ? s : s + ' '.repeat(n - s.length));

/** The run's snapshot, or the error a person can act on (no worker answered). */
function snapshotOf(view: RunView, ep: Endpoint): StatusSnapshot {
  if (view.snapshot) return view.snapshot;
  if (view.kind === 'running') throw noWorkerError(ep, view.workflowId, view.taskFailing);
  throw new CliError(
    `run "${view.workflowId}" has finished and no worker answered its status query; start one with \`vigil worker\` (a ` +
      `finished run is answered from its history)`,
    EXIT.unreachable,
  );
}

export function checkpointTable(snap: StatusSnapshot): string[] {
  const cp = snap.checkpoints;
  if (!cp) return [`run ${snap.workflowId} has no checkpoints (it started before Vigil took them)`];
  const lines = [
    `checkpoints of ${snap.workflowId} (${cp.list.length} kept of at most ${cp.kept}; refs under ${runRefPrefix(snap.workflowId)} in ${snap.repoPath})`,
  ];
  if (cp.list.length === 0)
    lines.push(
      cp.kept === 0
        ? '  none: checkpoints are off for this run (checkpointsKept 0)'
        : '  none yet: a checkpoint is taken after every iteration that changes the tree',
    );
  else
    lines.push(
      `  ${pad('iter', 5)} ${pad('time', 24)} ${pad('commit', 12)} ${pad('files', 12)} ${pad('exit', 4)} ${pad('tests', 12)} council`,
    );
  for (const c of cp.list) {
    lines.push(
      `  ${pad(String(c.iteration), 5)} ${pad(c.at, 24)} ${c.commit.slice(0, 12)} ${pad(`${c.filesChanged} (${c.filesSinceStart})`, 12)} ` +
        `${pad(String(c.exitCode), 4)} ${pad(c.tests ?? '-', 12)} ${c.verdict ?? '-'}`,
    );
  }
  if (cp.list.length) lines.push('  files: changed by the iteration (differing from the run start)');
  for (const r of cp.rewinds) {
    lines.push(
      `rewound by ${r.by} at ${r.at}: iteration ${r.from} → ` +
        `${r.to}${r.reason ? ` (${r.reason})` : ''}${r.interruptedAgent ? ', agent call cancelled' : ''}; the tree before: ` +
        `${r.savedRef} (${r.savedCommit.slice(0, 12)})`,
    );
  }
  return lines;
}

export async function checkpointsCommand(client: Client, ep: Endpoint, id: string, json: boolean, out: (l: string) => void): Promise<void> {
  const snap = snapshotOf(await viewRun(sdkRunApi(client), id), ep);
  if (json) {
    const answer: CheckpointsJson = {
      workflowId: snap.workflowId,
      iteration: snap.iteration,
      repoPath: snap.repoPath,
      refPrefix: runRefPrefix(snap.workflowId),
      ...(snap.checkpoints ?? { kept: 0, list: [], rewinds: [], lastTree: null }),
    };
    out(JSON.stringify(answer, null, 2));
  } else for (const l of checkpointTable(snap)) out(l);
}

export interface RewindOptions {
  to: number;
  reason?: string;
  directive?: string;
  force: boolean;
  fork: boolean;
  /** Workflow id of the forked run. */
  forkId?: string;
  /** With forkId of a run that ended: the fork takes that id on purpose (cli/run-id.ts). */
  replace?: boolean;
  by: string;
}

function checkpointFor(snap: StatusSnapshot, to: number): Row {
  const list = snap.checkpoints?.list ?? [];
  const c = list.find((x) => x.iteration === to);
  if (!c) {
    const have = list.map((x) => x.iteration).join(', ') || 'none';
    throw new CliError(
      `run "${snap.workflowId}": iteration ${to} has no checkpoint (it changed nothing, or its checkpoint was pruned); ` +
        `checkpoints: ${have} (\`vigil checkpoints ${snap.workflowId}\`)`,
      EXIT.usage,
    );
  }
  return c;
}

/** What a rewind or fork did: the lines to print, and the same as `--json` prints it. */
export interface RewindResult {
  lines: string[];
  json: RewindJson;
}

/** Rewinds a running run (the `rewind` update), or forks a finished one (`--fork`). Returns the lines to print. */
export async function rewindCommand(client: Client, connection: Connection, ep: Endpoint, id: string, o: RewindOptions): Promise<string[]> {
  return (await rewindRun(client, connection, ep, id, o)).lines;
}

/** As rewindCommand, with what was done as `vigil rewind --json` prints it. */
export async function rewindRun(client: Client, connection: Connection, ep: Endpoint, id: string, o: RewindOptions): Promise<RewindResult> {
  // Bad input is exit 2 before anything is asked of the run.
  const payload = {
    to: o.to,
    ...(o.reason ? { reason: o.reason } : {}),
    ...(o.directive !== undefined ? { directive: o.directive } : {}),
    ...(o.force ? { force: true } : {}),
    by: o.by,
  };
  const parsed = parseMessage('rewind', payload);
  if (!parsed.ok) throw new CliError(parsed.error, EXIT.usage);
  const view = await viewRun(sdkRunApi(client), id);
  if (o.fork) {
    if (view.kind === 'running')
      throw new CliError(
        `run "${id}" is still running in ${view.snapshot?.repoPath ?? 'its repository'}: rewind it (without --fork), or stop it first and then fork`,
        EXIT.usage,
      );
    return forkRun(client, connection, ep, view, o);
  }
  if (view.kind === 'finished') {
    const e = finishedError(view);
    throw new CliError(
      `${e.message.replace(/; there is nothing to change$/, '')}: a finished run cannot be rewound. Start a new run from its ` +
        `checkpoint ${o.to} instead: \`vigil rewind ${id} --to ${o.to} --fork\``,
      EXIT.notReached,
    );
  }
  const snap = snapshotOf(view, ep);
  if (!snap.checkpoints) throw new CliError(`run "${id}" started before Vigil took checkpoints: it cannot be rewound`, EXIT.usage);
  checkpointFor(snap, o.to);
  let ack: MessageAck;
  try {
    // The update answers once the rewind is done: after a running agent call was cancelled and
    // the tree restored, or at the end of a council round or gate in progress.
    ack = await client.withDeadline(Date.now() + 15 * 60_000, () =>
      client.workflow.getHandle(id).executeUpdate(rewindUpdate, { args: [parsed.value] }),
    );
  } catch (err) {
    const msg = err instanceof Error ? (err.cause instanceof Error ? err.cause.message : err.message) : String(err);
    if (/deadline|timed? ?out/i.test(msg))
      throw new CliError(
        `the rewind of "${id}" was not answered within 15 minutes; it happens at the run's next iteration boundary (see \`vigil status ${id}\`)`,
        EXIT.timeout,
      );
    throw new CliError(msg.startsWith('rewind') ? msg.replace(/^rewind: /, 'rewind rejected: ') : `rewind rejected: ${msg}`, EXIT.usage);
  }
  return {
    lines: [`${id}: ${ack.message}`, `  status     : vigil status ${id}   (iteration ${ack.iteration}, ${ack.status})`],
    json: {
      kind: 'rewound',
      workflowId: id,
      to: o.to,
      by: o.by,
      ack: { changed: ack.changed, message: ack.message, status: ack.status, iteration: ack.iteration, paused: ack.paused },
    },
  };
}

/** The input the run was started with (its first execution's, or the latest's without the carried state). */
async function originalInput(client: Client, id: string): Promise<RunInput> {
  const page = await client.workflowService.getWorkflowExecutionHistory({
    namespace: client.options.namespace,
    execution: { workflowId: id },
    maximumPageSize: 1,
  });
  const started = page.history?.events?.[0]?.workflowExecutionStartedEventAttributes;
  const raw = await decodeFromPayloadsAtIndex<unknown>(client.options.loadedDataConverter, 0, started?.input?.payloads);
  const parsed = RunInputSchema.safeParse(raw);
  if (!parsed.success) throw new CliError(`run "${id}": its input could not be read (${parsed.error.message.slice(0, 300)})`, EXIT.usage);
  const { state: _carried, packedState: _packed, ...input } = parsed.data;
  void _carried;
  void _packed;
  return input;
}

async function forkRun(
  client: Client,
  connection: Connection,
  ep: Endpoint,
  view: Extract<RunView, { kind: 'finished' }>,
  o: RewindOptions,
): Promise<RewindResult> {
  const id = view.workflowId;
  const snap = snapshotOf(view, ep);
  const target = checkpointFor(snap, o.to);
  const repoPath = checkRepo(snap.repoPath);
  if ((await refTarget(repoPath, `${target.commit}^{commit}`)) === null) {
    throw new CliError(
      `checkpoint ${o.to} (${target.commit.slice(0, 12)}) is not in ${repoPath} (was ${target.ref} deleted and the repository cleaned?)`,
      EXIT.usage,
    );
  }
  const input = await originalInput(client, id);
  if (!existsSync(input.prdPath)) throw new CliError(`the PRD of run "${id}" is gone: ${input.prdPath}`, EXIT.usage);
  const current = await workingTreeHash(repoPath);
  const lastTree = snap.checkpoints?.lastTree ?? null;
  if (lastTree && current !== lastTree && !o.force) {
    const files = await changedPaths(repoPath, lastTree, current);
    throw new CliError(
      `the working tree of ${repoPath} has changes made after run "${id}" ended (${files.length} file(s): ` +
        `${files.slice(0, 20).join(', ')}${files.length > 20 ? ', …' : ''}); nothing was changed. Look at them, then fork with ` +
        `--force to keep them in a checkpoint first, or undo them`,
      EXIT.usage,
    );
  }
  const workflowId =
    o.forkId ?? `${id.slice(0, 160)}-fork-${o.to}-${new Date().toISOString().replace(/[-:]/g, '').replace(/\..*$/, '').replace('T', '-')}`;
  const existing = await client.workflow
    .getHandle(workflowId)
    .describe()
    .catch(() => null);
  // A taken id is refused before the tree is touched: a start the server refused afterwards
  // would leave the repository rewound with no run to carry on from it.
  if (existing?.status.name === 'RUNNING')
    throw new CliError(`a run with id "${workflowId}" is already running; choose another --id`, EXIT.usage);
  if (existing && !o.replace)
    throw new CliError(
      idTakenMessage(workflowId, { status: existing.status.name, closed: existing.closeTime ? existing.closeTime.toISOString() : null }),
      EXIT.usage,
    );
  // The tree as it is now is kept first, so nothing is lost.
  const latest = snap.checkpoints?.list.at(-1) ?? null;
  const saved = `${runRefPrefix(id)}before-fork-${new Date().toISOString().replace(/[-:.]/g, '')}`;
  await createCheckpoint(
    repoPath,
    current,
    latest?.commit ?? null,
    saved,
    `vigil: the tree before a fork of run ${id} from iteration ${o.to}\n`,
  );
  const restored = await restoreWorkingTree(repoPath, target.tree, current);
  const { searchAttributes } = await startRun(client, connection, ep, {
    prd: { path: input.prdPath, title: input.prdTitle, bytes: 0 },
    repoPath,
    knobs: input.knobs,
    workflowId,
    ...(input.checklist ? { checklist: input.checklist } : {}),
    // The fork works in the same repository, so on the same host.
    ...(input.host ? { host: input.host } : {}),
    ...(o.directive !== undefined ? { directive: { directive: o.directive, by: o.by } } : {}),
    ...(o.replace ? { replace: true } : {}),
  });
  if (searchAttributes.missing.length)
    process.stderr.write(`${searchAttributeHint(searchAttributes.missing, ep, searchAttributes.refusal)}\n`);
  return {
    lines: [
      `forked run ${id} at iteration ${o.to}: started run ${workflowId}`,
      `  tree       : checkpoint ${target.commit.slice(0, 12)} (${restored} path(s) restored); the tree before is kept as ${saved}`,
      `  follow     : vigil watch ${workflowId}`,
    ],
    json: {
      kind: 'forked',
      workflowId: id,
      to: o.to,
      by: o.by,
      forkId: workflowId,
      commit: target.commit,
      restoredPaths: restored,
      savedRef: saved,
    },
  };
}
