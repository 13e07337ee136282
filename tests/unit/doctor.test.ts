/**
 * Tests of `vigil doctor` (cli/doctor.ts) and the CLI probe under it
 * (lib/providers/probe.ts), against the fake agent CLIs (examples/agents/fake-cli) put on a
 * PATH of their own: ✓/✗ lines with versions, fixes and missing optional flags, credentials shown
 * by name only, the JSON report, exit codes, the per-binary probe cache, `presetFlags`, and the
 * default Temporal check against the suite's real dev server.
 */
import {
  appendFileSync,
  chmodSync,
  copyFileSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  utimesSync,
  writeFileSync,
} from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { DefaultLogger, NativeConnection, Runtime, Worker } from '@temporalio/worker';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { advertisedFlags } from '../../lib/providers/help.js';
import { PROVIDERS, type ProviderName } from '../../lib/providers/index.js';
import { clearProbeCache, presetFlags, probeCached, probeProvider } from '../../lib/providers/probe.js';
import { doctorCommand, temporalCheck, type DoctorReport, type TemporalStatus } from '../../cli/doctor.js';
import { OLDEST_REPLAYED_RELEASE, windowReport } from '../../rules/release-window.js';
import { sandboxPlatform } from '../../lib/sandbox-host.js';
import { cgroupProbe } from '../../lib/sandbox-cgroups.js';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const FAKE_CLI = path.join(ROOT, 'examples/agents/fake-cli/fake-cli.mjs');
const SECRET = 'sk-vigil-doctor-SECRET-9f27c1';
const AGENTS: ProviderName[] = ['claude', 'codex', 'gemini', 'aider', 'opencode'];
const FAKE_VERSIONS: Partial<Record<ProviderName, string>> = {
  claude: '2.0.99 (Claude Code, fake)',
  codex: 'codex-cli 0.99.0 (fake)',
  gemini: '0.99.0',
  aider: 'aider 0.99.0',
  opencode: '0.99.0',
};

let tmp: string;

/**
 * A directory holding wrappers of the fake CLIs. Each wrapper appends one JSON line per call to
 * FAKE_CLI_LOG (the fake logs agent calls, not --help/--version), then runs the fake with this
 * node, so PATH can hold nothing but this directory.
 */
function binDir(name: string, providers: ProviderName[]): string {
  const dir = path.join(tmp, name);
  mkdirSync(dir, { recursive: true });
  for (const p of providers) {
    const file = path.join(dir, p);
    writeFileSync(
      file,
      [
        '#!/bin/sh',
        `# Wrapper of the fake ${p} CLI for tests: logs the call, then runs fake-cli.mjs.`,
        `[ -n "$FAKE_CLI_LOG" ] && printf '{"provider":"${p}","wrapper":"%s","args":"%s"}\\n' "$0" "$*" >> "$FAKE_CLI_LOG"`,
        `exec '${process.execPath}' '${FAKE_CLI}' ${p} "$@"`,
        '',
      ].join('\n'),
    );
    chmodSync(file, 0o755);
  }
  return dir;
}

const okTemporal =
  (pollers = 1): (() => Promise<TemporalStatus>) =>
  () =>
    Promise.resolve({ ok: true, address: '127.0.0.1:7233', namespace: 'default', pollers, taskQueue: 'vigil' });

async function doctor(o: {
  provider?: string;
  json?: boolean;
  env: NodeJS.ProcessEnv;
  connect?: () => Promise<TemporalStatus>;
  uid?: number;
  agentCommand?: string[];
}): Promise<{ code: number; text: string; lines: string[] }> {
  const lines: string[] = [];
  const code = await doctorCommand({
    ...(o.provider !== undefined ? { provider: o.provider } : {}),
    json: o.json ?? false,
    env: o.env,
    connect: o.connect ?? okTemporal(),
    out: (l) => lines.push(l),
    // Not root unless a test says so (the suite may run as root).
    uid: o.uid ?? 1000,
    ...(o.agentCommand ? { agentCommand: o.agentCommand } : {}),
  });
  return { code, text: lines.join('\n'), lines };
}

const logLines = (file: string): string[] =>
  existsSync(file)
    ? readFileSync(file, 'utf8')
        .split('\n')
        .filter((l) => l.trim() !== '')
    : [];

beforeAll(() => {
  tmp = mkdtempSync(path.join(os.tmpdir(), 'vigil-doctor-'));
});
afterAll(() => {
  rmSync(tmp, { recursive: true, force: true });
});

describe('probeProvider', () => {
  it('finds a fake CLI on PATH: version, every optional flag advertised, credentials by name', async () => {
    const bin = binDir('all', AGENTS);
    for (const name of AGENTS) {
      const preset = PROVIDERS[name];
      const r = await probeProvider(preset, { env: { PATH: bin, [preset.credentialEnv[0] as string]: SECRET } });
      expect(r.binaryPath).toBe(path.join(bin, name));
      expect(r.helpOk).toBe(true);
      expect(r.problem).toBeNull();
      expect(r.version).toBe(FAKE_VERSIONS[name]);
      expect(r.advertised).toEqual(preset.optionalFlags);
      expect(r.missing).toEqual([]);
      expect(r.credentials[0]).toEqual({ name: preset.credentialEnv[0], set: true });
      expect(JSON.stringify(r)).not.toContain(SECRET);
    }
  });

  it('lists the flags (and subcommands) the help leaves out as missing', async () => {
    const bin = binDir('omit', ['claude', 'codex']);
    const claude = await probeProvider(PROVIDERS.claude, { env: { PATH: bin, FAKE_CLI_HELP_OMIT: '--effort,--fallback-model' } });
    expect(claude.helpOk).toBe(true);
    expect(claude.missing).toEqual(['--fallback-model', '--effort']);
    expect(claude.advertised).not.toContain('--effort');
    const codex = await probeProvider(PROVIDERS.codex, { env: { PATH: bin, FAKE_CLI_HELP_OMIT: 'resume' } });
    expect(codex.missing).toEqual(['resume']);
  });

  it('reports a CLI that is not on PATH, an explicit binary path, and the command provider', async () => {
    const bin = binDir('none', []);
    const r = await probeProvider(PROVIDERS.gemini, { env: { PATH: bin } });
    expect(r).toMatchObject({ binaryPath: null, version: null, helpOk: false, advertised: [] });
    expect(r.missing).toEqual(PROVIDERS.gemini.optionalFlags);
    expect(r.problem).toContain('`gemini` is not on PATH');

    const other = binDir('explicit', ['claude']);
    const explicit = await probeProvider(PROVIDERS.claude, { binary: path.join(other, 'claude'), env: { PATH: bin } });
    expect(explicit.binaryPath).toBe(path.join(other, 'claude'));
    expect(explicit.helpOk).toBe(true);

    const command = await probeProvider(PROVIDERS.command, { env: { PATH: bin } });
    expect(command.binaryPath).toBeNull();
    expect(command.problem).toContain('no binary');
  });

  it('reports a help command that fails or hangs, within the timeout', async () => {
    const dir = path.join(tmp, 'broken');
    mkdirSync(dir, { recursive: true });
    writeFileSync(path.join(dir, 'claude'), '#!/bin/sh\necho "boom: broken install" >&2\nexit 3\n');
    writeFileSync(path.join(dir, 'gemini'), '#!/bin/sh\nexec sleep 30\n');
    chmodSync(path.join(dir, 'claude'), 0o755);
    chmodSync(path.join(dir, 'gemini'), 0o755);
    const failing = await probeProvider(PROVIDERS.claude, { env: { PATH: `${dir}:/usr/bin:/bin` } });
    expect(failing.helpOk).toBe(false);
    expect(failing.version).toBeNull();
    expect(failing.problem).toBe('`claude --help` exited 3: boom: broken install');
    const started = Date.now();
    const hanging = await probeProvider(PROVIDERS.gemini, { env: { PATH: `${dir}:/usr/bin:/bin` }, timeoutMs: 500 });
    expect(Date.now() - started).toBeLessThan(10_000);
    expect(hanging.helpOk).toBe(false);
    expect(hanging.problem).toContain('timed out after 0.5 s');
  });
});

describe('probeCached', () => {
  it('probes each binary version once: same path + mtime + size → cached; changed or other binary → probed again', async () => {
    clearProbeCache();
    const bin = binDir('cache', ['claude']);
    const log = path.join(tmp, 'cache.log');
    const env = { PATH: bin, FAKE_CLI_LOG: log };
    const first = await probeCached(PROVIDERS.claude, { env });
    expect(first.helpOk).toBe(true);
    expect(logLines(log)).toHaveLength(2); // --version and --help
    const [second, third] = await Promise.all([probeCached(PROVIDERS.claude, { env }), probeCached(PROVIDERS.claude, { env })]);
    expect(logLines(log)).toHaveLength(2);
    expect(second).toEqual(first);
    expect(third).toEqual(first);

    // Credentials are re-read on every call, never cached.
    const withKey = await probeCached(PROVIDERS.claude, { env: { ...env, CLAUDE_CODE_OAUTH_TOKEN: SECRET } });
    expect(withKey.credentials).toEqual([
      { name: 'ANTHROPIC_API_KEY', set: false },
      { name: 'CLAUDE_CODE_OAUTH_TOKEN', set: true },
    ]);
    expect(logLines(log)).toHaveLength(2);

    // An upgrade (new mtime) is probed again.
    const later = new Date(Date.now() + 60_000);
    utimesSync(path.join(bin, 'claude'), later, later);
    await probeCached(PROVIDERS.claude, { env });
    expect(logLines(log)).toHaveLength(4);
    // So is a change of size.
    appendFileSync(path.join(bin, 'claude'), '# grown\n');
    utimesSync(path.join(bin, 'claude'), later, later);
    await probeCached(PROVIDERS.claude, { env });
    expect(logLines(log)).toHaveLength(6);

    // Another binary (a copy elsewhere) has its own entry.
    const copyDir = path.join(tmp, 'cache-copy');
    mkdirSync(copyDir, { recursive: true });
    copyFileSync(path.join(bin, 'claude'), path.join(copyDir, 'claude'));
    chmodSync(path.join(copyDir, 'claude'), 0o755);
    await probeCached(PROVIDERS.claude, { env: { ...env, PATH: copyDir } });
    await probeCached(PROVIDERS.claude, { env: { ...env, PATH: copyDir } });
    expect(logLines(log)).toHaveLength(8);
    expect(
      logLines(log)
        .slice(-2)
        .every((l) => l.includes(copyDir)),
    ).toBe(true);
  });
});

describe('presetFlags', () => {
  it('lists the always-passed flags and every optional flag a preset may pass', () => {
    const claude = presetFlags(PROVIDERS.claude);
    for (const f of [
      '-p',
      '--output-format',
      '--verbose',
      '--model',
      '--dangerously-skip-permissions',
      '--allowedTools',
      '--disallowedTools',
      '--effort',
      '--resume',
      '--session-id',
    ]) {
      expect(claude).toContain(f);
    }
    // --permission-mode is the fallback when neither tool list is advertised.
    expect(claude).not.toContain('--permission-mode');
    expect(presetFlags(PROVIDERS.claude, new Set(['--permission-mode']))).toContain('--permission-mode');
    expect(presetFlags(PROVIDERS.codex)).toEqual(['--json', '--model', '--sandbox', '--skip-git-repo-check', '-c', 'resume'].sort());
    expect(presetFlags(PROVIDERS.gemini, new Set())).toContain('--yolo');
    expect(presetFlags(PROVIDERS.command)).toEqual([]);
  });

  it('every flag a preset may pass is in its fake CLI help', async () => {
    const bin = binDir('flags', AGENTS);
    for (const name of AGENTS) {
      const preset = PROVIDERS[name];
      const { execa } = await import('execa');
      const help = await execa(path.join(bin, name), preset.helpArgs, { env: { PATH: bin }, extendEnv: false });
      const wanted = [...new Set([...presetFlags(preset), ...preset.optionalFlags])];
      const found = advertisedFlags(help.stdout, wanted);
      expect(
        wanted.filter((f) => !found.has(f)),
        name,
      ).toEqual([]);
    }
  });
});

describe('doctorCommand', () => {
  it('a present CLI with every flag: ✓ lines with its version, exit 0', async () => {
    const bin = binDir('doc-all', AGENTS);
    const { code, lines, text } = await doctor({ provider: 'claude', env: { PATH: bin, ANTHROPIC_API_KEY: SECRET } });
    expect(code).toBe(0);
    expect(lines).toContain(`  ✓ claude: ${path.join(bin, 'claude')}, 2.0.99 (Claude Code, fake)`);
    expect(text).toContain(`  ✓ claude flags: all 11 optional flags: ${PROVIDERS.claude.optionalFlags.join(' ')}`);
    expect(lines).toContain(
      "  ✓ claude batch: batched rounds: --agents and --json-schema: a council round's members and a review's reviewers go out " +
        'as one call each (knob batchRounds=off: one call each)',
    );
    expect(lines).toContain('  ✓ claude credentials: ANTHROPIC_API_KEY set, CLAUDE_CODE_OAUTH_TOKEN not set');
    expect(lines).toContain('  ✓ temporal: reachable at 127.0.0.1:7233, namespace default');
    expect(lines).toContain('  ✓ worker: 1 worker polling task queue "vigil"');
    expect(text).not.toContain('✗');
    expect(text).not.toContain(SECRET);
    // Only the chosen provider is checked.
    expect(text).not.toContain('codex');
  });

  it('a flag left out of the help is listed as missing, without failing the exit code', async () => {
    const bin = binDir('doc-omit', ['claude']);
    const { code, lines } = await doctor({
      provider: 'claude',
      env: { PATH: bin, ANTHROPIC_API_KEY: SECRET, FAKE_CLI_HELP_OMIT: '--effort' },
    });
    expect(code).toBe(0);
    const flags = lines.find((l) => l.includes('claude flags'));
    expect(flags).toMatch(
      new RegExp(
        [
          /^ {2}✗ claude flags: lacks --effort \(advertises --max-budget-usd .*\); Vigil runs without them — fix:/.source,
          / optional: upgrade for them: npm install -g @anthropic-ai\/claude-code$/.source,
        ].join(''),
      ),
    );
  });

  it('a claude without --agents: no batched rounds, said without failing the exit code', async () => {
    const bin = binDir('doc-no-agents', ['claude']);
    const { code, lines } = await doctor({
      provider: 'claude',
      env: { PATH: bin, ANTHROPIC_API_KEY: SECRET, FAKE_CLI_HELP_OMIT: '--agents' },
    });
    expect(code).toBe(0);
    expect(lines).toContain(
      '  ✗ claude batch: no batched rounds (needs --agents and --json-schema): one call per council member and reviewer — fix: ' +
        'optional: upgrade for them: npm install -g @anthropic-ai/claude-code',
    );
  });

  it('batched rounds turned off by the knob: said, where claude could batch them', async () => {
    const bin = binDir('doc-batch-off', ['claude']);
    const { code, lines } = await doctor({ provider: 'claude', env: { PATH: bin, ANTHROPIC_API_KEY: SECRET, VIGIL_BATCH_ROUNDS: 'off' } });
    expect(code).toBe(0);
    expect(lines).toContain(
      '  ✓ claude batch: batched rounds turned off (VIGIL_BATCH_ROUNDS=off): one call per council member and reviewer, though this claude could batch them',
    );
  });

  it('a provider not on PATH: ✗ with the install hint, exit 1', async () => {
    const bin = binDir('doc-some', ['claude', 'codex', 'gemini']);
    const { code, lines } = await doctor({ provider: 'aider', env: { PATH: bin, ANTHROPIC_API_KEY: SECRET } });
    expect(code).toBe(1);
    expect(lines).toContain(
      '  ✗ aider: not installed (`aider` is not on PATH) — fix: install it: python -m pip install aider-install && aider-install',
    );

    // Without --provider every agent CLI is listed; one ready CLI is enough.
    const all = await doctor({ env: { PATH: bin, ANTHROPIC_API_KEY: SECRET } });
    expect(all.code).toBe(0);
    expect(all.lines).toContain('  ✗ opencode: not installed (`opencode` is not on PATH) — fix: install it: npm install -g opencode-ai');
    expect(all.text).toContain('  ✓ gemini: ');
    expect(all.text).toContain(
      '  ✗ gemini credentials: none set (GEMINI_API_KEY not set, GOOGLE_GENAI_USE_VERTEXAI not set, GOOGLE_GENAI_USE_GCA not ' +
        'set) — fix: set GEMINI_API_KEY, GOOGLE_GENAI_USE_VERTEXAI or GOOGLE_GENAI_USE_GCA in the environment the worker runs in',
    );
    expect(all.lines).toContain('  ✓ agents: ready: claude');

    const none = await doctor({ env: { PATH: binDir('doc-empty', []) } });
    expect(none.code).toBe(1);
    expect(none.text).toContain('✗ agents: no agent CLI is ready (installed, a credential variable set, nothing blocking it)');
  });

  it('credentials: set or not set by name, the value never printed; none set fails the chosen provider', async () => {
    const bin = binDir('doc-cred', ['codex']);
    const unset = await doctor({ provider: 'codex', env: { PATH: bin } });
    expect(unset.code).toBe(1);
    expect(unset.lines).toContain(
      '  ✗ codex credentials: none set (OPENAI_API_KEY not set, CODEX_API_KEY not set) — fix: set OPENAI_API_KEY or ' +
        'CODEX_API_KEY in the environment the worker runs in',
    );
    const set = await doctor({ provider: 'codex', env: { PATH: bin, CODEX_API_KEY: SECRET } });
    expect(set.code).toBe(0);
    expect(set.lines).toContain('  ✓ codex credentials: OPENAI_API_KEY not set, CODEX_API_KEY set');
    expect(set.text).not.toContain(SECRET);
    const json = await doctor({ provider: 'codex', json: true, env: { PATH: bin, CODEX_API_KEY: SECRET, OPENAI_API_KEY: `${SECRET}-2` } });
    expect(json.text).not.toContain(SECRET);
  });

  it('--json prints the structured report', async () => {
    const bin = binDir('doc-json', ['claude']);
    const { code, text } = await doctor({
      provider: 'claude',
      json: true,
      env: { PATH: bin, ANTHROPIC_API_KEY: SECRET, FAKE_CLI_HELP_OMIT: '--resume', VIGIL_SANDBOX: 'off' },
    });
    expect(code).toBe(0);
    const report = JSON.parse(text) as DoctorReport;
    expect(Object.keys(report).sort()).toEqual(['checks', 'deep', 'notChecked', 'ok', 'provider', 'providers', 'sandbox', 'temporal']);
    // Offline (no --deep): nothing was sent, and the report says what that left unchecked.
    expect(report.deep).toBe(false);
    expect(report.notChecked).toEqual([expect.stringContaining('no request was sent')]);
    expect(report.checks.find((c) => c.name === 'claude.endpoint')?.detail).toMatch(
      /^not checked \(offline\): calls go to https:\/\/api\.anthropic\.com \(the default\) with ANTHROPIC_API_KEY/,
    );
    expect(report.sandbox).toEqual({ mode: 'off', applies: false, detail: expect.stringContaining('sandbox=off') });
    expect(report.ok).toBe(true);
    expect(report.provider).toBe('claude');
    expect(report.temporal).toEqual({ ok: true, address: '127.0.0.1:7233', namespace: 'default', pollers: 1, taskQueue: 'vigil' });
    expect(report.providers).toHaveLength(1);
    expect(report.providers[0]).toEqual({
      provider: 'claude',
      binaryPath: path.join(bin, 'claude'),
      version: '2.0.99 (Claude Code, fake)',
      helpOk: true,
      advertised: PROVIDERS.claude.optionalFlags.filter((f) => f !== '--resume'),
      missing: ['--resume'],
      credentials: [
        { name: 'ANTHROPIC_API_KEY', set: true },
        { name: 'CLAUDE_CODE_OAUTH_TOKEN', set: false },
      ],
      problem: null,
      installHint: 'npm install -g @anthropic-ai/claude-code',
      ready: true,
    });
    expect(report.checks.map((c) => [c.name, c.ok, c.required])).toEqual([
      ['claude', true, true],
      ['claude.flags', false, false],
      ['claude.batch', true, false],
      ['claude.credentials', true, true],
      ['claude.endpoint', true, false],
      ['sandbox', true, false],
      ['sandbox.limits', true, false],
      ['temporal', true, true],
      ['worker', true, true],
    ]);
    for (const c of report.checks) expect(c.fix === null).toBe(c.ok);
  });

  it('exit codes: no worker or no server → 1 with the fix; unknown provider → 2; command needs only Temporal', async () => {
    const bin = binDir('doc-exit', ['claude']);
    const env = { PATH: bin, ANTHROPIC_API_KEY: SECRET };

    const noWorker = await doctor({ provider: 'claude', env, connect: okTemporal(0) });
    expect(noWorker.code).toBe(1);
    expect(noWorker.lines).toContain(
      '  ✗ worker: no worker is polling task queue "vigil" — fix: start one with `vigil worker` (or `vigil up`)',
    );

    const down = await doctor({
      provider: 'claude',
      env,
      connect: () => Promise.resolve({ ok: false, problem: 'cannot reach Temporal at 127.0.0.1:1 (refused).' }),
    });
    expect(down.code).toBe(1);
    expect(down.text).toContain('  ✗ temporal: cannot reach Temporal at 127.0.0.1:1 (refused). — fix: start a server with `vigil server`');
    expect(down.text).toContain(
      '  ✗ worker: cannot tell: Temporal is not reachable — fix: once the server is up, start a worker with `vigil worker`',
    );

    const thrown = await doctor({ provider: 'claude', env, connect: () => Promise.reject(new Error('kaput\nmore')) });
    expect(thrown.code).toBe(1);
    expect(thrown.text).toContain('✗ temporal: kaput — fix:');

    const unknown = await doctor({ provider: 'nope', env });
    expect(unknown.code).toBe(2);
    expect(unknown.lines).toEqual([]);

    // The command provider: its agent command is what must be there (found on PATH, executable).
    const cmdBin = binDir('doc-cmd', []);
    writeFileSync(path.join(cmdBin, 'my-agent'), '#!/bin/sh\nexit 0\n');
    chmodSync(path.join(cmdBin, 'my-agent'), 0o755);
    const command = await doctor({ provider: 'command', env: { PATH: cmdBin }, agentCommand: ['my-agent', '--fast'] });
    expect(command.code).toBe(0);
    expect(command.text).toContain(`✓ command: agent command \`my-agent --fast\`: ${path.join(cmdBin, 'my-agent')} is executable`);
    expect(command.text).toContain('vigil doctor --agent-command');
    expect(command.text).not.toContain('claude');
  });

  it('open runs a release before the window started: a ✗ runs line with the fix that does not block; none: a ✓', async () => {
    const cmdBin = binDir('doc-runs', []);
    writeFileSync(path.join(cmdBin, 'my-agent'), '#!/bin/sh\nexit 0\n');
    chmodSync(path.join(cmdBin, 'my-agent'), 0o755);
    const withRuns = (runs: { workflowId: string; release: string | null }[]) => (): Promise<TemporalStatus> =>
      Promise.resolve({
        ok: true,
        address: '127.0.0.1:7233',
        namespace: 'default',
        pollers: 1,
        taskQueue: 'vigil',
        runs: windowReport(runs),
      });
    const stale = await doctor({
      provider: 'command',
      env: { PATH: cmdBin },
      agentCommand: ['my-agent'],
      connect: withRuns([
        { workflowId: 'nightly-old', release: '0.3.0' },
        { workflowId: 'today', release: OLDEST_REPLAYED_RELEASE },
      ]),
    });
    expect(stale.code).toBe(0);
    const line = stale.lines.find((l) => l.startsWith('  ✗ runs: '));
    expect(line).toContain('1 of 2 open runs started before the window');
    expect(line).toContain('nightly-old (0.3.0)');
    expect(line).not.toContain('today');
    expect(line).toContain('— fix: let them finish (or stop them) on workers of the release that started them');
    expect(stale.text).toContain('ready');

    const fine = await doctor({
      provider: 'command',
      env: { PATH: cmdBin },
      agentCommand: ['my-agent'],
      connect: withRuns([{ workflowId: 'today', release: OLDEST_REPLAYED_RELEASE }]),
    });
    expect(fine.lines.find((l) => l.includes(' runs: '))).toMatch(/^ {2}✓ runs: 1 open run, none started before the window/);
  });

  it('the command provider: no agent command, one not on PATH, a path that is not executable → 1 with the fix', async () => {
    const bin = binDir('doc-cmd-bad', []);
    const none = await doctor({ provider: 'command', env: { PATH: bin }, agentCommand: [] });
    expect(none.code).toBe(1);
    expect(none.text).toContain('✗ command: no agent command is set for the command provider — fix: set it with --set agentCommand=');
    const missing = await doctor({ provider: 'command', env: { PATH: bin }, agentCommand: ['no-such-agent'] });
    expect(missing.code).toBe(1);
    expect(missing.text).toContain(
      '✗ command: agent command `no-such-agent`: no executable "no-such-agent" on PATH — fix: install it or fix the path',
    );
    const plain = path.join(bin, 'agent.js');
    writeFileSync(plain, 'console.log(1)\n');
    const notExec = await doctor({ provider: 'command', env: { PATH: bin }, agentCommand: [plain] });
    expect(notExec.code).toBe(1);
    expect(notExec.text).toContain(
      `${plain} is not an executable file (chmod +x it, or start the command with its interpreter: node ${plain})`,
    );
  });

  it('as root without the sandbox, claude builders need IS_SANDBOX=1 (claude refuses --dangerously-skip-permissions)', async () => {
    const bin = binDir('doc-root', ['claude']);
    // Off: claude would run as root itself (in the sandbox it runs as an unprivileged user, below).
    const off = { VIGIL_SANDBOX: 'off' };
    const root = await doctor({ provider: 'claude', uid: 0, env: { PATH: bin, ANTHROPIC_API_KEY: SECRET, ...off } });
    expect(root.code).toBe(1);
    expect(root.lines).toContain(
      '  ✗ claude root: running as root: claude refuses --dangerously-skip-permissions, so every building call would fail — ' +
        'fix: run the worker as a non-root user, or set IS_SANDBOX=1 if this machine is a disposable sandbox',
    );
    const sandbox = await doctor({ provider: 'claude', uid: 0, env: { PATH: bin, ANTHROPIC_API_KEY: SECRET, IS_SANDBOX: '1', ...off } });
    expect(sandbox.code).toBe(0);
    expect(sandbox.text).toContain('✓ claude root: running as root with IS_SANDBOX=1');
    // Without --provider, claude is then not counted as ready.
    const all = await doctor({ uid: 0, env: { PATH: bin, ANTHROPIC_API_KEY: SECRET, ...off } });
    expect(all.code).toBe(1);
    expect(all.text).toContain('✗ agents: no agent CLI is ready (installed, a credential variable set, nothing blocking it)');
  });

  it('says which sandbox a worker here would apply, and why not where it cannot', async () => {
    const bin = binDir('doc-sandbox', ['claude']);
    const base = { PATH: bin, ANTHROPIC_API_KEY: SECRET };
    const off = await doctor({ provider: 'claude', env: { ...base, VIGIL_SANDBOX: 'off' } });
    expect(off.lines).toContain('Sandbox');
    expect(off.text).toContain('✓ sandbox: sandbox=off: the agent runs as the worker');
    // A machine without bubblewrap: auto warns (not blocking), strict blocks, both say what to do.
    const none = { ...base, VIGIL_SANDBOX: 'auto', VIGIL_SANDBOX_BWRAP: '/nonexistent/bwrap' };
    const auto = await doctor({ provider: 'claude', env: none });
    expect(auto.code).toBe(0);
    expect(auto.text).toContain(
      '✗ sandbox: sandbox=auto and the sandbox cannot run on this worker: VIGIL_SANDBOX_BWRAP=/nonexistent/bwrap is not an ' +
        'executable file — fix: install bubblewrap',
    );
    const strict = await doctor({ provider: 'claude', env: { ...none, VIGIL_SANDBOX: 'strict' } });
    expect(strict.code).toBe(1);
    expect(strict.text).toContain('✗ sandbox: sandbox=strict and the sandbox cannot run on this worker');
    // Where bubblewrap works (CI installs it), the sandbox applies, and claude as root is no blocker.
    if (sandboxPlatform().problem === null) {
      const on = await doctor({ provider: 'claude', uid: 0, env: { ...base, VIGIL_SANDBOX: 'auto' } });
      expect(on.code).toBe(0);
      expect(on.text).toMatch(/✓ sandbox: sandbox=auto: agents and test runs run in bubblewrap/);
      expect(on.text).toContain('✓ claude root: the worker runs as root, but agents run as an unprivileged user in the sandbox');
      // Whether the limits are held by cgroups here, or by the fallback (forced), which says what it does not hold.
      if (cgroupProbe().base)
        expect(on.text).toMatch(/✓ sandbox limits: cgroup v[12]: each sandboxed call in a group of its own under \/sys\/fs\/cgroup/);
      const fallback = await doctor({
        provider: 'claude',
        uid: 0,
        env: { ...base, VIGIL_SANDBOX: 'auto', VIGIL_SANDBOX_LIMITS: 'fallback' },
      });
      expect(fallback.code).toBe(0);
      expect(fallback.text).toContain(
        '✗ sandbox limits: no cgroup can be made here (VIGIL_SANDBOX_LIMITS=fallback: cgroups are not used): the fallback',
      );
      expect(fallback.text).toMatch(
        /no pid limit the kernel holds.* — fix: unset VIGIL_SANDBOX_LIMITS \(fallback turns the cgroups off\)$/m,
      );
    }
    // No sandbox, no limits: said where the sandbox cannot run, not held against a worker with the sandbox off.
    expect(off.text).toContain('✓ sandbox limits: none: the sandbox is off');
    expect(auto.text).toContain('✗ sandbox limits: none: calls run outside the sandbox here');
  });
});

describe('temporalCheck', () => {
  it('connects to the real server and counts the pollers of the task queue', async () => {
    const address = inject('temporalAddress');
    const taskQueue = `doctor-${process.pid}-${Date.now().toString(36)}`;
    expect(await temporalCheck({ address, namespace: 'default', taskQueue, uiUrl: '' })).toEqual({
      ok: true,
      address,
      namespace: 'default',
      taskQueue,
      pollers: 0,
      // The open runs of the namespace (other files' runs among them): listed against the release window.
      runs: expect.objectContaining({ open: expect.any(Number), outside: expect.any(Array) }) as unknown,
    });

    Runtime.install({ logger: new DefaultLogger('WARN') });
    const connection = await NativeConnection.connect({ address });
    try {
      const worker = await Worker.create({ connection, namespace: 'default', taskQueue, activities: { noop: () => Promise.resolve() } });
      const seen = await worker.runUntil(async () => {
        for (let i = 0; i < 50; i++) {
          const r = await temporalCheck({ address, namespace: 'default', taskQueue, uiUrl: '' });
          if (r.ok && r.pollers > 0) return r;
          await new Promise((res) => setTimeout(res, 200));
        }
        return temporalCheck({ address, namespace: 'default', taskQueue, uiUrl: '' });
      });
      expect(seen).toMatchObject({ ok: true, pollers: 1 });
    } finally {
      await connection.close();
    }
  });

  it('an unreachable server or unknown namespace is ok: false with the problem, never a throw', async () => {
    const down = await temporalCheck({ address: '127.0.0.1:1', namespace: 'default', taskQueue: 'vigil', uiUrl: '' });
    expect(down.ok).toBe(false);
    if (!down.ok) expect(down.problem).toMatch(/^cannot reach Temporal at 127\.0\.0\.1:1/);
    const ns = await temporalCheck({
      address: inject('temporalAddress'),
      namespace: 'no-such-namespace-doctor',
      taskQueue: 'vigil',
      uiUrl: '',
    });
    expect(ns.ok).toBe(false);
    if (!ns.ok) expect(ns.problem).toContain('no-such-namespace-doctor');
  });
});
