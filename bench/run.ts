/**
 * Benchmarks (not tests): what Vigil itself costs per iteration, against a real dev server started
 * the way `vigil server` starts it (workers/dev-server.ts, its dynamic config included).
 *
 * 1. tree hash: `workingTreeHash` on a repository of N files, clean and after edits.
 * 2. iterations: one run each with the minimal and the default knobs, of an agent that changes
 *    the tree every iteration (so no stagnation valve ends the run) and answers reviews (PASS)
 *    and council votes (REJECT, so the run goes on). Per iteration: the orchestration overhead
 *    (wall time minus the agent's own time), the CPU seconds of the worker (this process), of
 *    the server, of the event store (an embedded Postgres the default knob set's run projects its
 *    events into, as `vigil start` does where a store is configured; `--store off`: none) and of
 *    every other process Vigil starts (git helper, supervisor daemon and per-call supervisors with
 *    their sandbox proxies, bubblewrap and its bridge, gate tools, agents: counted in a cgroup of
 *    the bench's own where one can be made, bench/cgroup-cpu.ts), the history events and
 *    bytes (every execution of the run, continue-as-new included), and the overhead per window of
 *    100 iterations (is it flat?). A run that ends before its iteration count, or pauses, fails the
 *    bench.
 * 3. load (`--concurrent 50,100,200`): that many runs at once on one worker (activity slots set
 *    with `--slots`), each agent call sleeping `--agent-sleep` seconds, spread by `--agent-jitter`
 *    (0.5: uniformly from half to one and a half times, as real calls vary; 0: all alike, which
 *    keeps the runs in step, so that their workflow tasks arrive in waves): iterations per minute,
 *    the fewest iterations any run made (starvation), worker and server RSS, and how fast a
 *    status query and a pause/resume answer while loaded, asked by the bench's own client (in the
 *    worker's process) and by an outside client in a process of its own (bench/prober.ts), as
 *    `vigil` asks.
 *
 * Usage: npm run bench [-- --iterations 1000] [-- --knobs minimal] [-- --concurrent 50,100,200]
 *        [-- --breakdown] [-- --dump-histories DIR] (every execution's history as JSON, payloads base64)
 */
import { execFileSync, spawn } from 'node:child_process';
import { chmodSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Client, Connection, type WorkflowHandle } from '@temporalio/client';
import proto from '@temporalio/proto';
import { DefaultLogger, NativeConnection, Runtime } from '@temporalio/worker';
import { workingTreeHash } from '../activities/git.js';
import { daemonPid } from '../lib/supervisor-location.js';
import { benchArgs, fail, numberArg } from './args.js';
import { benchScratch } from './scratch.js';
import { openCpuCgroup } from './cgroup-cpu.js';
import { defaultKnobs, type Knobs } from '../schemas/knobs.js';
import { DEV_SERVER_DYNAMIC_CONFIG, freePort, startDevServer, type DevServer } from '../workers/dev-server.js';
import { startEmbeddedPostgres, type EmbeddedPostgres } from '../workers/postgres.js';
import { resolveTemporalCli } from '../workers/temporal-cli.js';
import { DEFAULT_TUNING } from '../workers/tuning.js';
import { createVigilWorker, HEARTBEAT_SEND_MS } from '../workers/worker.js';
import { pauseUpdate, resumeUpdate, statusQuery } from '../workflows/messages.js';
import { vigilRun } from '../workflows/run-workflow.js';

const USAGE = `usage: npm run bench [-- options]   (or: node dist/bench/run.js [options])
  (npm run bench without options runs every bench: this one with --concurrent 50,100,200, then
  the CLI and stop latency benches; see bench/all.ts)
  --iterations N          iterations per knob set (default 100)
  --knobs LIST            knob sets, comma-separated: minimal, default (default both; '' for none)
  --files N               files in the tree-hash repository (default 2000)
  --concurrent LIST       load: runs at once, comma-separated, e.g. 50,100,200 (default: no load)
  --concurrent-seconds S  how long each load level runs (default 90)
  --agent-sleep S         load: each agent call's sleep (default 5)
  --agent-jitter J        load: spread of the sleep, 0 <= J < 1 (default 0.5)
  --slots N               worker activity slots (default ${DEFAULT_TUNING.activitySlots})
  --workflow-slots N      worker workflow-task slots (default ${DEFAULT_TUNING.workflowSlots})
  --git-niceness N        niceness of the worker's git helper, 0-19 (default ${DEFAULT_TUNING.gitNiceness})
  --breakdown             iterations: where the time of an iteration goes
  --dump-histories DIR    every execution's history as JSON
  --server-config SPEC    tuned (default), none, or key=json,...
  --store on|off          on (default): the default knob set's runs project into an embedded Postgres, counted apart`;
const values = benchArgs('bench', USAGE, {
  files: { type: 'string', default: '2000' },
  iterations: { type: 'string', default: '100' },
  knobs: { type: 'string', default: 'minimal,default' },
  concurrent: { type: 'string', default: '' },
  'concurrent-seconds': { type: 'string', default: '90' },
  'agent-sleep': { type: 'string', default: '5' },
  'agent-jitter': { type: 'string', default: '0.5' },
  slots: { type: 'string', default: String(DEFAULT_TUNING.activitySlots) },
  'workflow-slots': { type: 'string', default: String(DEFAULT_TUNING.workflowSlots) },
  'git-niceness': { type: 'string', default: String(DEFAULT_TUNING.gitNiceness) },
  breakdown: { type: 'boolean', default: false },
  'dump-histories': { type: 'string', default: '' },
  'server-config': { type: 'string', default: 'tuned' },
  store: { type: 'string', default: 'on' },
});
const num = (flag: keyof typeof values, bounds: Parameters<typeof numberArg>[4]): number =>
  numberArg('bench', USAGE, flag, String(values[flag]), bounds);
const FILES = num('files', { min: 1, integer: true });
const ITERATIONS = num('iterations', { min: 1, integer: true });
const KNOB_SETS = values.knobs.split(',').filter(Boolean);
for (const k of KNOB_SETS)
  if (k !== 'minimal' && k !== 'default') fail('bench', USAGE, `--knobs: no knob set ${JSON.stringify(k)} (minimal, default)`);
const CONCURRENT = values.concurrent
  .split(',')
  .filter(Boolean)
  .map((c) => numberArg('bench', USAGE, 'concurrent', c, { min: 1, integer: true }));
const LOAD_SECONDS = num('concurrent-seconds', { min: 1 });
const AGENT_SLEEP = num('agent-sleep', { min: 0 });
const AGENT_JITTER = num('agent-jitter', { min: 0, max: 0.999 });
const SLOTS = num('slots', { min: 1, integer: true });
const WORKFLOW_SLOTS = num('workflow-slots', { min: 2, integer: true });
const GIT_NICENESS = num('git-niceness', { min: 0, max: 19, integer: true });
if (values.store !== 'on' && values.store !== 'off') fail('bench', USAGE, `--store: ${JSON.stringify(values.store)} is not on or off`);
const STORE = values.store === 'on';

const SCRATCH = benchScratch('bench');
// Every process the bench starts is counted in a cgroup of its own where one can be made
// (bench/cgroup-cpu.ts: /proc misses what runs in the sandbox); the supervisor daemon is the
// bench's own (a daemon another worker of this build started would be counted elsewhere).
const CGROUP = openCpuCgroup();
process.once('exit', () => CGROUP?.close()); // also when a signal cuts the bench short (bench/scratch.ts exits)
process.env.VIGIL_SUPERVISOR_DIR ??= SCRATCH.mkdir('supervisor-');
console.log(
  CGROUP
    ? `CPU counted in cgroup ${CGROUP.path}: every process the bench starts`
    : 'CPU counted from /proc (no cgroup could be made here): processes inside the sandbox are not all seen',
);

/** `tuned`: the server's own dynamic config (DEV_SERVER_DYNAMIC_CONFIG); `none`: Temporal's defaults; or `key=json,...`. */
function serverConfig(spec: string): Readonly<Record<string, number | boolean | string>> {
  if (spec === 'tuned') return DEV_SERVER_DYNAMIC_CONFIG;
  if (spec === 'none') return {};
  return Object.fromEntries(
    spec.split(',').map((kv) => [kv.slice(0, kv.indexOf('=')), JSON.parse(kv.slice(kv.indexOf('=') + 1)) as number | boolean | string]),
  );
}

const git = (cwd: string, ...args: string[]): void => {
  execFileSync('git', args, {
    cwd,
    stdio: 'ignore',
    env: { ...process.env, GIT_AUTHOR_NAME: 'b', GIT_AUTHOR_EMAIL: 'b@b', GIT_COMMITTER_NAME: 'b', GIT_COMMITTER_EMAIL: 'b@b' },
  });
};

function repoWith(files: number): string {
  const dir = SCRATCH.mkdir('repo-');
  git(dir, 'init', '-q', '-b', 'main');
  writeFileSync(path.join(dir, 'README.md'), '# bench\n');
  for (let i = 0; i < files; i++) {
    const sub = path.join(dir, `d${i % 50}`);
    mkdirSync(sub, { recursive: true });
    writeFileSync(path.join(sub, `f${i}.txt`), `file ${i}\n`.repeat(20));
  }
  git(dir, 'add', '-A');
  git(dir, 'commit', '-q', '-m', 'bench');
  return dir;
}

async function timeIt(n: number, fn: () => Promise<unknown>, before?: () => void): Promise<{ median: number; p90: number }> {
  const samples: number[] = [];
  for (let i = 0; i < n; i++) {
    before?.();
    const t = performance.now();
    await fn();
    samples.push(performance.now() - t);
  }
  samples.sort((a, b) => a - b);
  return { median: samples[Math.floor(n / 2)] as number, p90: samples[Math.floor(n * 0.9)] as number };
}

async function benchTreeHash(): Promise<void> {
  const repo = repoWith(FILES);
  try {
    // Every sample hashes a tree not hashed before (as after an agent's iteration), then the same
    // tree again (as a reviewer's check that it did not change).
    let round = 0;
    const change = (files: number) => (): void => {
      round += 1;
      writeFileSync(path.join(repo, 'd0', 'f0.txt'), `changed ${round}\n`);
      for (let i = 1; i < files; i++) writeFileSync(path.join(repo, `new-${i}.txt`), `new ${i} ${round}\n`);
    };
    const one = await timeIt(10, () => workingTreeHash(repo), change(1));
    const many = await timeIt(10, () => workingTreeHash(repo), change(21));
    const again = await timeIt(10, () => workingTreeHash(repo));
    const ms = (t: { median: number; p90: number }): string => `median ${t.median.toFixed(1)} ms (p90 ${t.p90.toFixed(1)})`;
    console.log(`tree hash, ${FILES} files: 1 file changed ${ms(one)}, 21 changed ${ms(many)}, unchanged since the last hash ${ms(again)}`);
  } finally {
    rmSync(repo, { recursive: true, force: true });
  }
}

/** The bench's agent: changes the tree every iteration; reviewers pass, council members reject (the run goes on). */
function writeAgent(dir: string): string {
  const file = path.join(dir, 'bench-agent.sh');
  writeFileSync(
    file,
    [
      '#!/bin/sh',
      'case "$VIGIL_ROLE" in',
      // $1 seconds, spread by the fraction $2 (uniformly from $1 * (1 - $2) to $1 * (1 + $2)).
      '  iteration) echo "$VIGIL_ITERATION" >> notes.txt',
      '    if [ "${1:-0}" != 0 ]; then sleep "$(awk -v s="$1" -v j="${2:-0}" -v seed="$$" \'BEGIN { srand(seed); printf ' +
        '"%.3f", s * (1 - j + 2 * j * rand()) }\')"; fi ;;',
      '  reviewer|devils-advocate) echo "VERDICT: PASS"; echo "VOTE: REJECT" ;;',
      '  council) echo "VOTE: REJECT"; echo "REASON: the bench never finishes" ;;',
      'esac',
      'exit 0',
      '',
    ].join('\n'),
  );
  chmodSync(file, 0o755);
  return file;
}

/** Every optional feature off: the loop itself. */
const MINIMAL: Partial<Knobs> = {
  qualityGates: false,
  codeReview: false,
  prdChecklist: false,
  councilEnabled: false,
  evidenceGate: false,
  uncertaintyEscalation: false,
  tierLadder: false,
  providerBreaker: false,
  notifyDesktop: false,
  eventStore: false,
};

function knobSet(name: string, agent: string, sleepSeconds: number, iterations: number, jitter = 0): Knobs {
  const base = { ...defaultKnobs(), agentCommand: [agent, String(sleepSeconds), String(jitter)], maxIterations: iterations };
  if (name === 'minimal') return { ...base, ...MINIMAL };
  // With a store configured, `vigil start` turns the event store on (--no-store: off).
  if (name === 'default') return { ...base, eventStore: STORE };
  throw new Error(`unknown knob set ${name} (minimal, default)`);
}

/** CPU seconds (user + system) a process has used so far, from /proc. */
function procCpuSeconds(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[11]) + Number(fields[12])) / 100; // utime, stime in clock ticks (USER_HZ = 100)
}

function procRssMiB(pid: number): number {
  const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return m ? Number(m[1]) / 1024 : 0;
}

/** utime, stime, cutime and cstime of a process in clock ticks, and its parent, from /proc; null when it is gone. */
function procTicks(pid: number | 'self'): { ppid: number; own: number; reaped: number } | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return { ppid: Number(f[1]), own: Number(f[11]) + Number(f[12]), reaped: Number(f[13]) + Number(f[14]) };
  } catch {
    return null;
  }
}

/** The live processes below `roots` (their children, grandchildren, …), from /proc. */
function descendants(roots: readonly number[]): number[] {
  const children = new Map<number, number[]>();
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    const t = procTicks(Number(name));
    if (t) children.set(t.ppid, [...(children.get(t.ppid) ?? []), Number(name)]);
  }
  const out: number[] = [];
  const queue = [...roots];
  for (let pid = queue.shift(); pid !== undefined; pid = queue.shift()) {
    for (const c of children.get(pid) ?? []) {
      out.push(c);
      queue.push(c);
    }
  }
  return out;
}

/**
 * CPU seconds of every process Vigil starts besides the worker and the server: the git helper
 * (long-lived, with the git commands it runs), per-call supervisors, gate tools, the supervisor
 * daemon (a session of its own, not the worker's child) and the agents under it. Live processes
 * count with what they reaped; processes already gone count through the parent that reaped
 * them (this process's cutime and cstime, or a live descendant's), so nothing is counted twice
 * and nothing short-lived is missed. The server's and the event store's trees (`exclude`) are
 * counted apart (treeCpuSeconds).
 */
function supervisionCpuSeconds(exclude: readonly number[]): number {
  const self = procTicks('self');
  let ticks = self?.reaped ?? 0;
  const daemon = daemonPid();
  const roots = [process.pid, ...(daemon !== null ? [daemon] : [])];
  const skip = new Set([...exclude, ...descendants(exclude)]);
  const seen = new Set<number>();
  for (const pid of [...(daemon !== null ? [daemon] : []), ...descendants(roots)]) {
    if (skip.has(pid) || seen.has(pid) || pid === process.pid) continue;
    seen.add(pid);
    const t = procTicks(pid);
    if (t) ticks += t.own + t.reaped;
  }
  return ticks / 100;
}

/**
 * CPU seconds of a process and everything below it, live or reaped: the event store's postmaster
 * and its backends (a backend that ended counts through the postmaster that reaped it).
 */
function treeCpuSeconds(root: number | null): number {
  if (root === null) return 0;
  let ticks = 0;
  for (const pid of [root, ...descendants([root])]) {
    const t = procTicks(pid);
    if (t) ticks += t.own + t.reaped;
  }
  return ticks / 100;
}

const selfCpuSeconds = (): number => {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1e6;
};

const { temporal } = proto;
type History = proto.temporal.api.history.v1.IHistory;

/** Every execution of a run, first to last (continue-as-new links them). */
async function chainHistories(client: Client, workflowId: string, firstRunId: string): Promise<History[]> {
  const out: History[] = [];
  let runId: string | null = firstRunId;
  while (runId) {
    const h: History = await client.workflow.getHandle(workflowId, runId).fetchHistory();
    out.push(h);
    const last = h.events?.at(-1);
    runId = last?.workflowExecutionContinuedAsNewEventAttributes?.newExecutionRunId ?? null;
  }
  return out;
}

const payloadJson = (p: proto.temporal.api.common.v1.IPayloads | null | undefined): Record<string, unknown> | null => {
  const data = p?.payloads?.[0]?.data;
  if (!data) return null;
  try {
    return JSON.parse(Buffer.from(data).toString('utf8')) as Record<string, unknown>;
  } catch {
    return null;
  }
};

interface IterationTiming {
  iteration: number;
  scheduledMs: number;
  agentMs: number;
}

interface RunFigures {
  iterations: number;
  wallMs: number;
  agentMs: number;
  workerCpu: number;
  serverCpu: number;
  /** Per-call supervisors or the supervisor daemon, git and gate tools (agents included). */
  supervisionCpu: number;
  /** The event store's Postgres (0 without one). */
  storeCpu: number;
  events: number;
  bytes: number;
  executions: number;
  timings: IterationTiming[];
  byType: Map<string, { count: number; bytes: number }>;
}

const tsMs = (t: proto.temporal.api.history.v1.IHistoryEvent['eventTime']): number =>
  Number(t?.seconds ?? 0) * 1000 + Math.floor((t?.nanos ?? 0) / 1e6);

function analyse(
  histories: History[],
): Omit<RunFigures, 'iterations' | 'wallMs' | 'workerCpu' | 'serverCpu' | 'supervisionCpu' | 'storeCpu'> {
  const timings: IterationTiming[] = [];
  const byType = new Map<string, { count: number; bytes: number }>();
  let events = 0;
  let bytes = 0;
  for (const h of histories) {
    bytes += temporal.api.history.v1.History.encode(h).finish().byteLength;
    const iterationOf = new Map<string, IterationTiming>();
    for (const e of h.events ?? []) {
      events += 1;
      const type = temporal.api.enums.v1.EventType[e.eventType ?? 0] ?? String(e.eventType);
      let label = type.replace(/^EVENT_TYPE_/, '');
      const sched = e.activityTaskScheduledEventAttributes;
      if (sched) label += `:${sched.activityType?.name ?? '?'}`;
      const one = temporal.api.history.v1.HistoryEvent.encode(e).finish().byteLength;
      const t = byType.get(label) ?? { count: 0, bytes: 0 };
      byType.set(label, { count: t.count + 1, bytes: t.bytes + one });
      if (sched?.activityType?.name === 'runAgent') {
        const input = payloadJson(sched.input);
        if (input?.role === 'iteration' && typeof input.iteration === 'number') {
          const it = { iteration: input.iteration, scheduledMs: tsMs(e.eventTime), agentMs: 0 };
          iterationOf.set(String(e.eventId), it);
          timings.push(it);
        }
      }
      const done = e.activityTaskCompletedEventAttributes;
      if (done) {
        const it = iterationOf.get(String(done.scheduledEventId));
        const r = payloadJson(done.result);
        if (it && typeof r?.durationMs === 'number') it.agentMs = r.durationMs;
      }
    }
  }
  // A re-scheduled iteration (after an interruption) counts once: its last call.
  const last = new Map<number, IterationTiming>();
  for (const t of timings) last.set(t.iteration, t);
  const unique = [...last.values()].sort((a, b) => a.iteration - b.iteration);
  return { agentMs: unique.reduce((a, t) => a + t.agentMs, 0), events, bytes, executions: histories.length, timings: unique, byType };
}

/** Fails the bench when the run pauses (a paused run would hang it) — checked every few seconds. */
async function watchForPause(handle: WorkflowHandle, done: () => boolean): Promise<void> {
  while (!done()) {
    await new Promise((r) => setTimeout(r, 5000).unref());
    if (done()) return;
    try {
      const s = await handle.query(statusQuery);
      if (s.paused) throw new Error(`bench run ${handle.workflowId} paused at iteration ${s.iteration}: ${s.pause?.reason ?? ''}`);
    } catch (err) {
      if (err instanceof Error && err.message.startsWith('bench run')) throw err;
    }
  }
}

async function measuredRun(
  client: Client,
  server: DevServer,
  store: EmbeddedPostgres | null,
  knobs: Knobs,
  label: string,
  prd: string,
): Promise<RunFigures> {
  const repo = repoWith(10);
  const storePid = knobs.eventStore && store ? store.pid : null;
  const apart = [server.pid, ...(store ? [store.pid] : [])];
  try {
    const cpu0 = selfCpuSeconds();
    const srv0 = procCpuSeconds(server.pid);
    const sup0 = supervisionCpuSeconds(apart);
    const store0 = treeCpuSeconds(storePid);
    const all0 = CGROUP?.seconds() ?? 0;
    const started = performance.now();
    const handle = await client.workflow.start(vigilRun, {
      taskQueue: 'bench',
      workflowId: `bench-${label}-${Date.now()}`,
      args: [{ prdPath: prd, prdTitle: 'Bench', repoPath: repo, knobs }],
    });
    let finished = false;
    let wallMs = 0;
    let workerCpu = 0;
    let serverCpu = 0;
    let supervisionCpu = 0;
    let storeCpu = 0;
    const ended = handle.result().finally(() => {
      finished = true;
      wallMs = performance.now() - started;
      workerCpu = selfCpuSeconds() - cpu0;
      serverCpu = procCpuSeconds(server.pid) - srv0;
      supervisionCpu = supervisionCpuSeconds(apart) - sup0;
      storeCpu = treeCpuSeconds(storePid) - store0;
      // With the cgroup, "other processes" is everything the bench's tree used besides the three counted apart.
      if (CGROUP) supervisionCpu = Math.max(0, CGROUP.seconds() - all0 - workerCpu - serverCpu - storeCpu);
    });
    const [outcome] = await Promise.all([ended, watchForPause(handle, () => finished)]);
    if (outcome.status !== 'max_iterations_reached' || outcome.iteration !== knobs.maxIterations) {
      throw new Error(
        `bench run ${label} ended at iteration ${outcome.iteration} of ${knobs.maxIterations}: ${outcome.status} (${outcome.reason})`,
      );
    }
    const histories = await chainHistories(client, handle.workflowId, handle.firstExecutionRunId);
    if (values['dump-histories']) {
      // Every execution's history as JSON, to see what the events carry.
      mkdirSync(values['dump-histories'], { recursive: true });
      histories.forEach((h, i) =>
        writeFileSync(
          path.join(values['dump-histories'], `${label}-${i}.json`),
          JSON.stringify(
            temporal.api.history.v1.History.toObject(h as proto.temporal.api.history.v1.History, {
              longs: String,
              enums: String,
              bytes: String,
            }),
            null,
            1,
          ),
        ),
      );
    }
    const a = analyse(histories);
    return { ...a, iterations: outcome.iteration, wallMs, workerCpu, serverCpu, supervisionCpu, storeCpu };
  } finally {
    rmSync(repo, { recursive: true, force: true });
  }
}

function report(label: string, f: RunFigures): void {
  const n = f.iterations;
  const overhead = (f.wallMs - f.agentMs) / n;
  console.log(
    `${label}: ${n} iterations (${f.executions} executions) in ${(f.wallMs / 1000).toFixed(1)} s; per iteration: ` +
      `overhead ${(overhead / 1000).toFixed(3)} s (agent ${(f.agentMs / n / 1000).toFixed(3)} s), ` +
      `CPU ${((f.workerCpu + f.serverCpu + f.storeCpu + f.supervisionCpu) / n).toFixed(3)} s (worker ` +
      `${(f.workerCpu / n).toFixed(3)}, server ${(f.serverCpu / n).toFixed(3)}, event store ${(f.storeCpu / n).toFixed(3)}, ` +
      `other processes ${(f.supervisionCpu / n).toFixed(3)}), ` +
      `${(f.events / n).toFixed(1)} events, ${(f.bytes / n / 1024).toFixed(1)} KiB`,
  );
  // Flatness: the overhead per window of iterations (iteration i's call to iteration j's).
  const w = n >= 400 ? 100 : Math.max(10, Math.floor(n / 5));
  const windows: string[] = [];
  for (let i = 0; i + w < f.timings.length; i += w) {
    const a = f.timings[i] as IterationTiming;
    const b = f.timings[i + w] as IterationTiming;
    const agent = f.timings.slice(i, i + w).reduce((s, t) => s + t.agentMs, 0);
    windows.push(`${a.iteration}-${b.iteration - 1}: ${((b.scheduledMs - a.scheduledMs - agent) / w / 1000).toFixed(3)}`);
  }
  if (windows.length) console.log(`  overhead per iteration by window (s): ${windows.join(' · ')}`);
  if (values.breakdown) {
    const rows = [...f.byType.entries()].sort((x, y) => y[1].bytes - x[1].bytes);
    for (const [t, v] of rows)
      console.log(
        `    ${t.padEnd(60)} ${(v.count / n).toFixed(2).padStart(6)} events ${(v.bytes / n / 1024).toFixed(2).padStart(7)} KiB per iteration`,
      );
  }
}

/** Starts bench/prober.ts, which asks `workflowIds` in turn every `everyMs` for `forMs` from a process of its own; its timings. */
function outsideClient(
  address: string,
  workflowIds: string[],
  everyMs: number,
  forMs: number,
): Promise<{ statusMs: number[]; pauseMs: number[]; unanswered: number }> {
  const child = spawn(process.execPath, [path.join(path.dirname(fileURLToPath(import.meta.url)), 'prober.js')], {
    stdio: ['pipe', 'pipe', 'inherit'],
  });
  child.stdin.end(JSON.stringify({ address, namespace: 'default', workflowIds, everyMs, forMs }));
  let out = '';
  child.stdout.setEncoding('utf8').on('data', (d: string) => (out += d));
  return new Promise((resolve, reject) => {
    child.once('error', reject);
    child.once('exit', (code) => {
      try {
        if (code !== 0) throw new Error(`exit ${code}`);
        resolve(JSON.parse(out) as { statusMs: number[]; pauseMs: number[]; unanswered: number });
      } catch (err) {
        reject(new Error(`the outside client (bench/prober.ts) failed: ${err instanceof Error ? err.message : String(err)}`));
      }
    });
  });
}

async function benchLoad(client: Client, server: DevServer, agent: string, prd: string, runs: number): Promise<void> {
  const repos: string[] = [];
  const handles: WorkflowHandle<typeof vigilRun>[] = [];
  const knobs = { ...knobSet('minimal', agent, AGENT_SLEEP, 100_000, AGENT_JITTER), continueAsNewEvery: 100 };
  try {
    for (let i = 0; i < runs; i++) {
      const repo = repoWith(3);
      repos.push(repo);
      handles.push(
        await client.workflow.start(vigilRun, {
          taskQueue: 'bench',
          workflowId: `bench-load-${runs}-${i}-${Date.now()}`,
          args: [{ prdPath: prd, prdTitle: 'Bench', repoPath: repo, knobs }],
        }),
      );
    }
    // A run's iteration from its status query; a query the loaded worker does not answer in time is counted, not fatal.
    let unanswered = 0;
    const iterationsOf = async (): Promise<number[]> =>
      Promise.all(
        handles.map((h) =>
          h.query(statusQuery).then(
            (s) => s.iteration,
            () => ((unanswered += 1), NaN),
          ),
        ),
      );
    // Warm up one agent call's time, then measure a window.
    await new Promise((r) => setTimeout(r, (AGENT_SLEEP * (1 + AGENT_JITTER) + 5) * 1000));
    const before = await iterationsOf();
    let rssWorker = 0;
    let rssServer = 0;
    let rssSupervision = 0;
    let heapWorker = 0;
    // The daemon's pid is looked up (a scan of /proc, on the worker's own thread) once, and again only when it is gone.
    let daemon: number | null = null;
    const sample = setInterval(() => {
      const m = process.memoryUsage();
      rssWorker = Math.max(rssWorker, m.rss / 1024 / 1024);
      heapWorker = Math.max(heapWorker, m.heapUsed / 1024 / 1024);
      rssServer = Math.max(rssServer, procRssMiB(server.pid));
      try {
        daemon ??= daemonPid();
        if (daemon !== null) rssSupervision = Math.max(rssSupervision, procRssMiB(daemon));
      } catch {
        daemon = null;
      }
    }, 1000);
    const t0 = performance.now();
    const statusMs: number[] = [];
    const pauseMs: number[] = [];
    const deadline = t0 + LOAD_SECONDS * 1000;
    // The same questions from a client in a process of its own (as `vigil` is), on other runs.
    const outside = outsideClient(
      server.address,
      [...handles].reverse().map((h) => h.workflowId),
      2500,
      LOAD_SECONDS * 1000,
    );
    let k = 0;
    while (performance.now() < deadline - 3000) {
      await new Promise((r) => setTimeout(r, 2500));
      const h = handles[k++ % handles.length] as WorkflowHandle<typeof vigilRun>;
      // An unanswered query or pause counts at its timeout (the SDK's 10 s for a query).
      let t = performance.now();
      await h.query(statusQuery).catch(() => (unanswered += 1));
      statusMs.push(performance.now() - t);
      t = performance.now();
      await h.executeUpdate(pauseUpdate, { args: [{ reason: 'bench', by: 'bench' }] }).catch(() => (unanswered += 1));
      pauseMs.push(performance.now() - t);
      await h.executeUpdate(resumeUpdate, { args: [{ by: 'bench' }] }).catch(() => undefined);
    }
    await new Promise((r) => setTimeout(r, Math.max(0, deadline - performance.now())));
    const after = await iterationsOf();
    const probed = await outside;
    const minutes = (performance.now() - t0) / 60_000;
    clearInterval(sample);
    const made = after.map((v, i) => v - (before[i] ?? 0)).filter((v) => Number.isFinite(v));
    // Workflow tasks that timed out (the worker took a task and did not finish it in time): a sign of too many slots for the CPU.
    // And how long the worker held each workflow task (started to completed), the first task of a run apart.
    let taskTimeouts = 0;
    const firstTaskMs: number[] = [];
    const taskMs: number[] = [];
    // And how long tasks waited on the server before a worker took them (scheduled to started).
    const taskWaitMs: number[] = [];
    const activityWaitMs: number[] = [];
    for (const h of handles) {
      const events = (await h.fetchHistory().catch(() => null))?.events ?? [];
      taskTimeouts += events.filter((e) => e.workflowTaskTimedOutEventAttributes).length;
      const scheduledAt = new Map<string, number>();
      let startedMs: number | null = null;
      let first = true;
      for (const e of events) {
        if (e.workflowTaskScheduledEventAttributes || e.activityTaskScheduledEventAttributes)
          scheduledAt.set(String(e.eventId), tsMs(e.eventTime));
        const waitedSince = scheduledAt.get(
          String(e.workflowTaskStartedEventAttributes?.scheduledEventId ?? e.activityTaskStartedEventAttributes?.scheduledEventId ?? ''),
        );
        if (waitedSince !== undefined)
          (e.activityTaskStartedEventAttributes ? activityWaitMs : taskWaitMs).push(tsMs(e.eventTime) - waitedSince);
        if (e.workflowTaskStartedEventAttributes) startedMs = tsMs(e.eventTime);
        else if (e.workflowTaskCompletedEventAttributes && startedMs !== null) {
          (first ? firstTaskMs : taskMs).push(tsMs(e.eventTime) - startedMs);
          first = false;
          startedMs = null;
        }
      }
    }
    const total = made.reduce((a, b) => a + b, 0);
    const pct = (xs: number[], p: number): number =>
      [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(xs.length * p))] ?? NaN;
    console.log(
      `load, ${runs} runs (agent sleeps ${AGENT_SLEEP} s${AGENT_JITTER ? ` ± ${AGENT_JITTER * 100} %` : ''}, ${SLOTS} activity ` +
        `slots, ${WORKFLOW_SLOTS} workflow-task slots, git at niceness ${GIT_NICENESS}): ` +
        `${(total / minutes).toFixed(0)} iterations/min ` +
        `(ideal ${((runs * 60) / AGENT_SLEEP).toFixed(0)}); fewest by one run ${Math.min(...made)}, most ` +
        `${Math.max(...made)} in ${(minutes * 60).toFixed(0)} s; ` +
        `RSS worker ${rssWorker.toFixed(0)} MiB (JS heap ${heapWorker.toFixed(0)} MiB) + server ${rssServer.toFixed(0)} MiB + ` +
        `supervisor daemon ${rssSupervision.toFixed(0)} MiB; status median ${pct(statusMs, 0.5).toFixed(0)} ms (max ` +
        `${Math.max(...statusMs).toFixed(0)}), ` +
        `pause median ${pct(pauseMs, 0.5).toFixed(0)} ms (max ${Math.max(...pauseMs).toFixed(0)}); ` +
        `from an outside client: status median ${pct(probed.statusMs, 0.5).toFixed(0)} ms (max ` +
        `${Math.max(...probed.statusMs).toFixed(0)}), pause median ${pct(probed.pauseMs, 0.5).toFixed(0)} ms (max ` +
        `${Math.max(...probed.pauseMs).toFixed(0)})${probed.unanswered ? `, ${probed.unanswered} unanswered` : ''}; workflow ` +
        `tasks held: first median ${pct(firstTaskMs, 0.5).toFixed(0)} ms (max ${Math.max(...firstTaskMs).toFixed(0)}), ` +
        `others median ${pct(taskMs, 0.5).toFixed(0)} ms (p90 ${pct(taskMs, 0.9).toFixed(0)}, max ` +
        `${Math.max(...taskMs).toFixed(0)}), ${taskTimeouts} timed out; ` +
        `waited on the server: workflow tasks median ${pct(taskWaitMs, 0.5).toFixed(0)} ms (p90 ` +
        `${pct(taskWaitMs, 0.9).toFixed(0)}), activity tasks median ${pct(activityWaitMs, 0.5).toFixed(0)} ms (p90 ` +
        `${pct(activityWaitMs, 0.9).toFixed(0)})` +
        (unanswered ? `; ${unanswered} queries or pauses unanswered` : ''),
    );
    if (Math.min(...made) === 0) throw new Error(`load with ${runs} runs: a run made no iteration in ${LOAD_SECONDS} s (starved)`);
  } finally {
    await Promise.all(handles.map((h) => h.terminate('bench over').catch(() => undefined)));
    // A terminated run's agent call hears of it with its next heartbeat: let the calls end before
    // their repositories go.
    await new Promise((r) => setTimeout(r, HEARTBEAT_SEND_MS + 2000));
    for (const r of repos) rmSync(r, { recursive: true, force: true, maxRetries: 5, retryDelay: 200 });
    if (endedAfterTheirRun.count)
      console.log(`  (${endedAfterTheirRun.count} agent calls and workflow tasks of the terminated runs ended after their run)`);
    endedAfterTheirRun.count = 0;
  }
}

/**
 * The SDK's warnings, less the two every load ends with: the bench terminates its runs with agent
 * calls and workflow tasks in flight, whose completions then find no run ("Activity not found on
 * completion", "Task not found when completing"). Those are counted, and said once per load.
 */
const endedAfterTheirRun = { count: 0 };
const EXPECTED_AFTER_TERMINATE = /^(Activity not found on completion|Task not found when completing)/;
function benchLogger(): DefaultLogger {
  const sdk = new DefaultLogger('WARN');
  return new DefaultLogger('WARN', (entry) => {
    if (EXPECTED_AFTER_TERMINATE.test(entry.message)) endedAfterTheirRun.count += 1;
    else sdk.log(entry.level, entry.message, entry.meta);
  });
}

async function benchIterations(): Promise<void> {
  Runtime.install({ logger: benchLogger(), telemetryOptions: { logging: { filter: { core: 'WARN', other: 'ERROR' }, forward: {} } } });
  const cli = await resolveTemporalCli();
  const dir = SCRATCH.mkdir('server-');
  const server = await startDevServer({
    cliPath: cli.path,
    dbFile: path.join(dir, 'temporal.db'),
    port: await freePort(),
    headless: true,
    dynamicConfig: serverConfig(values['server-config']),
  });
  SCRATCH.server = server;
  console.log(`server dynamic config: ${values['server-config']}`);
  const prd = path.join(dir, 'PRD.md');
  writeFileSync(prd, '# Bench\n\nAppend a line to notes.txt.\n');
  const agent = writeAgent(dir);
  // The event store the default knob set's runs project into (the worker reads VIGIL_DATABASE_URL), started here as `vigil up` would.
  const store = STORE ? await startEmbeddedPostgres({ dataDir: SCRATCH.mkdir('store-'), durable: false, port: await freePort() }) : null;
  if (store) process.env.VIGIL_DATABASE_URL = store.url;
  const native = await NativeConnection.connect({ address: server.address });
  const connection = await Connection.connect({ address: server.address });
  try {
    const worker = await createVigilWorker({
      connection: native,
      namespace: 'default',
      taskQueue: 'bench',
      tuning: { ...DEFAULT_TUNING, activitySlots: SLOTS, workflowSlots: WORKFLOW_SLOTS, gitNiceness: GIT_NICENESS },
      codec: null,
    });
    await worker.runUntil(async () => {
      const client = new Client({ connection });
      for (const name of KNOB_SETS)
        report(
          `iterations, ${name} knobs${name === 'default' && STORE ? ' (event store on)' : ''}`,
          await measuredRun(client, server, store, knobSet(name, agent, 0, ITERATIONS), name, prd),
        );
      for (const runs of CONCURRENT) await benchLoad(client, server, agent, prd, runs);
    });
  } finally {
    await connection.close();
    await native.close();
    await server.stop();
    await store?.stop();
    SCRATCH.server = null;
    rmSync(dir, { recursive: true, force: true });
  }
}

try {
  await benchTreeHash();
  await benchIterations();
} finally {
  CGROUP?.close();
  SCRATCH.remove();
}
