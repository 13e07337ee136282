/**
 * Owns `vigil doctor [--provider P] [--json]`: is this machine ready for a run? One line per check
 * (✓ or ✗, and the fix for every ✗): which agent CLIs are installed and their versions, which of
 * each preset's optional flags the CLI advertises or lacks, whether its credential variables are
 * set (names only, never values), whether Temporal answers and whether a worker polls the task
 * queue, whether an open run started before the release window (a release this one may not
 * replay; cli/release-window.ts), which sandbox a worker here would run agents in (and why not), what
 * it shows of the toolchain and hides, whether the tests run in it and whether an escalation reaches
 * anyone (cli/doctor-setup.ts). Exit 0 when everything the chosen provider needs is ok, 1 otherwise, 2 for an unknown
 * provider. `temporalCheck` is the default Temporal probe, built on cli/connection.ts. Where each
 * provider's calls go and whether its key is accepted: offline, not checked (it says so); with
 * `--deep`, one request for one token each (cli/doctor-deep.ts).
 */
import proto from '@temporalio/proto';
import { isProviderName, PROVIDER_NAMES, PROVIDERS, type ProviderName, type ProviderPreset } from '../lib/providers/index.js';
import { probeProvider, type ProbeResult } from '../lib/providers/probe.js';
import { EXIT, withClient, type Endpoint } from './connection.js';
import { OUTSIDE_FIX, openRunsReport, windowCheck } from './release-window.js';
import type { WindowReport } from '../rules/release-window.js';
import { describeSandbox } from '../lib/sandbox-host.js';
import { describeLimits } from '../lib/sandbox-limits.js';
import { cgroupSettings } from '../lib/sandbox-cgroups.js';
import { ghReady } from '../lib/gh.js';
import type { SandboxMode } from '../schemas/sandbox.js';
import type { DoctorCheck } from '../schemas/cli-output.js';
import { agentCommandChecks } from './doctor-command.js';
import { notifyCheck, testsInSandboxCheck, toolchainChecks } from './doctor-setup.js';
import type { NotifyKnobs } from './start-checks.js';
import { endpointLine, endpointTarget, NOT_CHECKED, probeEndpoint, type EndpointAnswer, type EndpointTarget } from './doctor-deep.js';

export type TemporalStatus =
  | {
      ok: true;
      address: string;
      namespace: string;
      pollers: number;
      taskQueue?: string;
      /** The open runs against the release window (cli/release-window.ts); absent: not listed. */
      runs?: WindowReport | { problem: string };
    }
  | { ok: false; problem: string };

export interface DoctorOptions {
  /** Check only this provider (and require it); default: every agent CLI, at least one ready. */
  provider?: string;
  json: boolean;
  /** Environment the CLIs are looked up and probed in; default process.env. */
  env?: NodeJS.ProcessEnv;
  connect: () => Promise<TemporalStatus>;
  /** Where output lines go; default stdout. */
  out?: (line: string) => void;
  /** Per probed command; default 30 s (some CLIs take several seconds to print their help). */
  timeoutMs?: number;
  /** User id the worker would run as; default this process's (null where there is none). */
  uid?: number | null;
  /** The `command` provider's agent command (the agentCommand knob as a start here would resolve it). */
  agentCommand?: readonly string[];
  /** Send each provider's endpoint a one-token request with the key (cli/doctor-deep.ts); default: offline. */
  deep?: boolean;
  /** The deliver knob a start here would use: with `pr`, gh must be installed and logged in. */
  deliver?: 'branch' | 'pr' | 'none';
  /** The notification knobs a start here would use: where an escalation would go (cli/doctor-setup.ts). */
  notify?: NotifyKnobs;
  /** `--repo DIR`: run its test command outside and inside the sandbox (with the testCommand knob a start here would use). */
  tests?: { repo: string; command: string };
}

export interface DoctorProvider extends ProbeResult {
  installHint: string | null;
  /** Installed, help readable, one credential variable set (when it has any), no other blocker. */
  ready: boolean;
}

export interface DoctorReport {
  ok: boolean;
  /** The provider asked for, or null for all. */
  provider: ProviderName | null;
  providers: DoctorProvider[];
  temporal: TemporalStatus;
  /** The isolation a worker on this machine would apply to agent calls (docs/security.md, The agent's sandbox). */
  sandbox: { mode: SandboxMode; applies: boolean; detail: string };
  checks: DoctorCheck[];
  /** Whether requests were sent to the providers' endpoints (--deep). */
  deep: boolean;
  /** What the doctor did not check, said plainly. */
  notChecked: string[];
}

/**
 * gemini 0.61 takes 6-12 s to print --version or --help on a busy two-core machine: probe with a
 * longer timeout than the worker's default, and two CLIs at a time.
 */
const DOCTOR_PROBE_TIMEOUT_MS = 30_000;
const PROBE_CONCURRENCY = 2;

/** Maps with at most `limit` calls in flight, keeping the order. */
async function mapLimit<T, R>(items: T[], limit: number, fn: (item: T) => Promise<R>): Promise<R[]> {
  const results: R[] = new Array<R>(items.length);
  let next = 0;
  const lane = async (): Promise<void> => {
    while (next < items.length) {
      const i = next++;
      results[i] = await fn(items[i] as T);
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, lane));
  return results;
}

/** Pollers seen within this window count as live (a long poll lasts about a minute). */
const LIVE_POLLER_MS = 2 * 60_000;

const tsMs = (ts: proto.google.protobuf.ITimestamp | null | undefined): number =>
  ts ? Number(String(ts.seconds ?? 0)) * 1000 + Math.floor((ts.nanos ?? 0) / 1e6) : 0;

/**
 * The default `connect` of `vigil doctor`: connects like every other verb (cli/connection.ts)
 * and counts the live pollers (distinct worker identities) of the task queue, workflow and
 * activity sides, then lists the open runs against the release window. Never throws: an
 * unreachable server or a missing namespace is `ok: false`.
 */
export async function temporalCheck(ep: Endpoint): Promise<TemporalStatus> {
  const { address, namespace, taskQueue } = ep;
  try {
    return await withClient(ep, async (client, connection) => {
      const T = proto.temporal.api.enums.v1.TaskQueueType;
      const identities = new Set<string>();
      const since = Date.now() - LIVE_POLLER_MS;
      for (const taskQueueType of [T.TASK_QUEUE_TYPE_WORKFLOW, T.TASK_QUEUE_TYPE_ACTIVITY]) {
        const r = await connection.withDeadline(Date.now() + 5000, () =>
          connection.workflowService.describeTaskQueue({ namespace, taskQueue: { name: taskQueue }, taskQueueType }),
        );
        for (const p of r.pollers ?? []) {
          if (p.lastAccessTime && tsMs(p.lastAccessTime) < since) continue;
          identities.add(p.identity ?? `poller-${identities.size}`);
        }
      }
      const runs = await connection.withDeadline(Date.now() + 15_000, () => openRunsReport(client));
      return { ok: true as const, address, namespace, taskQueue, pollers: identities.size, runs };
    });
  } catch (err) {
    const message = err instanceof Error ? err.message : String(err);
    const first = message.split('\n')[0] ?? message;
    return {
      ok: false,
      problem: /cannot reach Temporal/.test(first) ? first : `Temporal at ${address} (namespace ${namespace}): ${first}`,
    };
  }
}

function joinOr(names: string[]): string {
  if (names.length <= 1) return names.join('');
  return `${names.slice(0, -1).join(', ')} or ${names.at(-1) ?? ''}`;
}

/**
 * Claude Code refuses --dangerously-skip-permissions (passed to every builder call) as root unless
 * IS_SANDBOX=1: "cannot be used with root/sudo privileges for security reasons" (2.1.x).
 */
function claudeRootCheck(uid: number | null, env: NodeJS.ProcessEnv, required: boolean, sandboxed: boolean): DoctorCheck | null {
  if (uid !== 0) return null;
  if (sandboxed)
    return {
      name: 'claude.root',
      ok: true,
      required,
      detail: 'the worker runs as root, but agents run as an unprivileged user in the sandbox',
      fix: null,
    };
  return env.IS_SANDBOX === '1'
    ? {
        name: 'claude.root',
        ok: true,
        required,
        detail: 'running as root with IS_SANDBOX=1: builders may skip permission prompts',
        fix: null,
      }
    : {
        name: 'claude.root',
        ok: false,
        required,
        detail: 'running as root: claude refuses --dangerously-skip-permissions, so every building call would fail',
        fix: 'run the worker as a non-root user, or set IS_SANDBOX=1 if this machine is a disposable sandbox',
      };
}

function providerChecks(preset: ProviderPreset, p: ProbeResult, required: boolean, env: NodeJS.ProcessEnv = {}): DoctorCheck[] {
  const name = preset.name;
  const hint = preset.installHint ?? `install ${name}`;
  const checks: DoctorCheck[] = [];
  if (p.binaryPath === null) {
    checks.push({ name, ok: false, required, detail: `not installed (${p.problem ?? 'not found'})`, fix: `install it: ${hint}` });
    return checks;
  }
  const version = p.version ?? 'version unknown (--version failed)';
  if (!p.helpOk) {
    checks.push({
      name,
      ok: false,
      required,
      detail: `${p.binaryPath}, ${version}; its help cannot be read: ${p.problem ?? 'unknown error'}`,
      fix: `check that \`${[preset.binary ?? name, ...preset.helpArgs].join(' ')}\` works, or reinstall: ${hint}`,
    });
    return checks;
  }
  checks.push({ name, ok: true, required, detail: `${p.binaryPath}, ${version}`, fix: null });

  const total = preset.optionalFlags.length;
  if (total > 0) {
    const has = p.advertised.length > 0 ? `advertises ${p.advertised.join(' ')}` : 'advertises none of them';
    checks.push(
      p.missing.length === 0
        ? {
            name: `${name}.flags`,
            ok: true,
            required: false,
            detail: `all ${total} optional flag${total === 1 ? '' : 's'}: ${p.advertised.join(' ')}`,
            fix: null,
          }
        : {
            name: `${name}.flags`,
            ok: false,
            required: false,
            detail: `lacks ${p.missing.join(' ')} (${has}); Vigil runs without them`,
            fix: `optional: upgrade for them: ${hint}`,
          },
    );
  }

  if (name === 'claude') {
    // Batched rounds (activities/round-batch.ts): a round's members as one call with declared sub-agents.
    // The knob (batchRounds, VIGIL_BATCH_ROUNDS) can turn them off where the CLI could batch.
    const can = p.advertised.includes('--agents') && p.advertised.includes('--json-schema');
    const off = env.VIGIL_BATCH_ROUNDS?.trim().toLowerCase() === 'off';
    checks.push(
      can && off
        ? {
            name: `${name}.batch`,
            ok: true,
            required: false,
            detail:
              'batched rounds turned off (VIGIL_BATCH_ROUNDS=off): one call per council member and reviewer, though this claude could batch them',
            fix: null,
          }
        : can
          ? {
              name: `${name}.batch`,
              ok: true,
              required: false,
              detail:
                "batched rounds: --agents and --json-schema: a council round's members and a review's reviewers go out as one " +
                'call each (knob batchRounds=off: one call each)',
              fix: null,
            }
          : {
              name: `${name}.batch`,
              ok: false,
              required: false,
              detail: 'no batched rounds (needs --agents and --json-schema): one call per council member and reviewer',
              fix: `optional: upgrade for them: ${hint}`,
            },
    );
  }

  if (p.credentials.length > 0) {
    const anySet = p.credentials.some((c) => c.set);
    const states = p.credentials.map((c) => `${c.name} ${c.set ? 'set' : 'not set'}`).join(', ');
    checks.push({
      name: `${name}.credentials`,
      ok: anySet,
      required,
      detail: anySet ? states : `none set (${states})`,
      fix: anySet ? null : `set ${joinOr(p.credentials.map((c) => c.name))} in the environment the worker runs in`,
    });
  }
  return checks;
}

function ready(p: ProbeResult, checks: DoctorCheck[]): boolean {
  return p.binaryPath !== null && p.helpOk && checks.every((c) => c.ok || c.name.endsWith('.flags') || c.name.endsWith('.batch'));
}

function temporalChecks(t: TemporalStatus): DoctorCheck[] {
  if (!t.ok) {
    return [
      {
        name: 'temporal',
        ok: false,
        required: true,
        detail: t.problem,
        fix:
          'start a server with `vigil server` (or `vigil up`), or point Vigil at a running one: TEMPORAL_ADDRESS, ' +
          'TEMPORAL_NAMESPACE, TEMPORAL_API_KEY, TEMPORAL_TLS_*, or a temporal.toml profile (--profile)',
      },
      {
        name: 'worker',
        ok: false,
        required: true,
        detail: 'cannot tell: Temporal is not reachable',
        fix: 'once the server is up, start a worker with `vigil worker`',
      },
    ];
  }
  const queue = t.taskQueue === undefined ? 'the task queue' : `task queue "${t.taskQueue}"`;
  return [
    { name: 'temporal', ok: true, required: true, detail: `reachable at ${t.address}, namespace ${t.namespace}`, fix: null },
    t.pollers > 0
      ? { name: 'worker', ok: true, required: true, detail: `${t.pollers} worker${t.pollers === 1 ? '' : 's'} polling ${queue}`, fix: null }
      : {
          name: 'worker',
          ok: false,
          required: true,
          detail: `no worker is polling ${queue}`,
          fix: 'start one with `vigil worker` (or `vigil up`)',
        },
    ...(t.runs ? [runsCheck(t.runs)] : []),
  ];
}

/**
 * The open runs against the release window (docs/operations.md, Upgrading Vigil under open
 * runs): a ✗ that does not block when one started before the window this release replays.
 */
function runsCheck(r: WindowReport | { problem: string }): DoctorCheck {
  if ('problem' in r)
    return { name: 'runs', ok: true, required: false, detail: `not checked: the open runs could not be listed (${r.problem})`, fix: null };
  const c = windowCheck(r);
  return { name: 'runs', ok: c.ok, required: false, detail: c.detail, fix: c.ok ? null : OUTSIDE_FIX };
}

/**
 * Which isolation a worker started here would apply to agent calls, test runs and gates, and why
 * not where it cannot. Required only under VIGIL_SANDBOX=strict, where a worker without it runs
 * nothing; under auto a worker without it runs agents unsandboxed (a ✗ that does not block).
 */
function sandboxCheck(s: ReturnType<typeof describeSandbox>): DoctorCheck {
  if (s.applies)
    return {
      name: 'sandbox',
      ok: s.problem === null,
      required: false,
      detail: s.problem ? `${s.line} (${s.problem})` : s.line,
      fix: s.problem ? 'set VIGIL_SANDBOX to auto, strict or off' : null,
    };
  if (s.mode === 'off') return { name: 'sandbox', ok: true, required: false, detail: s.line, fix: null };
  return {
    name: 'sandbox',
    ok: false,
    required: s.mode === 'strict',
    detail: s.line,
    fix:
      'install bubblewrap (scripts/install-sandbox.sh, or apt-get install bubblewrap) where user namespaces are allowed, or set ' +
      'VIGIL_SANDBOX=off to run agents as the worker on purpose',
  };
}

/**
 * Whether a worker here can hold its sandboxed calls to their limits (docs/security.md, Limits
 * inside the sandbox): cgroups it can make (a real trial), or the fallback, which it names with
 * what it does not hold. Never required: the calls run either way.
 */
function limitsCheck(s: ReturnType<typeof describeSandbox>, env: NodeJS.ProcessEnv): DoctorCheck {
  if (!s.applies)
    return s.mode === 'off'
      ? {
          name: 'sandbox.limits',
          ok: true,
          required: false,
          detail: 'none: the sandbox is off, and the limits are the sandbox’s',
          fix: null,
        }
      : {
          name: 'sandbox.limits',
          ok: false,
          required: false,
          detail: 'none: calls run outside the sandbox here',
          fix: 'make the sandbox work (the line above)',
        };
  const settings = cgroupSettings(env);
  const l = describeLimits(settings);
  return {
    name: 'sandbox.limits',
    ok: l.cgroup,
    required: false,
    detail: l.line,
    fix: l.cgroup
      ? null
      : settings.fallback
        ? 'unset VIGIL_SANDBOX_LIMITS (fallback turns the cgroups off)'
        : 'run the worker as root, or give it a delegated cgroup (systemd: Delegate=yes with DelegateSubgroup=, or ' +
          'VIGIL_SANDBOX_CGROUP=<a cgroup it may write>)',
  };
}

/**
 * A provider's endpoint lines: what its configuration gets wrong (codex), and where its calls go,
 * not checked offline, or what the one-token request of --deep found.
 */
function endpointChecks(
  n: ProviderName,
  where: ReturnType<typeof endpointTarget>,
  answer: EndpointAnswer | null,
  deep: boolean,
  required: boolean,
): DoctorCheck[] {
  const checks: DoctorCheck[] = [...where.problems.map((c) => ({ ...c, required: c.required && required }))];
  if (where.configLine !== null) checks.push({ name: `${n}.config`, ok: true, required: false, detail: where.configLine, fix: null });
  const t = where.target;
  if (t === null) {
    checks.push({ name: `${n}.endpoint`, ok: true, required: false, detail: `not checked: ${where.why ?? 'unknown endpoint'}`, fix: null });
  } else if (t.key === null) {
    checks.push({
      name: `${n}.endpoint`,
      ok: true,
      required: false,
      detail: `not checked: calls go to ${t.baseUrl} (${t.urlSource}), but ${t.keySource} is not set${deep ? '' : ' (and no request is sent without --deep)'}`,
      fix: null,
    });
  } else {
    checks.push(endpointLine(t, deep ? answer : null, required));
  }
  return checks;
}

function line(c: DoctorCheck): string {
  const label = c.name.replace('.', ' ');
  return `  ${c.ok ? '✓' : '✗'} ${label}: ${c.detail}${c.ok || c.fix === null ? '' : ` — fix: ${c.fix}`}`;
}

/** Runs every check and prints them (or the JSON report). Returns the exit code. */
export async function doctorCommand(opts: DoctorOptions): Promise<number> {
  const out = opts.out ?? ((l: string): void => void process.stdout.write(`${l}\n`));
  const env = opts.env ?? process.env;
  const uid = opts.uid !== undefined ? opts.uid : (process.getuid?.() ?? null);
  const chosen = opts.provider?.trim() || null;
  if (chosen !== null && !isProviderName(chosen)) {
    process.stderr.write(`vigil: unknown provider "${chosen}"; one of ${PROVIDER_NAMES.join(', ')}\n`);
    return EXIT.usage;
  }
  const names: ProviderName[] = chosen !== null ? [chosen] : PROVIDER_NAMES.filter((n) => PROVIDERS[n].binary !== null);
  const probeOpts = { env, timeoutMs: opts.timeoutMs ?? DOCTOR_PROBE_TIMEOUT_MS };
  const deep = opts.deep === true;
  // Where each provider's calls go, as its CLI reads its configuration; with --deep, one request each.
  const targets = names.map((n) => endpointTarget(n, env));
  const ask = async (t: EndpointTarget | null): Promise<EndpointAnswer | null> =>
    deep && t !== null && t.key !== null ? probeEndpoint(t, t.key) : null;
  const [temporal, probes, answers] = await Promise.all([
    opts.connect().catch((err: unknown): TemporalStatus => ({
      ok: false,
      problem: err instanceof Error ? (err.message.split('\n')[0] ?? err.message) : String(err),
    })),
    mapLimit(names, PROBE_CONCURRENCY, (n) => probeProvider(PROVIDERS[n], probeOpts)),
    Promise.all(targets.map((t) => ask(t.target))),
  ]);

  const sandbox = describeSandbox(env);
  const checks: DoctorCheck[] = [];
  const providers: DoctorProvider[] = [];
  names.forEach((n, i) => {
    const preset = PROVIDERS[n];
    const p = probes[i] as ProbeResult;
    if (preset.binary === null) {
      // The command provider runs the agentCommand as it is: that command is what must be there.
      if (chosen === 'command') checks.push(...agentCommandChecks(opts.agentCommand ?? [], env));
      else checks.push({ name: n, ok: true, required: false, detail: 'runs your agentCommand; no CLI of its own to check', fix: null });
      return;
    }
    const own = providerChecks(preset, p, chosen !== null, env);
    const root = n === 'claude' && p.binaryPath !== null ? claudeRootCheck(uid, env, chosen !== null, sandbox.applies) : null;
    if (root !== null) own.push(root);
    own.push(...endpointChecks(n, targets[i] as ReturnType<typeof endpointTarget>, answers[i] ?? null, deep, chosen !== null));
    providers.push({ ...p, installHint: preset.installHint, ready: ready(p, own) });
    checks.push(...own);
  });
  if (chosen === null) {
    const usable = providers.filter((p) => p.ready).map((p) => p.provider);
    checks.push(
      usable.length > 0
        ? { name: 'agents', ok: true, required: true, detail: `ready: ${usable.join(', ')}`, fix: null }
        : {
            name: 'agents',
            ok: false,
            required: true,
            detail: 'no agent CLI is ready (installed, a credential variable set, nothing blocking it)',
            fix: 'install one and set its credential variable (see the lines above), or use your own command: `vigil doctor --provider command`',
          },
    );
  }
  const agentChecks = checks.length;
  checks.push(sandboxCheck(sandbox), limitsCheck(sandbox, env));
  if (sandbox.applies) checks.push(...toolchainChecks(env));
  if (opts.tests && sandbox.applies) checks.push(await testsInSandboxCheck(opts.tests.repo, opts.tests.command, env));
  const sandboxChecks = checks.length - agentChecks;
  if (opts.notify) checks.push(notifyCheck(opts.notify, env));
  if (opts.deliver === 'pr') checks.push(await ghCheck(env));
  const temporalFrom = checks.length;
  checks.push(...temporalChecks(temporal));

  const notChecked = [
    ...(deep
      ? NOT_CHECKED
      : ['the providers’ endpoints and keys: no request was sent (`vigil doctor --deep` sends each a one-token request with its key)']),
    ...(opts.tests || !sandbox.applies
      ? []
      : ['a test command inside the sandbox: `vigil doctor --repo DIR` runs the repository’s tests outside and inside it']),
  ];
  const report: DoctorReport = {
    ok: checks.every((c) => c.ok || !c.required),
    provider: chosen,
    providers,
    temporal,
    sandbox: { mode: sandbox.mode, applies: sandbox.applies, detail: sandbox.line },
    checks,
    deep,
    notChecked,
  };
  if (opts.json) {
    out(JSON.stringify(report, null, 2));
  } else {
    out(chosen === null ? 'Agent CLIs' : `Agent CLI (${chosen})`);
    for (const c of checks.slice(0, agentChecks)) out(line(c));
    out('Sandbox');
    for (const c of checks.slice(agentChecks, agentChecks + sandboxChecks)) out(line(c));
    if (temporalFrom > agentChecks + sandboxChecks) out('Delivery');
    for (const c of checks.slice(agentChecks + sandboxChecks, temporalFrom)) out(line(c));
    out('Temporal');
    for (const c of checks.slice(temporalFrom)) out(line(c));
    out('Not checked');
    for (const n of notChecked) out(`  - ${n}`);
    out(report.ok ? 'ready' : 'not ready: fix the required ✗ above');
  }
  return report.ok ? 0 : 1;
}

/** deliver=pr: a run that ends done opens its pull request through gh, which must be installed and logged in. */
export async function ghCheck(env: NodeJS.ProcessEnv): Promise<DoctorCheck> {
  const r = await ghReady(process.cwd(), env);
  return r.ok
    ? { name: 'gh', ok: true, required: true, detail: `${r.version ?? 'gh'}, logged in: deliver=pr opens pull requests`, fix: null }
    : {
        name: 'gh',
        ok: false,
        required: true,
        detail: `deliver=pr, but ${r.problem ?? 'gh is not ready'}: runs would deliver their branch without a pull request`,
        fix: r.version ? "run `gh auth login` as the worker's user" : 'install gh (https://cli.github.com), then `gh auth login`',
      };
}
