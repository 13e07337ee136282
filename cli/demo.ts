/**
 * `vigil demo`: the whole product on one machine. Starts (or reuses) the embedded Temporal dev
 * server with its persistent database and Web UI, runs a worker in this process, and drives the
 * scripted demo agent over a fresh sample repository until the run completes, printing progress
 * per iteration and the UI link. Interrupt it at any point and run it again: the same run carries
 * on from where it was.
 */
import { cpSync, mkdirSync } from 'node:fs';
import path from 'node:path';
import { execFileSync } from 'node:child_process';
import { defaultKnobs, type Knobs } from '../schemas/knobs.js';
import { packageRoot, vigilHome } from '../lib/paths.js';
import { runUrl, searchAttributeHint, type Endpoint } from './connection.js';
import { followRun } from './follow.js';
import { startLocalStack } from './local-stack.js';
import { readPrd } from './prd.js';
import type { ServerFlags } from './processes.js';
import { startRun } from './runs.js';
import type { StoreFlags } from './store.js';
import { sandboxLine } from '../rules/ui.js';

export const DEMO_RUN_ID = 'vigil-demo';

const say = (line: string): void => {
  process.stdout.write(`${line}\n`);
};

export function demoKnobs(root = packageRoot()): Knobs {
  return {
    ...defaultKnobs(),
    agentCommand: [
      path.join(root, 'examples/agents/scripted-agent/scripted-agent'),
      '--scenario',
      path.join(root, 'examples/demo/scenario.json'),
    ],
    testCommand: 'node --test',
    maxIterations: 12,
    // A short demo: the council may convene from iteration 2.
    councilMinIterations: 2,
    baseWaitSeconds: 2,
    backoffJitterSeconds: 0,
    heartbeatTimeoutSeconds: 10,
  };
}

/** A fresh git repository holding the sample project, under VIGIL_HOME/demo/. */
export function createDemoRepo(home = vigilHome(), root = packageRoot()): string {
  const stamp = new Date().toISOString().replace(/[-:]/g, '').replace(/\..*$/, '').replace('T', '-');
  const repo = path.join(home, 'demo', `repo-${stamp}`);
  mkdirSync(path.dirname(repo), { recursive: true });
  cpSync(path.join(root, 'examples/demo/sample-repo'), repo, { recursive: true });
  const git = (...args: string[]): void => {
    execFileSync('git', args, {
      cwd: repo,
      stdio: 'ignore',
      env: {
        ...process.env,
        GIT_AUTHOR_NAME: 'Vigil Demo',
        GIT_AUTHOR_EMAIL: 'demo@vigil.invalid',
        GIT_COMMITTER_NAME: 'Vigil Demo',
        GIT_COMMITTER_EMAIL: 'demo@vigil.invalid',
      },
    });
  };
  git('init', '-q', '-b', 'main');
  git('add', '-A');
  git('-c', 'commit.gpgsign=false', 'commit', '-q', '-m', 'Sample project');
  return repo;
}

export interface DemoOptions extends ServerFlags, StoreFlags {
  keepServer?: boolean;
}

export async function demoCommand(ep: Endpoint, opts: DemoOptions): Promise<number> {
  const root = packageRoot();
  const stack = await startLocalStack(ep, opts, say, () =>
    say('\nInterrupted. The run lives on in Temporal: run `vigil demo` again and it continues where it was.'),
  );
  const { client, connection, endpoint, host, server, storeUrl, workerDone, shutdown } = stack;

  try {
    const prd = readPrd(path.join(root, 'examples/demo/PRD.md'));
    const repo = createDemoRepoIfNeeded(
      await client.workflow
        .getHandle(DEMO_RUN_ID)
        .describe()
        .catch(() => null),
    );
    const { attached, searchAttributes } = await startRun(client, connection, endpoint, {
      prd,
      repoPath: repo ?? '',
      knobs: { ...demoKnobs(root), eventStore: storeUrl !== null },
      workflowId: DEMO_RUN_ID,
      attachIfRunning: true,
      // The demo's id is its own: a new demo replaces the one that ended.
      replace: true,
      host,
    });
    if (searchAttributes.missing.length)
      process.stderr.write(`${searchAttributeHint(searchAttributes.missing, endpoint, searchAttributes.refusal)}\n`);
    say('');
    say(attached ? `Continuing the demo run already in progress: ${DEMO_RUN_ID}` : `Started run ${DEMO_RUN_ID}`);
    if (!attached && repo) say(`  repository : ${repo}`);
    say(`  PRD        : ${prd.path} ("${prd.title}")`);
    say(`  history    : ${runUrl(endpoint, DEMO_RUN_ID)}`);
    say(`  follow it  : vigil watch ${DEMO_RUN_ID}   (or: temporal workflow show -w ${DEMO_RUN_ID})`);
    say('');

    const result = await Promise.race([
      followRun(client, DEMO_RUN_ID, { until: 'terminal', onLine: (l) => say(`  ${l}`) }),
      workerDone.then(() => null),
    ]);
    if (!result) return 130;
    say('');
    const snap = result.view.snapshot;
    if (snap) {
      say(`Run ${DEMO_RUN_ID} ${result.exitCode === 0 ? 'completed' : 'ended'} after ${snap.iteration} iteration(s).`);
      say(`Repository: ${snap.repoPath}`);
      // How its agents were isolated (docs/security.md, The agent's sandbox).
      if (snap.sandbox) say(`Agents: ${sandboxLine(snap.sandbox, snap.sandbox.mode)}`);
      try {
        const files = execFileSync('git', ['ls-files', '--cached', '--others', '--exclude-standard'], {
          cwd: snap.repoPath,
          encoding: 'utf8',
        });
        say(`Files: ${files.trim().split('\n').join(', ')}`);
      } catch {
        /* repository gone: nothing to list */
      }
    }
    say(`Every step of the run is in the Temporal UI: ${runUrl(endpoint, DEMO_RUN_ID)}`);
    if (storeUrl) say(`Its events are in the event store: \`vigil report ${DEMO_RUN_ID}\` shows its timeline, \`vigil report\` every run.`);
    if (opts.keepServer && server) {
      // The operator console beside them (cli/console/command.ts; VIGIL_CONSOLE=0 turns it off).
      const stopConsole = await (
        await import('./console/command.js')
      ).sideConsole(endpoint, say, (l) => process.stderr.write(`vigil: warning: ${l}\n`));
      say('The server and worker keep running (--keep-server); press Ctrl+C to stop them.');
      await workerDone;
      await stopConsole();
    } else if (server) {
      say(`The database keeps the run: start \`vigil server\` to browse it later at the link above.`);
    }
    return result.exitCode;
  } finally {
    await shutdown();
  }

  function createDemoRepoIfNeeded(desc: { status: { name: string } } | null): string | null {
    return desc?.status.name === 'RUNNING' ? null : createDemoRepo(vigilHome(), root);
  }
}
