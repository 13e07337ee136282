/**
 * `vigil try [PRD] [--repo DIR]`: the first run on one's own repository, before any LLM. It runs
 * the scripted agent (examples/agents/scripted-agent, no LLM) with the knobs a `vigil start` here
 * would use — the defaults, unless the person set some — with their quality gates, code review,
 * PRD checklist, council and the sandbox, on a scratch git worktree of the person's HEAD
 * (cli/try-setup.ts). It prints every gate, review and council step as `vigil demo` does, checks
 * that the person's branch, index and files are as they were, and ends with what to change to put
 * a real agent in the scripted one's place. The run delivers, as any run, on the branch
 * `vigil/<run id>`. A run that pauses for a person (an escalation) is stopped, with why: a
 * rehearsal waits for nobody. It starts what it needs as the demo does (cli/local-stack.ts).
 */
import path from 'node:path';
import type { Knobs } from '../schemas/knobs.js';
import type { StatusSnapshot } from '../schemas/status.js';
import { packageRoot, vigilHome } from '../lib/paths.js';
import { sandboxLine } from '../rules/ui.js';
import type { ResolvedKnobs } from './config.js';
import { runUrl, searchAttributeHint, type Endpoint } from './connection.js';
import { followRun, type FollowResult } from './follow.js';
import { startLocalStack, type LocalStack } from './local-stack.js';
import { readPrd, type Prd } from './prd.js';
import type { ServerFlags } from './processes.js';
import { startRun } from './runs.js';
import { sdkRunApi } from './sdk-run-api.js';
import { sendMessage } from './steer.js';
import type { StoreFlags } from './store.js';
import { checkoutChanges, discardTry, gitOut, planTry, prepareTry, readCheckout, type Checkout, type TryPlan } from './try-setup.js';

const say = (line: string): void => {
  process.stdout.write(`${line}\n`);
};

export interface TryOptions extends ServerFlags, StoreFlags {
  repo?: string;
}

/**
 * vigil try's own values, each only where the person set nothing (flag, environment, config file):
 * a shorter iteration cap and backoff, so that a rehearsal the repository refuses ends in minutes
 * with the reason instead of in hours. The script claims completion at iteration 3, the first the
 * council may convene at (`councilMinIterations` 3).
 */
export const TRY_OWN_DEFAULTS = { maxIterations: 8, baseWaitSeconds: 2, backoffJitterSeconds: 0 } as const satisfies Partial<Knobs>;

/** The rehearsal's knobs and what it changed in them, in words for its header. */
export interface TryKnobs {
  knobs: Knobs;
  /** `maxIterations=8`, ...: vigil try's own values (where the person set nothing). */
  own: string[];
  /** The agent (or delivery) the person configured that the rehearsal does not use; empty when none. */
  replaced: string[];
}

/**
 * The knobs a `vigil start` here would use (`resolved`), with the scripted agent as the agent
 * (`scenario`: its file, as the agent's command line names it), its delivery on `vigil/<run id>`,
 * and vigil try's own values where the person set nothing.
 */
export function tryKnobs(resolved: ResolvedKnobs, scenario: string, root = packageRoot()): TryKnobs {
  const { knobs, sources } = resolved;
  const own: string[] = [];
  const shortened: Partial<Knobs> = {};
  for (const [k, v] of Object.entries(TRY_OWN_DEFAULTS) as [keyof typeof TRY_OWN_DEFAULTS, number][]) {
    if (sources[k].source !== 'default') continue;
    shortened[k] = v;
    own.push(`${k}=${v}`);
  }
  const replaced: string[] = [];
  if (sources.provider.source !== 'default' && knobs.provider !== 'command')
    replaced.push(`provider ${knobs.provider} (${sources.provider.detail})`);
  if (sources.agentCommand.source !== 'default' && knobs.agentCommand.length > 0)
    replaced.push(`agentCommand ${JSON.stringify(knobs.agentCommand.join(' ').slice(0, 80))} (${sources.agentCommand.detail})`);
  if (knobs.deliverToCurrent) replaced.push(`deliverToCurrent (${sources.deliverToCurrent.detail}): it delivers on vigil/<run id>`);
  return {
    knobs: {
      ...knobs,
      ...shortened,
      provider: 'command',
      agentCommand: [path.join(root, 'examples/agents/scripted-agent/scripted-agent'), '--scenario', scenario],
      deliverToCurrent: false,
    },
    own,
    replaced,
  };
}

function prdAdvice(root: string): string[] {
  return [
    'No PRD given: this rehearsal runs on a SAMPLE PRD that vigil try writes (it says so at its top).',
    'A PRD of your own is a Markdown file: a title line (`# What to build`), then the requirements,',
    'each one a thing a reviewer can check ("src/slugify.js exports slugify(text)"), with how to check',
    `it where that is not plain. An example: ${path.join(root, 'examples/demo/PRD.md')}.`,
    'Then `vigil try PRD.md` checks that it reads, and `vigil start PRD.md` builds it (see the end).',
    '',
  ];
}

function headLine(c: Checkout): string {
  return `${c.branch ? `branch ${c.branch}` : 'a detached HEAD'} at ${c.head.slice(0, 12)}`;
}

function header(plan: TryPlan, checkout: Checkout, own: Prd | null, knobs: TryKnobs, endpoint: Endpoint): string[] {
  return [
    '',
    `Started run ${plan.runId}: a rehearsal by the scripted agent (no LLM)`,
    `  your repository: ${checkout.top} (${headLine(checkout)}), left as it is`,
    `  worktree   : ${plan.worktree} (a scratch git worktree at your HEAD, where the run works)`,
    ...(checkout.changes > 0
      ? [`  note       : your ${checkout.changes} uncommitted change(s) are not in it: the rehearsal starts from HEAD`]
      : []),
    ...(plan.readmeAdded ? ['  note       : no README here: the scripted agent writes one (the documentation gate asks for it)'] : []),
    `  PRD        : ${plan.prdFile} (${own ? `the rehearsal's; yours, ${own.path}, reads fine` : 'a SAMPLE PRD written by vigil try'})`,
    `  knobs      : those \`vigil start\` would use here${knobs.own.length ? `, but ${knobs.own.join(', ')} (vigil try's; --set changes them)` : ''}`,
    ...knobs.replaced.map((r) => `  not used   : ${r}: the rehearsal's agent is the scripted one`),
    `  delivers on: the branch ${plan.branch}, if approved`,
    `  history    : ${runUrl(endpoint, plan.runId)}`,
    `  follow it  : vigil watch ${plan.runId}`,
    '',
  ];
}

/** The commit the run delivered on its branch, or null when there is none. */
function deliveredCommit(plan: TryPlan, checkout: Checkout): string | null {
  try {
    return gitOut(checkout.top, ['rev-parse', '--verify', '-q', `refs/heads/${plan.branch}^{commit}`]).trim() || null;
  } catch {
    return null;
  }
}

/** The branch the run delivered, as `git diff --stat` shows it against the person's HEAD. */
function deliveredLines(plan: TryPlan, checkout: Checkout, commit: string | null): string[] {
  if (!commit) return [`Nothing was delivered on ${plan.branch}.`];
  const stat = gitOut(checkout.top, ['diff', '--stat', checkout.head, commit]).trimEnd().split('\n');
  return [`Delivered on the branch ${plan.branch} (${commit.slice(0, 12)}), against your HEAD:`, ...stat.map((l) => `  ${l}`)];
}

function nextSteps(plan: TryPlan, checkout: Checkout, own: Prd | null, delivered: boolean): string[] {
  const prd = own ? own.path : 'PRD.md';
  return [
    '',
    "Next, a real agent in the scripted one's place (docs/first-run.md, docs/agents-and-providers.md):",
    ...(own ? [] : ['  0. write your PRD (above), and `vigil try PRD.md` to check it reads']),
    '  1. check the agent CLI, its flags and credentials (claude, codex, gemini, aider or opencode):',
    '       vigil doctor --provider claude',
    '     or your own agent command, against every role of docs/agent-contract.md:',
    '       vigil doctor --agent-command "my-agent --flag"',
    '  2. a server and a worker, left running:   vigil up',
    '  3. in another terminal, the run (on your current branch; it delivers on vigil/<run id>):',
    `       vigil start ${prd} --repo ${checkout.top} --provider claude      (or --agent-command "my-agent --flag")`,
    '',
    'To remove the rehearsal:',
    `  git -C ${checkout.top} worktree remove --force ${plan.worktree}`,
    ...(delivered ? [`  git -C ${checkout.top} branch -D ${plan.branch}`] : []),
  ];
}

/** How a rehearsal ended, as outcomeLines reads it. */
export interface TryEnd {
  snapshot: Pick<StatusSnapshot, 'iteration' | 'outcome' | 'recentIterations'> | null;
  /** Temporal's status of the workflow (`COMPLETED`, `TERMINATED`, ...). */
  temporalStatus: string;
  /** Why the run paused, when vigil try stopped it for that; else null. */
  pause: string | null;
}

/**
 * What the end of the rehearsal says: approved; or that the scripted agent's own call failed (which
 * the repository should not cause: its log); or that the repository refused it, and what to do.
 */
export function outcomeLines(end: TryEnd): string[] {
  const snap = end.snapshot;
  const iterations = snap?.iteration ?? 0;
  if (snap?.outcome?.status === 'council_approved')
    return [`The rehearsal was approved after ${iterations} iteration(s): every gate, the review, the checklist and the council passed.`];
  const lines = end.pause
    ? [
        `The run paused for a person at iteration ${iterations}: ${end.pause}`,
        'A real run would wait there for you (`vigil resume` once it is mended); vigil try ended it, since a rehearsal waits for nobody.',
      ]
    : [
        `The rehearsal ended without approval after ${iterations} iteration(s): ` +
          (snap?.outcome ? `${snap.outcome.status} — ${snap.outcome.reason}` : `workflow ${end.temporalStatus.toLowerCase()}`),
      ];
  const failed = snap?.recentIterations.find((r) => r.exitCode !== 0);
  if (failed) {
    lines.push(
      `The scripted agent's own call failed at iteration ${failed.iteration} (exit ${failed.exitCode}), which no repository should cause`,
      `(a problem of this machine or of Vigil, such as the sandbox): its log says why: ${failed.logPath}`,
    );
    return lines;
  }
  lines.push(
    'The scripted agent did its part; what refused it is your repository with these knobs (the lines above say what):',
    'a real run would meet the same refusal. Mend it (or set the knob a line names: `vigil try --set key=value`), and try again.',
  );
  return lines;
}

function resultLines(result: FollowResult, pause: string | null, plan: TryPlan, before: Checkout, own: Prd | null): string[] {
  const snap = result.view.snapshot;
  const temporalStatus = result.view.kind === 'finished' ? result.view.temporalStatus : 'RUNNING';
  const lines = ['', ...outcomeLines({ snapshot: snap, temporalStatus, pause })];
  if (snap?.sandbox) lines.push(`Agents: ${sandboxLine(snap.sandbox, snap.sandbox.mode)}`);
  const commit = deliveredCommit(plan, before);
  lines.push(...deliveredLines(plan, before, commit));
  const changed = checkoutChanges(before, readCheckout(before.top));
  lines.push(
    changed.length === 0
      ? `Your checkout is as it was: ${headLine(before)}, the same index and working tree.`
      : `WARNING: your checkout changed during the rehearsal: ${changed.join('; ')}.`,
  );
  lines.push(...nextSteps(plan, before, own, commit !== null));
  return lines;
}

/**
 * Follows the run until it ends. A run that pauses (an escalation to a person, or someone's
 * `vigil pause`) is stopped: the result, and why it paused (null when it did not).
 */
async function followToEnd(stack: LocalStack, runId: string): Promise<{ result: FollowResult; pause: string | null } | null> {
  const onLine = (l: string): void => say(`  ${l}`);
  const follow = (until: 'terminal' | 'paused'): Promise<FollowResult | null> =>
    Promise.race([followRun(stack.client, runId, { until, onLine }), stack.workerDone.then(() => null)]);
  const first = await follow('paused');
  if (!first || first.view.kind === 'finished') return first && { result: first, pause: null };
  const p = first.view.snapshot?.pause;
  const pause = p ? `paused by ${p.by}${p.reason ? `: ${p.reason}` : ''}` : 'paused';
  const reason = `vigil try ends the rehearsal: the run ${pause}`.slice(0, 2000);
  await sendMessage(sdkRunApi(stack.client), stack.endpoint, runId, 'stop', { reason, by: 'vigil try' });
  const last = await follow('terminal');
  return last && { result: last, pause };
}

/**
 * Runs the rehearsal. `resolved`: the knobs a `vigil start` here would use (flags, environment,
 * config file, defaults); vigil try puts the scripted agent in (tryKnobs).
 */
export async function tryCommand(ep: Endpoint, prdArg: string | undefined, opts: TryOptions, resolved: ResolvedKnobs): Promise<number> {
  const root = packageRoot();
  // Every check before anything starts: bad input is exit 2 with what to do.
  const own = prdArg === undefined ? null : readPrd(prdArg);
  const before = readCheckout(opts.repo ?? '.');
  if (!own) for (const l of prdAdvice(root)) say(l);

  let plan = planTry(vigilHome(), before);
  const stack = await startLocalStack(ep, opts, say, () =>
    say(
      `\nInterrupted. The run lives on in Temporal: \`vigil up\` carries it on (\`vigil watch ${plan.runId}\` follows it), ` +
        `or \`vigil stop ${plan.runId} --signal\` ends it.`,
    ),
  );
  const { client, connection, endpoint, host, storeUrl, shutdown } = stack;
  try {
    plan = prepareTry(plan, before, root, own);
    // Relative to the repository, where every call runs: the worktree lies inside VIGIL_HOME, which
    // the sandbox never shows as a path of its own (only as the repository's).
    const knobs = tryKnobs(resolved, path.relative(plan.worktree, plan.scenarioFile), root);
    try {
      const { searchAttributes } = await startRun(client, connection, endpoint, {
        prd: readPrd(plan.prdFile),
        repoPath: plan.worktree,
        knobs: { ...knobs.knobs, eventStore: storeUrl !== null },
        workflowId: plan.runId,
        host,
      });
      if (searchAttributes.missing.length)
        process.stderr.write(`${searchAttributeHint(searchAttributes.missing, endpoint, searchAttributes.refusal)}\n`);
    } catch (err) {
      discardTry(plan, before);
      throw err;
    }
    for (const l of header(plan, before, own, knobs, endpoint)) say(l);
    const end = await followToEnd(stack, plan.runId);
    if (!end) return 130;
    for (const l of resultLines(end.result, end.pause, plan, before, own)) say(l);
    if (storeUrl) say(`\nIts timeline: vigil report ${plan.runId}`);
    // Approved is 0; anything else is not, even a stop (whose outcome code is 0).
    const approved = end.result.view.snapshot?.outcome?.status === 'council_approved';
    return approved ? 0 : end.result.exitCode || 1;
  } finally {
    await shutdown();
  }
}
