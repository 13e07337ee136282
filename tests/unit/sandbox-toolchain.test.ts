/**
 * The user's toolchain inside the sandbox, on this machine as users have it: `python3` is a pyenv
 * shim (~/.pyenv/shims on PATH, its interpreters under ~/.pyenv/versions), Go and Rust come from
 * user-level installs. A test run in the default sandbox finds them (it exited 127 before), while
 * the credentials beside them stay hidden: a key planted in ~/.ssh is unreadable inside.
 */
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync, existsSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { MockActivityEnvironment } from '@temporalio/testing';
import { DefaultLogger } from '@temporalio/worker';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sandboxPlatform } from '../../lib/sandbox-host.js';
import { credentialPaths, toolchainPaths } from '../../lib/sandbox-toolchain.js';
import { runTests } from '../../activities/tests.js';
import type { TestResult } from '../../schemas/activities.js';
import { git } from '../support/harness.js';

const saved = { ...process.env };
let root: string;

describe('what the toolchain on PATH needs', () => {
  beforeAll(() => {
    root = mkdtempSync(path.join(os.tmpdir(), 'vigil-toolchain-'));
  });
  afterAll(() => rmSync(root, { recursive: true, force: true }));

  it('shows a shim folder’s install, a bin folder’s prefix, and never HOME, ~/.local or a Go workspace whole', () => {
    const home = path.join(root, 'home');
    const dirs = [
      '.pyenv/shims',
      '.pyenv/versions/3.11.7/bin',
      '.nvm/versions/node/v20.1.0/bin',
      '.local/bin',
      '.local/lib/python3.11',
      '.local/share/keyrings',
      'go/bin',
      'go/pkg/mod',
      'go/src/other-repo',
      '.cargo/bin',
      '.rustup/toolchains',
      'bin',
    ];
    for (const d of dirs) mkdirSync(path.join(home, d), { recursive: true });
    const PATH = ['.pyenv/shims', '.nvm/versions/node/v20.1.0/bin', '.local/bin', 'go/bin', '.cargo/bin', 'bin']
      .map((d) => path.join(home, d))
      .concat('/usr/bin')
      .join(':');
    const shown = toolchainPaths({ PATH }, home).map((t) => path.relative(home, t.path));
    expect(shown.sort()).toEqual(
      ['.pyenv', '.nvm/versions/node/v20.1.0', '.local/bin', '.local/lib', 'go/bin', 'go/pkg/mod', '.cargo', '.rustup'].sort(),
    );
    writeFileSync(path.join(home, '.cargo', 'credentials.toml'), 'token = "x"\n');
    mkdirSync(path.join(home, '.ssh'));
    expect(credentialPaths({}, home).map((p) => path.relative(home, p))).toEqual([
      '.ssh',
      '.cargo/credentials.toml',
      '.local/share/keyrings',
    ]);
  });
});

describe.runIf(sandboxPlatform().problem === null)("the machine's own toolchain in the default sandbox", () => {
  let repo: string;
  const planted = path.join(os.homedir(), '.ssh', `vigil-test-key-${process.pid}`);
  const madeSsh = !existsSync(path.join(os.homedir(), '.ssh'));
  beforeAll(() => {
    root = mkdtempSync(path.join(os.tmpdir(), 'vigil-toolchain-run-'));
    process.env.VIGIL_HOME = path.join(root, 'vigil-home');
    process.env.VIGIL_SANDBOX = 'auto';
    mkdirSync(path.dirname(planted), { recursive: true, mode: 0o700 });
    writeFileSync(planted, 'PRIVATE KEY\n', { mode: 0o600 });
    repo = path.join(root, 'repo');
    mkdirSync(repo);
    writeFileSync(path.join(repo, 'calc.py'), 'def add(a, b):\n    return a + b\n');
    writeFileSync(
      path.join(repo, 'test_calc.py'),
      [
        'import unittest, os',
        'from calc import add',
        'class T(unittest.TestCase):',
        '    def test_add(self):',
        '        self.assertEqual(add(1, 2), 3)',
        '    def test_key_hidden(self):',
        `        self.assertFalse(os.path.exists(${JSON.stringify(planted)}))`,
        '',
      ].join('\n'),
    );
    git(repo, 'init', '-q');
    git(repo, 'add', '-A');
    git(repo, 'commit', '-qm', 'start');
  });
  afterAll(() => {
    rmSync(planted, { force: true });
    if (madeSsh) rmSync(path.dirname(planted), { recursive: true, force: true });
    for (const k of Object.keys(process.env)) if (!(k in saved)) delete process.env[k];
    Object.assign(process.env, saved);
    rmSync(root, { recursive: true, force: true });
  });

  const run = (command: string): Promise<TestResult> =>
    new MockActivityEnvironment({ attempt: 1 }, { logger: new DefaultLogger('ERROR') }).run(runTests, {
      runId: 'toolchain-run',
      repoPath: repo,
      command,
      iteration: 1,
      timeoutSeconds: 120,
    }) as Promise<TestResult>;

  for (const command of ['python3 -m unittest discover -v', 'python3 -m pytest -q']) {
    it(`${command}: runs with the PATH's python3 (a pyenv shim here), and cannot read ~/.ssh`, async () => {
      const r = await run(command);
      const log = readFileSync(r.logPath, 'utf8');
      expect(r.sandbox?.applied, log).toBe(true);
      expect(r.exitCode, log).toBe(0);
      expect(r.verdict, `${r.reason}\n${log}`).toBe('pass');
      expect(r.passedCount).toBe(2);
    });
  }
});
