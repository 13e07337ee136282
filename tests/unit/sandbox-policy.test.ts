/**
 * The sandbox's rules (lib/sandbox-policy.ts, lib/sandbox-net.ts) fed facts and
 * checked verdict by verdict: the mode, the platform verdict, the endpoints a call may reach, the
 * mount plan by role, what is never shown, and the refusals an output shows. The sandbox itself,
 * against bubblewrap and a hostile agent: tests/unit/sandbox.test.ts.
 */
import { describe, expect, it } from 'vitest';
import { MAX_SANDBOX_DENIALS, SandboxReportSchema } from '../../schemas/sandbox.js';
import { defaultKnobs, KNOBS } from '../../schemas/knobs.js';
import {
  addDenial,
  allowedEndpoints,
  allowedTarget,
  bridgePorts,
  deniedInOutput,
  effectiveSandboxMode,
  endpointText,
  parseEndpoint,
  registriesFor,
  registryEndpoints,
  sandboxEnv,
  sandboxPlan,
  sandboxVerdict,
  SANDBOX_BRIDGE_PATH,
  SANDBOX_PROXY_DIR,
  SANDBOX_ROOT_UID,
  type SandboxFacts,
} from '../../lib/sandbox-policy.js';
import { MAX_DENIALS } from '../../lib/sandbox-net.js';

const OK = { bwrap: '/usr/bin/bwrap', version: '0.8.0', problem: null };
const NONE = { bwrap: null, version: null, problem: 'bubblewrap (bwrap) is not installed' };

describe('the mode', () => {
  it("is the run's when it says, else the worker's; a strict worker is never lowered", () => {
    expect(effectiveSandboxMode(undefined, 'auto')).toBe('auto');
    expect(effectiveSandboxMode(null, 'off')).toBe('off');
    expect(effectiveSandboxMode('off', 'auto')).toBe('off');
    expect(effectiveSandboxMode('strict', 'off')).toBe('strict');
    expect(effectiveSandboxMode('off', 'strict')).toBe('strict');
    expect(effectiveSandboxMode('auto', 'strict')).toBe('strict');
  });

  it('is a knob, auto by default, with the registries open by default', () => {
    expect(defaultKnobs().sandbox).toBe('auto');
    expect(defaultKnobs().sandboxRegistries).toBe(true);
    expect(KNOBS.sandbox.env).toBe('VIGIL_SANDBOX');
  });

  it('auto sandboxes where it can and says why not elsewhere; strict refuses, saying what to do; off says so', () => {
    expect(sandboxVerdict('auto', OK)).toEqual({ run: 'sandboxed' });
    expect(sandboxVerdict('strict', OK)).toEqual({ run: 'sandboxed' });
    const auto = sandboxVerdict('auto', NONE);
    expect(auto.run).toBe('unsandboxed');
    expect(auto.run !== 'sandboxed' && auto.reason).toContain('bubblewrap (bwrap) is not installed');
    const strict = sandboxVerdict('strict', NONE);
    expect(strict.run).toBe('refused');
    expect(strict.run !== 'sandboxed' && strict.reason).toMatch(/install-sandbox\.sh/);
    const off = sandboxVerdict('off', OK);
    expect(off).toEqual({ run: 'unsandboxed', reason: expect.stringContaining('sandbox=off') });
    // A platform that has bwrap but cannot make namespaces is not a sandbox.
    expect(sandboxVerdict('strict', { ...OK, problem: 'user namespaces refused' }).run).toBe('refused');
  });
});

describe('the network', () => {
  it('parses endpoints from host:port and URLs, and nothing else', () => {
    expect(parseEndpoint('api.anthropic.com:443')).toEqual({ host: 'api.anthropic.com', port: 443 });
    expect(parseEndpoint('https://API.example.com/v1')).toEqual({ host: 'api.example.com', port: 443 });
    expect(parseEndpoint('http://127.0.0.1:4010/v1')).toEqual({ host: '127.0.0.1', port: 4010 });
    expect(parseEndpoint('[::1]:8080')).toEqual({ host: '::1', port: 8080 });
    expect(parseEndpoint('ftp://x')).toBeNull();
    expect(parseEndpoint('example.com')).toBeNull();
    expect(parseEndpoint('x:99999')).toBeNull();
  });

  it("a builder reaches its provider, the base URLs its environment configures and the operator's extras; registries only when asked", () => {
    const env = { ANTHROPIC_BASE_URL: 'http://127.0.0.1:4010', HOME: '/root', DATABASE_URL: 'postgres://u:p@127.0.0.1:5432/x' };
    const hosts = (o: Parameters<typeof allowedEndpoints>[0]): string[] => allowedEndpoints(o).map((e) => `${e.host}:${e.port}`);
    expect(hosts({ kind: 'builder', provider: 'claude', env, extra: ['gw.internal:8443'], registries: false })).toEqual([
      'api.anthropic.com:443',
      '127.0.0.1:4010',
      'gw.internal:8443',
    ]);
    expect(hosts({ kind: 'reviewer', provider: 'command', env: {}, extra: [], registries: false })).toEqual([]);
    expect(hosts({ kind: 'builder', provider: 'codex', env: {}, extra: [], registries: false })).toContain('api.openai.com:443');
    // The test command reaches no model; with the registries, npm and PyPI (and a configured mirror).
    expect(hosts({ kind: 'tests', provider: null, env, extra: ['gw.internal:8443'], registries: false })).toEqual([]);
    const reg = hosts({
      kind: 'tests',
      provider: null,
      env: { npm_config_registry: 'https://npm.mirror.local/' },
      extra: [],
      registries: true,
    });
    expect(reg).toEqual(expect.arrayContaining(['registry.npmjs.org:443', 'pypi.org:443', 'npm.mirror.local:443']));
    expect(hosts({ kind: 'gate', provider: 'claude', env, extra: ['x:1'], registries: true })).toEqual([]);
    // The builder reaches them as the test runs do; a reviewing role never, whatever the run says.
    expect(hosts({ kind: 'builder', provider: 'claude', env: {}, extra: [], registries: true })).toEqual(
      expect.arrayContaining(['api.anthropic.com:443', 'registry.npmjs.org:443', 'files.pythonhosted.org:443']),
    );
    expect(
      hosts({
        kind: 'reviewer',
        provider: 'claude',
        env: { PIP_INDEX_URL: 'https://pypi.mirror.local/simple' },
        extra: [],
        registries: true,
      }),
    ).toEqual(['api.anthropic.com:443']);
    // The registries the proxy logs fetches from, open or not: the known ones and the configured ones.
    expect(
      registryEndpoints({ PIP_INDEX_URL: 'https://pypi.mirror.local/simple', GOPROXY: 'https://goproxy.io,direct' }).map(endpointText),
    ).toEqual(
      expect.arrayContaining([
        'registry.npmjs.org:443',
        'pypi.org:443',
        'files.pythonhosted.org:443',
        'pypi.mirror.local:443',
        'goproxy.io:443',
      ]),
    );
    expect(registriesFor('builder') && registriesFor('tests')).toBe(true);
    expect(registriesFor('reviewer') || registriesFor('gate')).toBe(false);
    // The event store's URL is no base URL.
    expect(hosts({ kind: 'builder', provider: 'command', env, extra: [], registries: false })).not.toContain('127.0.0.1:5432');
  });

  it('lets through exact endpoints, and loopback names as one host, nothing else', () => {
    const allow = [
      { host: 'api.anthropic.com', port: 443 },
      { host: 'localhost', port: 4010 },
    ];
    expect(allowedTarget('API.anthropic.com', 443, allow)).toEqual(allow[0]);
    expect(allowedTarget('api.anthropic.com', 80, allow)).toBeNull();
    expect(allowedTarget('evil.example', 443, allow)).toBeNull();
    expect(allowedTarget('127.0.0.1', 4010, allow)).toEqual(allow[1]);
    expect(allowedTarget('[::1]', 4010, allow)).toEqual(allow[1]);
    expect(allowedTarget('127.0.0.1', 7233, allow)).toBeNull();
    // A loopback endpoint does not open other hosts on its port.
    expect(allowedTarget('10.0.0.1', 4010, allow)).toBeNull();
  });

  it('the bridge listens on allowed loopback ports and the watched ones, the proxy on a port apart', () => {
    expect(
      bridgePorts(
        [
          { host: '127.0.0.1', port: 3128 },
          { host: 'api.x', port: 443 },
        ],
        [7233, 5432],
      ),
    ).toEqual({ listen: [3128, 5432, 7233], proxyPort: 3129 });
    expect(bridgePorts([], [])).toEqual({ listen: [], proxyPort: 3128 });
  });

  it('gives the proxy to the process only when it has a network, and PWD always', () => {
    expect(sandboxEnv({ cwd: '/r', home: '/root', proxyPort: null })).toEqual({
      PWD: '/r',
      HOME: '/root',
      TMPDIR: '/tmp',
      TMP: '/tmp',
      TEMP: '/tmp',
    });
    const env = sandboxEnv({ cwd: '/r', home: '/root', proxyPort: 3128 });
    expect(env.HTTPS_PROXY).toBe('http://127.0.0.1:3128');
    expect(env.http_proxy).toBe('http://127.0.0.1:3128');
    expect(env.NO_PROXY).toBe('');
  });
});

function facts(over: Partial<SandboxFacts> = {}): SandboxFacts {
  return {
    kind: 'builder',
    repo: '/work/repo',
    cwd: '/work/repo',
    uid: 0,
    gid: 0,
    system: [
      { path: '/usr', linkTo: null },
      { path: '/bin', linkTo: 'usr/bin' },
      { path: '/etc', linkTo: null },
    ],
    secrets: [
      { path: '/etc/shadow', dir: false },
      { path: '/etc/ssh', dir: true },
    ],
    home: '/root',
    homeSource: '/root/.vigil/private/run-1/sandbox-home/claude',
    vigilReadable: [{ path: '/opt/vigil/dist/lib/sandbox-bridge.js', dir: false }],
    callFiles: [],
    readable: [],
    writable: [],
    denied: [
      { path: '/root/.vigil', dir: true },
      { path: '/root/.ssh', dir: true },
    ],
    vigilDirs: { root: true, runs: true, handoffs: true, signals: true },
    gitControl: [
      { path: '/work/repo/.git/config', dir: false },
      { path: '/work/repo/.git/hooks', dir: true },
    ],
    proxyDir: '/tmp/vigil-sbx-abc',
    ...over,
  };
}

/** The plan's mounts as `op src dest` triples (and `--tmpfs dest`), in order. */
function mounts(args: string[]): string[] {
  const out: string[] = [];
  for (let i = 0; i < args.length; i++) {
    const a = args[i] as string;
    if (a === '--bind' || a === '--ro-bind' || a === '--symlink') out.push(`${a} ${args[++i]} ${args[++i]}`);
    else if (a === '--tmpfs') out.push(`${a} ${args[++i]}`);
  }
  return out;
}

describe('the mount plan', () => {
  it('isolates every namespace, drops every capability, runs root as an unprivileged uid, ends with the working directory', () => {
    const { args } = sandboxPlan(facts());
    for (const f of ['--unshare-user', '--unshare-pid', '--unshare-net', '--unshare-ipc', '--die-with-parent', '--new-session'])
      expect(args).toContain(f);
    expect(args.join(' ')).toContain(`--uid ${SANDBOX_ROOT_UID} --gid ${SANDBOX_ROOT_UID}`);
    expect(args.join(' ')).toContain('--cap-drop ALL');
    expect(args.slice(-5)).toEqual(['--remount-ro', '/', '--chdir', '/work/repo', '--']);
    expect(sandboxPlan(facts({ uid: 1234, gid: 99 })).args.join(' ')).toContain('--uid 1234 --gid 99');
  });

  it("the builder writes the repository, never Vigil's records or the git files Vigil's own commands would run", () => {
    const plan = sandboxPlan(facts());
    const m = mounts(plan.args);
    expect(plan.repoWritable).toBe(true);
    expect(m).toContain('--bind /work/repo /work/repo');
    expect(m).toContain('--ro-bind /work/repo/.vigil/runs /work/repo/.vigil/runs');
    expect(m).toContain('--ro-bind /work/repo/.vigil/handoffs /work/repo/.vigil/handoffs');
    expect(m).not.toContain('--ro-bind /work/repo/.vigil/signals /work/repo/.vigil/signals');
    expect(m).toContain('--ro-bind /work/repo/.git/config /work/repo/.git/config');
    expect(m).toContain('--ro-bind /work/repo/.git/hooks /work/repo/.git/hooks');
    // Parents first: the repository before what covers parts of it.
    expect(m.indexOf('--bind /work/repo /work/repo')).toBeLessThan(m.indexOf('--ro-bind /work/repo/.vigil/runs /work/repo/.vigil/runs'));
  });

  it("mounts the call's own files over Vigil's read-only records: the prompt read-only, what the CLI writes beside it writable", () => {
    const m = mounts(
      sandboxPlan(
        facts({
          kind: 'reviewer',
          callFiles: [
            {
              src: '/work/repo/.vigil/runs/r/reviewer-0001.prompt.md',
              dest: '/work/repo/.vigil/runs/r/reviewer-0001.prompt.md',
              writable: false,
            },
            {
              src: '/work/repo/.vigil/runs/r/reviewer-0001.aider.chat.history.md',
              dest: '/work/repo/.vigil/runs/r/reviewer-0001.aider.chat.history.md',
              writable: true,
            },
            { src: '/root/.vigil/private/r/checklist-0001.prompt.md', dest: '/run/vigil-files/checklist-0001.prompt.md', writable: false },
          ],
        }),
      ).args,
    );
    const runs = m.indexOf('--ro-bind /work/repo/.vigil/runs /work/repo/.vigil/runs');
    expect(
      m.indexOf('--ro-bind /work/repo/.vigil/runs/r/reviewer-0001.prompt.md /work/repo/.vigil/runs/r/reviewer-0001.prompt.md'),
    ).toBeGreaterThan(runs);
    expect(
      m.indexOf(
        '--bind /work/repo/.vigil/runs/r/reviewer-0001.aider.chat.history.md /work/repo/.vigil/runs/r/reviewer-0001.aider.chat.history.md',
      ),
    ).toBeGreaterThan(runs);
    expect(m).toContain('--ro-bind /root/.vigil/private/r/checklist-0001.prompt.md /run/vigil-files/checklist-0001.prompt.md');
  });

  it('a reviewing role reads the tree, may keep notes in .vigil/, but neither claims completion nor touches the records', () => {
    const plan = sandboxPlan(facts({ kind: 'reviewer' }));
    const m = mounts(plan.args);
    expect(plan.repoWritable).toBe(false);
    expect(m).toContain('--ro-bind /work/repo /work/repo');
    expect(m).not.toContain('--bind /work/repo /work/repo');
    expect(m).toContain('--bind /work/repo/.vigil /work/repo/.vigil');
    expect(m).toContain('--ro-bind /work/repo/.vigil/signals /work/repo/.vigil/signals');
    expect(m).toContain('--ro-bind /work/repo/.vigil/runs /work/repo/.vigil/runs');
    expect(m.indexOf('--bind /work/repo/.vigil /work/repo/.vigil')).toBeLessThan(
      m.indexOf('--ro-bind /work/repo/.vigil/signals /work/repo/.vigil/signals'),
    );
  });

  it("a reviewing call with a signals folder of its own writes its cost report there, never in the repository's signals", () => {
    const m = mounts(
      sandboxPlan(facts({ kind: 'reviewer', signalsSource: '/root/.vigil/private/run-1/call-signals/council-round-0001-m0' })).args,
    );
    expect(m).toContain('--bind /root/.vigil/private/run-1/call-signals/council-round-0001-m0 /work/repo/.vigil/signals');
    expect(m).not.toContain('--ro-bind /work/repo/.vigil/signals /work/repo/.vigil/signals');
    expect(m.indexOf('--bind /work/repo/.vigil /work/repo/.vigil')).toBeLessThan(
      m.indexOf('--bind /root/.vigil/private/run-1/call-signals/council-round-0001-m0 /work/repo/.vigil/signals'),
    );
    // Only a reviewing call gets one: the builder writes the repository's signals, a test run reads them.
    expect(mounts(sandboxPlan(facts({ kind: 'tests', signalsSource: '/x' })).args)).toContain(
      '--ro-bind /work/repo/.vigil/signals /work/repo/.vigil/signals',
    );
    expect(mounts(sandboxPlan(facts({ kind: 'builder', signalsSource: '/x' })).args).some((x) => x.endsWith('/.vigil/signals'))).toBe(
      false,
    );
  });

  it('a gate reads the repository only and has no network at all', () => {
    const plan = sandboxPlan(
      facts({ kind: 'gate', proxyDir: null, vigilDirs: { root: false, runs: false, handoffs: false, signals: false } }),
    );
    expect(plan.repoWritable).toBe(false);
    expect(mounts(plan.args).some((x) => x.includes(SANDBOX_PROXY_DIR))).toBe(false);
    expect(plan.args).toContain('--unshare-net');
  });

  it("shows the system read-only with its secrets hidden, a private /tmp, HOME from Vigil's folder, the proxy's folder", () => {
    const m = mounts(sandboxPlan(facts()).args);
    expect(m).toContain('--ro-bind /usr /usr');
    expect(m).toContain('--symlink usr/bin /bin');
    expect(m).toContain('--ro-bind /dev/null /etc/shadow');
    expect(m).toContain('--tmpfs /etc/ssh');
    expect(m).toContain('--tmpfs /tmp');
    expect(m).toContain('--bind /root/.vigil/private/run-1/sandbox-home/claude /root');
    expect(m).toContain(`--bind /tmp/vigil-sbx-abc ${SANDBOX_PROXY_DIR}`);
    expect(m.indexOf('--ro-bind /etc /etc')).toBeLessThan(m.indexOf('--ro-bind /dev/null /etc/shadow'));
  });

  it('never mounts what lies inside a denied path, hides a denied path inside a mount, refuses a folder holding HOME', () => {
    const plan = sandboxPlan(
      facts({
        readable: [
          { path: '/root/.vigil/tools', dir: true },
          { path: '/root/.ssh/id_ed25519', dir: false },
          { path: '/opt/agent', dir: true },
          { path: '/root', dir: true },
          { path: '/root/.cache/clis/claude', dir: true },
          { path: '/usr/local/bin', dir: true },
          { path: '/work/repo/node_modules/.bin', dir: true },
        ],
        writable: [
          { path: '/root/.vigil', dir: true },
          { path: '/srv/cache', dir: true },
        ],
        denied: [
          { path: '/root/.vigil', dir: true },
          { path: '/root/.ssh', dir: true },
          { path: '/opt/agent/run-secret', dir: false },
        ],
      }),
    );
    const m = mounts(plan.args);
    expect(plan.refused.map((r) => r.path)).toEqual(['/root/.vigil/tools', '/root/.ssh/id_ed25519', '/root', '/root/.vigil']);
    expect(plan.refused.find((r) => r.path === '/root')?.why).toContain('HOME');
    expect(m).toContain('--ro-bind /opt/agent /opt/agent');
    expect(m).toContain('--ro-bind /dev/null /opt/agent/run-secret');
    expect(m).toContain('--ro-bind /root/.cache/clis/claude /root/.cache/clis/claude');
    expect(m).toContain('--bind /srv/cache /srv/cache');
    // Already read-only as part of the system; inside the repository, the repository's mount decides.
    expect(m).not.toContain('--ro-bind /usr/local/bin /usr/local/bin');
    expect(m.some((x) => x.includes('node_modules/.bin'))).toBe(false);
    // Nothing of the denied paths, except hidden.
    expect(m.filter((x) => x.includes('/root/.vigil') && !x.includes('sandbox-home'))).toEqual([]);
    // The .ssh of a HOME the sandbox replaces is not mounted at all.
    expect(m.some((x) => x.includes('.ssh'))).toBe(false);
  });

  it("never shows a builder, a reviewer, the tests or a gate the run's sealed acceptance tests, even when asked", () => {
    // The Wall (activities/acceptance.ts): the sealed copy lives in VIGIL_HOME/private/<run>/acceptance.
    const sealed = '/root/.vigil/private/run-1/acceptance';
    for (const kind of ['builder', 'reviewer', 'tests', 'gate'] as const) {
      const plan = sandboxPlan(
        facts({ kind, readable: [{ path: sealed, dir: true }], writable: [{ path: `${sealed}/test_wall.py`, dir: false }] }),
      );
      expect(
        plan.refused.map((r) => r.path),
        kind,
      ).toEqual([sealed, `${sealed}/test_wall.py`]);
      expect(
        mounts(plan.args).filter((x) => x.includes('/root/.vigil') && !x.includes('sandbox-home')),
        kind,
      ).toEqual([]);
    }
  });

  it('shows the Go bridge of VIGIL_HOME/tools as that one file at a path of its own, and nothing else of VIGIL_HOME', () => {
    const bin = '/root/.vigil/tools/sandbox-bridge/sandbox-bridge';
    const plan = sandboxPlan(
      facts({
        vigilReadable: [],
        bridgeBinary: { path: bin, dir: false },
        // Asked for beside it, by the call or by the operator: refused as ever.
        readable: [
          { path: '/root/.vigil/tools/sandbox-bridge', dir: true },
          { path: `${bin}.sources`, dir: false },
        ],
        writable: [{ path: bin, dir: false }],
      }),
    );
    const m = mounts(plan.args);
    expect(m.filter((x) => x.includes('/root/.vigil') && !x.includes('sandbox-home'))).toEqual([`--ro-bind ${bin} ${SANDBOX_BRIDGE_PATH}`]);
    expect(plan.refused.map((r) => r.path)).toEqual(['/root/.vigil/tools/sandbox-bridge', `${bin}.sources`, bin]);
    // Never a folder, never at its own path.
    const folder = sandboxPlan(facts({ vigilReadable: [], bridgeBinary: { path: '/root/.vigil/tools/sandbox-bridge', dir: true } }));
    expect(mounts(folder.args).some((x) => x.includes(SANDBOX_BRIDGE_PATH) || x.includes('/root/.vigil/tools'))).toBe(false);
    expect(folder.refused[0]?.why).toContain('single file');
    // The Node bridge's files Vigil chose are refused there too: the bridge's binary is the one exception.
    const node = sandboxPlan(
      facts({
        vigilReadable: [
          { path: '/root/.vigil/tools/node/bin/node', dir: false },
          { path: '/opt/vigil/dist/lib/sandbox-bridge.js', dir: false },
        ],
      }),
    );
    expect(node.refused.map((r) => r.path)).toEqual(['/root/.vigil/tools/node/bin/node']);
    expect(mounts(node.args)).toContain('--ro-bind /opt/vigil/dist/lib/sandbox-bridge.js /opt/vigil/dist/lib/sandbox-bridge.js');
  });
});

describe('the refusals an output shows', () => {
  it('reads read-only writes and refused accesses from the usual error messages', () => {
    const out = [
      "Error: EROFS: read-only file system, open '/work/repo/src/a.ts'",
      'sh: 1: cannot create /work/repo/b.txt: Read-only file system',
      "touch: cannot touch '/usr/bin/x': Read-only file system",
      "PermissionError: [Errno 13] Permission denied: '/etc/shadow'",
      'error: could not write config file .git/config: Device or resource busy',
      "mv: cannot move '.git' to '.git2': Device or resource busy",
      "Error: EBUSY: resource busy or locked, rename '.git' -> 'g3'",
      'all good here',
      "Error: EROFS: read-only file system, open '/work/repo/src/a.ts'",
    ].join('\n');
    expect(deniedInOutput(out)).toEqual([
      { kind: 'write', target: '/work/repo/src/a.ts', count: 2 },
      { kind: 'write', target: '/work/repo/b.txt', count: 1 },
      { kind: 'write', target: '/usr/bin/x', count: 1 },
      { kind: 'access', target: '/etc/shadow', count: 1 },
      { kind: 'write', target: '.git/config', count: 1 },
      { kind: 'write', target: '.git', count: 2 },
    ]);
    expect(deniedInOutput('nothing refused\n')).toEqual([]);
  });

  it('counts repeats and keeps a bounded list that the report schema accepts', () => {
    expect(MAX_DENIALS).toBe(MAX_SANDBOX_DENIALS);
    const list: Parameters<typeof addDenial>[0] = [];
    for (let i = 0; i < 100; i++) addDenial(list, { kind: 'connect', target: `h${i % 40}:1` });
    expect(list).toHaveLength(MAX_SANDBOX_DENIALS);
    expect(list[0]?.count).toBe(3);
    expect(SandboxReportSchema.safeParse({ mode: 'auto', applied: true, isolation: 'x', reason: null, denied: list }).success).toBe(true);
  });
});
